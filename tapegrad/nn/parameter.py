"""`Parameter`: a Tensor that a Module registers as learnable (requires_grad=True).

A Parameter is an ordinary leaf Tensor in every op and in the engine (ops check
`isinstance(t, Tensor)`); it only differs in how `Module.__setattr__` treats it.
Results of ops on a Parameter are plain Tensors, as in PyTorch.
"""
import numpy as np

from ..core.tensor_base import TensorBase
from .._tensor import Tensor


class Parameter(Tensor, keep_type=False):
    """A learnable tensor: `Parameter(data=None, requires_grad=True)`.

    `data` may be a Tensor (its array is shared, not copied, as PyTorch does), an
    ndarray or nested lists. `Parameter()` is an empty float tensor.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            from ..dtypes import get_default_dtype
            data = np.empty((0,), dtype=get_default_dtype())
        if isinstance(data, Tensor):
            data = data._data
        if isinstance(data, np.ndarray):  # keeps its dtype (Tensor(ndarray) would not)
            TensorBase.__init__(self, data, requires_grad=requires_grad)
        else:
            super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self._data, self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self._data.copy(), self._rg)
        memo[id(self)] = p
        return p


class Buffer(Tensor, keep_type=False):
    """Marker type: `module.x = Buffer(t)` registers `x` as a buffer (PyTorch >= 2.5)."""

    __slots__ = ("persistent",)

    def __init__(self, data, persistent=True):
        if isinstance(data, Tensor):
            data = data._data
        if isinstance(data, np.ndarray):  # keeps its dtype (Tensor(ndarray) would not)
            TensorBase.__init__(self, data)
        else:
            super().__init__(data)
        self.persistent = persistent


_UNINIT_USE = ("Attempted to use an uninitialized parameter in {}. This error happens when you "
               "are using a `LazyModule` or explicitly manipulating "
               "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules "
               "Call `forward` with a dummy batch to initialize the parameters before calling "
               "torch functions")
_UNINIT_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                 "usually happens in `load_state_dict` when trying to load an uninitialized "
                 "parameter into an initialized one. Call `forward` to initialize the "
                 "parameters before accessing their attributes.")
_slot_data = TensorBase._data  # the slot itself: the subclasses below shadow `_data`


class UninitializedTensorMixin:
    """A tensor with no shape yet (a lazy module's parameter or buffer before its first
    forward). Every op reads `_data`, which here raises torch's ValueError; `materialize`
    gives it storage and turns it into its `cls_to_become` (Parameter or Tensor) in place,
    so whoever holds it (an optimizer, a state dict) holds the real tensor afterwards."""

    __slots__ = ()
    cls_to_become = None

    @property
    def _data(self):
        raise ValueError(_UNINIT_USE.format(type(self).__name__))

    @_data.setter
    def _data(self, value):  # the placeholder's array: only its dtype is used
        _slot_data.__set__(self, value)

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor storage of `shape` (uninitialized values, as torch.empty) and
        turn it into its `cls_to_become`."""
        dt = _slot_data.__get__(self).dtype if dtype is None else _as_np_dtype(dtype)
        if isinstance(shape, int):
            shape = (shape,)
        _slot_data.__set__(self, np.empty(tuple(int(s) for s in shape), dtype=dt))
        self.__class__ = self.cls_to_become

    def _lazy_to(self, dtype):
        """Module.to(dtype) before materialization: the dtype it will have."""
        _slot_data.__set__(self, np.empty((0,), dtype=dtype))

    @property
    def shape(self):
        raise RuntimeError(_UNINIT_SHAPE)

    def size(self, dim=None):
        raise RuntimeError(_UNINIT_SHAPE)

    @property
    def dtype(self):
        from ..dtypes import of
        return of(_slot_data.__get__(self).dtype)

    def detach(self):  # a lazy module's state_dict holds the placeholder itself (torch)
        return self

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self._rg, None, _slot_data.__get__(self).dtype))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        t = type(self)(self._rg, None, _slot_data.__get__(self).dtype)
        memo[id(self)] = t
        return t


def _as_np_dtype(dtype):
    from ..dtypes import as_dtype, get_default_dtype
    return as_dtype(dtype) or get_default_dtype()


def is_lazy(param):
    """Whether `param` is a placeholder still waiting for its shape (torch's name)."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter without a shape: `UninitializedParameter(requires_grad=True,
    device=None, dtype=None)`; `materialize(shape)` makes it a Parameter."""

    __slots__ = ()
    cls_to_become = Parameter
    _result_type = Tensor  # (never reached: every op raises first)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        TensorBase.__init__(self, np.empty((0,), dtype=_as_np_dtype(dtype)))
        self._rg = bool(requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer without a shape: `materialize(shape)` makes it a plain Tensor."""

    __slots__ = ()
    cls_to_become = Tensor
    _result_type = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        TensorBase.__init__(self, np.empty((0,), dtype=_as_np_dtype(dtype)))
        self._rg = bool(requires_grad)

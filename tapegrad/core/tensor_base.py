"""TensorBase: an n-dimensional NumPy array plus the slots autograd needs.

    _data        the ndarray holding the values (`.data` is PyTorch's: a tensor, see below)
    _rg          requires_grad
    grad         the accumulated gradient (a tensor) or None
    grad_fn      the Node that made this tensor (None for a leaf)
    _out         0 when grad_fn has one output; k + 1 for output k of a node with several
                 (so the walk tells the two cases apart with one truth test)
    _version_counter  [int]: bumped by every in-place change; views share the list with
                 their base, so a change through either is seen by nodes that saved the other
                 (`t._version` reads it: an int, as torch's)
    _hooks, _post_hooks   gradient hooks of a leaf (dicts, or None)
    _fw          forward-mode tangent (autograd/forward_ad.py), or None
    _vbase       a weak reference to the tensor whose memory a view looks into (torch's
                 `_base`, set by core/rebase.py `share_view_version`), else None
    name         an optional label for pictures and traces

The user-facing class is `tapegrad.Tensor` (tensor.py), a subclass that declares the
methods; the core never needs to know it. An op's result has the class of its tensor
inputs (`type(x)._result_type`, PyTorch's rule that subclasses survive ops); a class
defined with `keep_type=False` (nn.Parameter) gives plain results instead.
"""
import builtins

import math

import numpy as np

from .. import dtypes as _dt
from . import tape as _tape

_new = object.__new__


class TensorBase:
    __slots__ = ("_data", "_rg", "grad", "grad_fn", "_out", "_version_counter", "_hooks",
                 "_post_hooks", "_fw", "name", "_vbase", "__weakref__")
    __hash__ = object.__hash__
    _user_type = None  # the user-facing class, for the factories below it (new_tensor)

    def __init_subclass__(cls, keep_type=True, **kw):
        super().__init_subclass__(**kw)
        cls._result_type = cls if keep_type else cls.__mro__[1]._result_type
        if TensorBase._user_type is None:
            TensorBase._user_type = cls  # tapegrad.Tensor (_tensor.py): the first subclass

    def __init__(self, data, requires_grad=False, dtype=None):
        self._data = to_array(data, dtype)
        _grad_init(self, None)
        self.grad_fn = None
        self._out = 0
        self._version_counter = [0]
        self._hooks = None
        self._post_hooks = None
        self._fw = None
        self.name = None
        self._vbase = None
        self._rg = False
        if requires_grad:
            self.requires_grad = True

    @property
    def _version(self):
        """The version counter's value (torch's `Tensor._version`, an int): how many
        in-place changes this tensor's memory has had, through it or a view sharing it."""
        return self._version_counter[0]

    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = bool(flag)
        if self.grad_fn is not None and not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if flag and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (this tensor "
                f"is {_dt.name(self._data.dtype)}); indices and masks never need a gradient")
        self._rg = flag
        _tape.changed()  # tg.compile's guards: a structural change

    @property
    def data(self):
        """PyTorch's `.data`: a new tensor on the same storage, without history.

        Changes through it are not seen by autograd (its version counter is its own), which
        is why `p.data -= lr * p.grad` updates a parameter without recording an op. NumPy's
        view of the values is `.numpy()` / `.detach().numpy()`."""
        return make(self._result_type, self._data)

    @data.setter
    def data(self, value):
        # torch: `x.data = y` swaps x's storage for y's (any shape and dtype), keeping x's
        # identity, history flags and version counter.
        if not isinstance(value, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if value._data is self._data:
            return  # (`p.data += u` stores p.data back: its own array, no change)
        self._data = value._data
        _tape.changed()  # tg.compile's guards: a structural change

    @property
    def is_leaf(self):
        return self.grad_fn is None


# the `grad` slot itself: a subclass's `grad` property (core/grad_attribute.py) is the
# user's, whose setter tells tg.compile's tape; a new tensor's empty slot is not a set
_grad_init = TensorBase.__dict__["grad"].__set__


def make(cls, data, requires_grad=False, grad_fn=None):
    """Fast constructor for results: `data` is already an ndarray; no checks."""
    t = _new(cls)
    t._data = data
    t._rg = requires_grad
    _grad_init(t, None)
    t.grad_fn = grad_fn
    t._out = 0
    t._version_counter = [0]
    t._hooks = None
    t._post_hooks = None
    t._fw = None
    t.name = None
    t._vbase = None
    return t


def new_tensor(data, requires_grad=False, dtype=None):
    """`Tensor._of(data, ...)` for the modules the Tensor class imports (ops/creation.py,
    ops/random.py, ops/spectral.py): a new user-facing tensor, no import of _tensor.py."""
    return TensorBase._user_type._of(data, requires_grad=requires_grad, dtype=dtype)


def like(t, data, requires_grad=False, grad_fn=None):
    """A new tensor of the class op results on `t` have (see the module docstring)."""
    return make(t._result_type, data, requires_grad, grad_fn)


def to_array(data, dtype=None):
    """Turn user data into an ndarray with PyTorch's dtype inference."""
    dtype = _dt.as_dtype(dtype)
    if isinstance(data, TensorBase):
        arr = data._data
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        if isinstance(data, (str, bytes, dict, set)):
            raise TypeError(f"can't make a tensor from {type(data).__name__}: expected a "
                            "number, a (nested) list of numbers, or an array")
        arr = np.asarray(_unwrap_nested(data))
        if arr.dtype == np.uint64 or (arr.dtype.kind == "O" and builtins.any(
                isinstance(v, int) and not -2**63 <= v < 2**63 for v in arr.ravel())):
            if dtype is None or dtype.kind in "iu":  # Python ints beyond int64, as torch
                raise ValueError("Overflow when unpacking long long")
            arr = arr.astype(np.float64 if dtype.kind == "f" else dtype)
        elif dtype is not None and dtype.kind in "iu" and arr.dtype != dtype and arr.size:
            _check_int_range(arr, dtype)
        if arr.dtype == np.float64 and dtype is None and not _has_numpy_float64(data):
            arr = arr.astype(_dt.get_default_dtype())  # Python floats: the default dtype
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"can't make a tensor of dtype {_dt.name(arr.dtype)}: tapegrad supports "
                        "bool, integer and floating point data")
    if dtype is not None and arr.dtype != dtype:
        arr = arr.astype(dtype)
    elif arr.dtype not in _dt._SUPPORTED:
        arr = arr.astype(np.int64 if arr.dtype.kind in "iu" else _dt.float64)
    return arr


def _check_int_range(arr, dtype):
    """torch refuses Python values outside an integer dtype (unsigned ones take negatives
    down to -max, which wrap), and NaN, where a NumPy cast would wrap silently."""
    info = np.iinfo(dtype)
    lo = info.min if dtype.kind == "i" else -int(info.max)
    if arr.dtype.kind in "iuf" and (arr.min() < lo or arr.max() > info.max
                                    or (arr.dtype.kind == "f" and np.isnan(arr).any())):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


# C's names of the dtypes, as torch's overflow message gives them
_C_TYPES = {"float16": "c10::Half", "float32": "float", "float64": "double",
            "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
            "uint8": "uint8_t"}


def scalar_to(v, dtype):
    """A Python number as a value of `dtype`, as C++'s `Scalar::to<T>()` gives it (fill
    values, range ends): toward zero for integer dtypes, rounded to nearest for floating
    ones, anything for bool. torch refuses what the dtype cannot hold: a complex into a
    real dtype, 1e300 into float32, 256, NaN or -0.5 into uint8 (an unsigned dtype takes
    a negative integer down to -max and wraps it: -9 -> 247 in uint8)."""
    if isinstance(v, TensorBase):
        v = v._data.item()
    elif isinstance(v, np.generic):
        v = v.item()
    d = np.dtype(dtype)
    if d.kind == "b":
        return bool(v)
    bad = isinstance(v, complex)
    if not bad and d.kind in "iu":
        info = np.iinfo(d)
        lo = info.min if d.kind == "i" or isinstance(v, float) else -int(info.max)
        bad = not lo <= v <= info.max      # (NaN fails both)
    elif not bad:
        bad = math.isfinite(v) and abs(v) > np.finfo(d).max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES.get(d.name, d.name)} "
                           "without overflow")
    if d.kind in "iu":
        return d.type(np.array(int(v)).astype(d))
    return d.type(v)


def _has_numpy_float64(data):
    """Does (nested) data hold a NumPy float64 (or a float64 tensor)? torch keeps a NumPy
    scalar's dtype: tensor(np.float64(1.5)) is float64, tensor(1.5) the default dtype."""
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
        elif isinstance(d, (np.float64, np.ndarray)) or (
                isinstance(d, TensorBase) and d._data.dtype == np.float64):
            if getattr(d, "dtype", None) == np.float64:
                return True
    return False


def _unwrap_nested(data):
    """Lists may hold 0-d tensors: take their values (a list of tensors keeps no graph)."""
    if isinstance(data, (list, tuple)):
        if any(isinstance(d, (TensorBase, list, tuple)) for d in data):
            return [_unwrap_nested(d) for d in data]
    if isinstance(data, TensorBase):
        return data._data
    return data

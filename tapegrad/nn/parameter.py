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

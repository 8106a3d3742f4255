"""Conversions and dtype queries: cast, clone, byte/short/char, result_type,
promote_types, can_cast, is_floating_point, the storage queries (element_size, nbytes)."""
import numpy as np

from .. import dtypes as _dt
from ..core import cuts as _cuts
from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from . import _args, promotion as P
from .public import public
from .rules import shape as S


@public(method=False)
def result_type(tensor, other):
    """torch.result_type: the dtype `tensor op other` has (promotion.py, dtypes.py)."""
    return P.result_type(_args._arg(tensor), _args._arg(other))


promote_types = public(_dt.promote_types, name="promote_types", method=False)
can_cast = public(_dt.can_cast, name="can_cast", method=False)


def _view_dtype(x, dtype):
    """torch's bitcast view (llm.c writes bfloat16 weights as `t.view(torch.int16)`): it
    shares x's memory and has no history (torch records no gradient through it). Another
    element size rescales the last dim, with torch's checks on that dim."""
    dt = _dt.as_dtype(dtype)
    a = x._data
    if dt.itemsize != a.dtype.itemsize:
        what = (f"to view {_dt.torch_name(a.dtype)} as {_dt.torch_name(dt)} (different "
                "element sizes)")
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.shape[-1] != 1 and a.strides[-1] != a.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{a.strides[-1] // a.itemsize}")
        if dt.itemsize > a.itemsize and a.shape[-1] % (dt.itemsize // a.itemsize):
            raise RuntimeError(f"self.size(-1) must be divisible by "
                               f"{dt.itemsize // a.itemsize} {what}, but got {a.shape[-1]}")
    y = like(x, a.view(dt))
    y._version_counter = x._version_counter  # the same memory, the same counter (no `_base`)
    return y


def cast(x, dtype):
    if x._data.dtype == dtype:
        return x
    if dtype.kind != "f":  # an integer or bool copy cuts the graph
        if x._rg:
            _cuts.note(x, f"an integer cast (to {_dt.name(dtype)})")
        return like(x, x._data.astype(dtype))
    return apply(S.cast, x, dtype=dtype)


@public
def clone(input):
    return apply(S.clone, _args._tensor(input))


@public(method=False)
def is_floating_point(input):
    """torch.is_floating_point: is the tensor's dtype a floating one."""
    return _args._tensor(input, "is_floating_point")._data.dtype.kind == "f"


# ---- memory and legacy constructors ------------------------------------------------
@public(function=False)
def data_ptr(self):
    """The address of the tensor's first element (views of one block differ by offset)."""
    return self._data.__array_interface__["data"][0]


@public(function=False)
def element_size(self):
    """Bytes per element (torch: 4 for float32)."""
    return self._data.itemsize


def nbytes(self):
    """Bytes the elements take: numel * element_size."""
    return self._data.nbytes


@public(function=False)
def ndimension(self):
    """The number of dims (dim()'s older name)."""
    return self._data.ndim


@public(function=False)
def byte(self, memory_format=None):
    return self.to(_dt.uint8)


@public(function=False)
def short(self, memory_format=None):
    return self.to(_dt.int16)


@public(function=False)
def char(self, memory_format=None):
    return self.to(_dt.int8)


@public(function=False)
def new(self, *args, **kwargs):
    """Tensor.new, the legacy constructor in self's dtype: new(2, 3) uninitialized (here
    zeros), new([1, 2]) from data, new() empty."""
    dtype = kwargs.pop("dtype", None) or self._data.dtype
    kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 1 and isinstance(args[0], TensorBase):
        return like(self, args[0]._data.astype(_dt.as_dtype(dtype) or dtype))
    if len(args) == 1 and isinstance(args[0], (list, tuple)) and not _is_size(args[0]):
        return like(self, np.array(args[0], dtype=_dt.as_dtype(dtype) or dtype))
    shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    if not all(isinstance(s, (int, np.integer)) for s in shape):
        raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of "
                        f"type {type(next(s for s in shape if not isinstance(s, int))).__name__}")
    return like(self, np.zeros(tuple(int(s) for s in shape) if shape else (0,),
                               dtype=_dt.as_dtype(dtype) or dtype))


def _is_size(x):
    return type(x).__name__ == "Size"

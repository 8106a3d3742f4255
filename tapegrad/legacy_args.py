"""What the legacy constructors `tg.Tensor(...)` / `tg.FloatTensor(...)` make of their
arguments (torch's `Tensor.new` rules), as (data, dtype) for TensorBase.__init__:

    Tensor()              empty 1-d tensor of the default dtype
    Tensor(2, 3)          a (2, 3) tensor of the default dtype (zeros: torch leaves it
                          uninitialised, and zeros are one valid such content)
    Tensor([1, 2])        the data, as the default dtype (torch.tensor would give int64)
    Tensor(t)             shares t's data and dtype
    Tensor(ndarray)       the array as the default dtype (shared when it already is of
                          it), as torch; the library's own code keeps an array's dtype
                          with `Tensor._of(ndarray)`
"""
import numpy as np

from . import dtypes as _dt
from .core.tensor_base import TensorBase


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def legacy_data(args, dtype, name="Tensor"):
    """(data, dtype) for `name(*args)`; `dtype` None means the default float dtype."""
    default = dtype if dtype is not None else _dt.get_default_dtype()
    if not args:
        return np.empty((0,), default), None
    if all(_is_int(a) for a in args):
        size = [int(a) for a in args]
        if any(s < 0 for s in size):
            raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension "
                               f"{min(size)}: {size}")
        return np.zeros(tuple(size), default), None
    if len(args) > 1:
        bad = next(i for i, a in enumerate(args) if not _is_int(a))
        raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                        f"{bad + 1}: sizes must be ints, got {type(args[bad]).__name__}")
    (x,) = args
    if isinstance(x, TensorBase):
        if dtype is not None and x._data.dtype != dtype:
            raise TypeError(f"{name}(): expected a tensor of dtype {_dt.name(dtype)}, got "
                            f"{_dt.name(x._data.dtype)} (use .to({_dt.name(dtype)}))")
        return x._data, None
    if isinstance(x, np.ndarray):
        return x, default
    if not isinstance(x, (list, tuple, np.generic)):
        raise TypeError(f"{name}(): data must be a sequence (got {type(x).__name__})")
    return x, default

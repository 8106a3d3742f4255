"""Functions without a gradient that real programs call: searches and set tests
(searchsorted, bucketize, isin, unique_consecutive), torch.is_floating_point, the
logical ops in place, and what a tensor says about its memory (data_ptr, element_size,
nbytes) and the legacy constructors (new, byte, short, char).

PyTorch's names, arguments, dtypes and error messages (tests/test_methods_more.py).
"""
import numpy as np

from .. import dtypes as _dt
from ..core.tensor_base import TensorBase, like
from . import functions as F
from .inplace import _inplace
from .shape_functions import _dim


def _data(x):
    return x._data if isinstance(x, TensorBase) else np.asarray(x)


def _int_result(ref, arr, out_int32):
    return like(ref, arr.astype(np.int32 if out_int32 else np.int64))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value, the index where it would be inserted to keep each row of
    `sorted_sequence` sorted (the first such index; the last with right=True)."""
    if not isinstance(sorted_sequence, TensorBase):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' (position 1) must be "
                        f"Tensor, not {type(sorted_sequence).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    if sorter is not None:
        seq = np.take_along_axis(seq, _data(sorter), -1)
    scalar = not isinstance(input, TensorBase)
    v = np.asarray(input) if scalar else input._data
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = np.searchsorted(seq.reshape(-1), v, side=how)
    else:
        if scalar or seq.shape[:-1] != v.shape[:-1]:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension "
                               f"or the first N-1 dimensions of boundaries tensor and input "
                               f"value tensor must match, but we got boundaries tensor "
                               f"{list(seq.shape)} and input value tensor {list(v.shape)}")
        rows_s = seq.reshape(-1, seq.shape[-1])
        rows_v = v.reshape(-1, v.shape[-1])
        out = np.stack([np.searchsorted(s, r, side=how) for s, r in zip(rows_s, rows_v)])
        out = out.reshape(v.shape)
    return _int_result(sorted_sequence, np.asarray(out), out_int32)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value given sorted 1-D `boundaries`: searchsorted with the
    arguments swapped (right=False: boundaries[i-1] < v <= boundaries[i])."""
    b = boundaries._data if isinstance(boundaries, TensorBase) else None
    if b is None:
        raise TypeError(f"bucketize(): argument 'boundaries' (position 2) must be Tensor, not "
                        f"{type(boundaries).__name__}")
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    out = np.searchsorted(b, _data(input), side="right" if right else "left")
    ref = input if isinstance(input, TensorBase) else boundaries
    return _int_result(ref, np.asarray(out), out_int32)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """elements' membership in test_elements, elementwise (bool, elements' shape)."""
    if not isinstance(elements, TensorBase) and not isinstance(test_elements, TensorBase):
        raise TypeError("isin() received an invalid combination of arguments: at least one "
                        "of elements and test_elements must be a Tensor")
    e, t = _data(elements), _data(test_elements)
    out = np.isin(e, t, assume_unique=assume_unique, invert=invert)
    ref = elements if isinstance(elements, TensorBase) else test_elements
    return like(ref, np.asarray(out))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive values (or slices along dim) kept once; with the
    index of each element's run (inverse) and the runs' lengths (counts)."""
    x = F._tensor(input, "unique_consecutive")
    a = x._data
    if dim is None:
        flat = a.reshape(-1)
        start = np.ones(flat.size, dtype=bool)
        start[1:] = flat[1:] != flat[:-1]
        values = flat[start]
        run = np.cumsum(start) - 1
        inverse = run.reshape(a.shape)
    else:
        d = _dim(dim, a.ndim)
        m = np.moveaxis(a, d, 0).reshape(a.shape[d] if a.ndim else 1, -1)
        start = np.ones(m.shape[0], dtype=bool)
        start[1:] = (m[1:] != m[:-1]).any(axis=1)
        values = np.take(a, np.nonzero(start)[0], axis=d)
        inverse = np.cumsum(start) - 1
    counts = np.diff(np.append(np.nonzero(start)[0], start.size))
    out = like(x, values)
    if not (return_inverse or return_counts):
        return out
    res = (out,)
    if return_inverse:
        res += (like(x, inverse.astype(np.int64)),)
    if return_counts:
        res += (like(x, counts.astype(np.int64)),)
    return res


def is_floating_point(input):
    """torch.is_floating_point: is the tensor's dtype a floating one."""
    return F._tensor(input, "is_floating_point")._data.dtype.kind == "f"


def _logical_inplace(fn, name):
    def method(self, other):
        o = other if isinstance(other, TensorBase) else like(self, np.asarray(other))
        return _inplace(self, lambda x: fn(x, o), (), needs_old=False, casting="unsafe")
    method.__name__ = name
    method.__doc__ = f"In-place {fn.__name__} (1/0 in self's dtype); returns self."
    return method


logical_and_ = _logical_inplace(F.logical_and, "logical_and_")
logical_or_ = _logical_inplace(F.logical_or, "logical_or_")
logical_xor_ = _logical_inplace(F.logical_xor, "logical_xor_")


def logical_not_(self):
    """In-place logical_not (1/0 in self's dtype); returns self."""
    return _inplace(self, F.logical_not, (), needs_old=False, casting="unsafe")


# ---- memory and legacy constructors ------------------------------------------------
def data_ptr(self):
    """The address of the tensor's first element (views of one block differ by offset)."""
    return self._data.__array_interface__["data"][0]


def element_size(self):
    """Bytes per element (torch: 4 for float32)."""
    return self._data.itemsize


def nbytes(self):
    """Bytes the elements take: numel * element_size."""
    return self._data.nbytes


def ndimension(self):
    """The number of dims (dim()'s older name)."""
    return self._data.ndim


def byte(self, memory_format=None):
    return self.to(_dt.uint8)


def short(self, memory_format=None):
    return self.to(_dt.int16)


def char(self, memory_format=None):
    return self.to(_dt.int8)


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

"""Argument helpers shared by the op families: tensor-or-number conversion, the
`input must be Tensor` check, dim wrapping with torch's errors."""
import builtins
import math

import numpy as np

from .. import dtypes as _dt
from ..core.tensor_base import TensorBase, like, new_tensor, to_array


_generic = np.generic


def _arg(x):
    """An op operand: tensors pass; Python numbers stay weak scalars; arrays and lists
    become constant arrays (no gradient), with PyTorch's dtype inference."""
    if isinstance(x, TensorBase):
        return x
    tx = type(x)
    if tx is int or tx is float or tx is bool:
        return x
    if isinstance(x, _generic):
        return x.item()
    if isinstance(x, (int, float)):
        return x
    return to_array(x)


def _tensor_first(name, input, other):
    """A binary op with a tensor-or-number `other` but no number `input` (eq, fmod):
    torch's argument parser's message for `eq(2, t)`."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one "
                        f"of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        f" * (Tensor input, Number other, *, Tensor out = None)")


def _tensor(x, name="this function", arg="input", pos=1):
    """The tensor argument `arg` (position `pos`) of `name`: torch refuses anything else,
    with this message (the one check of the op families)."""
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                    f"{type(x).__name__}")


def _check_broadcast(name, a, b):
    """torch's message for shapes that do not broadcast (the first clash from the right,
    numbered as a dim of the result: `rand(4, 3, 2) * rand(4, 3)` is dimension 2), then
    the op's name and both shapes."""
    sa = np.shape(a._data if isinstance(a, TensorBase) else a)
    sb = np.shape(b._data if isinstance(b, TensorBase) else b)
    n = builtins.max(len(sa), len(sb))  # (max and min are torch's here)
    for i in range(1, builtins.min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            # torch's sentence, then which op and shapes (the line alone rarely says)
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {n - i} ({name}: shapes "
                               f"{tuple(sa)} and {tuple(sb)})") from None


def _scalar(v):
    return v.item() if isinstance(v, _generic) else v


# ---- reductions ------------------------------------------------------------------
def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(int(d) for d in dim) if len(dim) else None
    return int(dim)


# ---- shapes (the core set; more in ops/shape.py) --------------------------------------
def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:  # Python ints as they are (a generator costs a resumption per size)
        if type(s) is not int:
            return tuple(int(s) for s in shape)  # NumPy ints, 0-d tensors
    return shape


def _np(t):
    """A tensor's values as an array (shares memory; no graph; not a user-level data
    read, which `.numpy()` is: tg.compile counts those)."""
    return t._data


_tname = _dt.torch_name  # 'Float' for float32: the names in PyTorch's messages


def _data(x):
    return x._data if isinstance(x, TensorBase) else np.asarray(x)





def _dim(d, nd, extra=0, name=None):
    """Normalize a dim index for a tensor of `nd` dims (+`extra` for unsqueeze/stack), with
    torch's IndexError (prefixed by the op's `name` where torch names it)."""
    n = builtins.max(nd + extra, 1)
    d = int(d)
    if not -n <= d < n:
        raise IndexError(f"{name + ': ' if name else ''}Dimension out of range (expected to be "
                         f"in range of [{-n}, {n - 1}], but got {d})")
    return d % n if nd + extra else 0


def _int64(x, arr):
    """An int64 index tensor (no gradient) of the tensor class x has."""
    return like(x, np.asarray(arr, dtype=np.int64))


# ---- the size and dtype arguments of the factories (creation, random) ---------------------
def _size(size, kw=None, name=None):
    """The shape from `*size` (ints, or one tuple/list), or from the keyword `size=`
    (`torch.empty(size=(n, h))`, as gat's layers write it)."""
    if kw is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kw,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"sizes must be non-negative integers, got {tuple(size)}")
    return tuple(int(s) for s in size)


def _finish(arr, dtype, requires_grad):
    return new_tensor(arr, requires_grad=requires_grad, dtype=dtype)


def _float_dtype(dtype):
    return _dt.as_dtype(dtype) or _dt.get_default_dtype()


# ---- out= tensors that overlap (torch's assert_no_internal_overlap / assert_no_overlap) ----
_byte_bounds = np.lib.array_utils.byte_bounds
_CLONE = "Please clone() the tensor before performing the operation."


def _check_out_internal_overlap(out):
    """An `out=` whose elements share memory (an expanded tensor): torch refuses to write
    it (its result would depend on the order of the writes)."""
    a = out._data
    if any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. " + _CLONE)


def _check_out_disjoint(out, inputs, shape):
    """An `out=` that overlaps an input at all (out=input, out=input[1:]): refused by the
    ops that read their inputs while writing (cat, gather, take, index_select,
    masked_select, kthvalue ...); torch compares memory ranges. An `out` of another shape
    than the result (`shape`) is resized, in place from its first element when its memory
    has room (torch keeps the storage): the range after the resize is compared too (cat
    checks before its resize, gather after)."""
    a = out._data
    ranges = [_byte_bounds(a)]
    if a.shape != tuple(shape):
        root, b = a, a.base
        while b is not None:  # (as_strided's arrays hold theirs through a plain object)
            root = b if isinstance(b, np.ndarray) else root
            b = getattr(b, "base", None)
        lo = ranges[0][0]
        need = lo + int(np.prod(shape)) * a.itemsize
        if need <= _byte_bounds(root)[1]:
            ranges.append((lo, need))
    for t in inputs:
        tlo, thi = _byte_bounds(t._data)
        if t is out or any(lo < hi and tlo < thi and lo < thi and tlo < hi
                           for lo, hi in ranges):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               + _CLONE)


def _check_out_dtype(name, result, out):
    """The `out=` of an op that does not cast (gather, index_select, kthvalue, aminmax ...)
    must have its result's dtype; torch's message names the C types."""
    if result != out:
        raise RuntimeError(f"Expected out tensor to have dtype {_dt.cpp_name(result)}, but "
                           f"got {_dt.cpp_name(out)} instead ({name})")


# ---- reduction dims ------------------------------------------------------------------
def _check_dim_list(name, dims, nd):
    """A list of reduction dims: each in range, none twice (torch's messages)."""
    seen = set()
    for a in dims:
        d = _dim(a, nd, name=name)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)


def _check_reducible(name, shape, dims):
    """A reduction without an identity (amax, amin, max, min) over an empty tensor:
    refused without dims (RuntimeError), or over a dim of size 0 (IndexError)."""
    if dims is None:
        if 0 in shape:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        return
    for a in (dims if isinstance(dims, tuple) else (dims,)):
        d = _dim(a, len(shape))
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


# ---- scalar fill values --------------------------------------------------------------
# ---- view's rule (torch's computeStride) -----------------------------------------------
def _view_strides(shape, strides, new):
    """The strides a view of `new` shape can have over memory laid out as (shape, strides),
    or None when one of its dims would span two separately strided chunks. Walks the old
    dims from the last: runs of dims that are contiguous with each other form a chunk,
    and the new dims must split each chunk exactly."""
    if 0 in shape or not shape:
        return ()  # no element or one: any shape views it
    out = [0] * len(new)
    v = len(new) - 1
    base = strides[-1]
    numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != numel * base):
            while v >= 0 and (view_numel < numel or new[v] == 1):
                out[v] = view_numel * base
                view_numel *= new[v]
                v -= 1
            if view_numel != numel:
                return None
            if d > 0:
                base, numel, view_numel = strides[d - 1], 1, 1
    return tuple(out) if v == -1 else None


def _check_viewable(a, shape):
    """`x.view(shape)` of a non-contiguous array `a`: torch refuses a shape its strides
    cannot express (no copy is made by a view)."""
    shape = tuple(shape)
    if shape.count(-1) == 1:
        rest = math.prod(s for s in shape if s != -1)
        if not rest or a.size % rest:
            return  # reshape's own error says what is wrong
        shape = tuple(a.size // rest if s == -1 else s for s in shape)
    if math.prod(shape) != a.size:
        return
    item = a.itemsize
    if _view_strides(a.shape, [s // item for s in a.strides], shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")

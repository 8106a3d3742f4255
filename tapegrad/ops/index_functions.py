"""Public indexing functions (PyTorch names and arguments) over the table in indexing.py.

    x[key]  x[key] = v  index_put(_)  gather  scatter  scatter_add  index_select
    index_add  masked_fill  masked_select  take_along_dim
    sort (values differentiable)  topk (values differentiable)
    one_hot  argsort  multinomial  nonzero  argwhere  unique   (integer results, no grad)

Keys follow NumPy's (= PyTorch's) rules: ints, slices (negative steps too, which
PyTorch itself rejects), None, Ellipsis, integer tensors/arrays/lists and boolean
masks, in any mixture. Arguments are checked the way PyTorch checks them, with its
error types and messages.
"""
import builtins
import re

import numpy as np

from .. import dtypes as _dt
from ..core import tape as _tape
from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from .. import random as _random
from . import functions as F
from .return_types import structseq
from . import indexing as I
from . import inplace
from .shape_functions import _dim

_ndarray = np.ndarray
sort_result = structseq("sort", ["values", "indices"])
topk_result = structseq("topk", ["values", "indices"])
kthvalue_result = structseq("kthvalue", ["values", "indices"])


def _int64(x, arr):
    """An int64 index tensor (no gradient) of the tensor class x has."""
    return like(x, np.asarray(arr, dtype=np.int64))


# ---- keys -------------------------------------------------------------------------
def _index_array(a):
    if a.dtype.kind == "b":
        return a
    if a.dtype == np.uint8:  # PyTorch (deprecated): a uint8 index is a mask
        return a.astype(bool)
    if a.dtype.kind in "iu":
        return a
    if a.size == 0:
        return a.astype(np.int64)  # x[[]]: an empty list selects nothing
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _key_item(k):
    tk = type(k)
    if tk is int or tk is slice or k is None or k is Ellipsis or tk is bool:
        return k
    if isinstance(k, TensorBase):
        a = k._data
        if a.ndim == 0 and a.dtype.kind in "iu":
            _tape.data_read("an index computed from a tensor's value")  # x[x.argmax()]
            return int(a)
        return _index_array(a)
    if isinstance(k, np.integer):
        return int(k)
    if isinstance(k, (list, range)):
        return _index_array(np.asarray([_unwrap(v) for v in k] if isinstance(k, list)
                                       else k))
    if isinstance(k, _ndarray):
        return _index_array(k)
    if isinstance(k, np.bool_):
        return bool(k)
    if isinstance(k, slice):
        return k
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(k).__name__})")


def _unwrap(v):
    if isinstance(v, TensorBase):
        return v._data
    if isinstance(v, list):
        return [_unwrap(u) for u in v]
    return v


def normalize_key(key):
    """A key NumPy can index with: Tensors and lists become arrays; a key mixing ints
    with arrays becomes a two-step `SplitKey` (PyTorch's order, see indexing.py)."""
    if type(key) is tuple:
        key = tuple(_key_item(k) for k in key)
        has_int = has_arr = False
        for k in key:
            tk = type(k)
            if tk is int:
                has_int = True
            elif tk is _ndarray:
                has_arr = True
        return _split(key) if has_int and has_arr else key
    if type(key) is I.SplitKey:
        return key
    if type(key) is list and _list_as_tuple(key):
        return normalize_key(tuple(key))
    return _key_item(key)


def _list_as_tuple(key):
    """PyTorch's legacy rule (still in 2.x, deprecated): a list holding sequences, tensors,
    slices, None or Ellipsis indexes like the tuple of its items (x[[0, [1, 2]]] is
    x[0, [1, 2]]); a flat list of numbers is one index array."""
    if len(key) >= 32:
        return False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (list, tuple, slice, TensorBase, _ndarray)):
            return True
    return False


def _split(key):
    """ints (with slices and None) first, then the arrays on the result."""
    basic, adv = [], []
    for k in key:
        tk = type(k)
        if tk is _ndarray:
            basic += [slice(None)] * (k.ndim if k.dtype == np.bool_ else 1)
            adv.append(k)
        elif tk is int:
            basic.append(k)
        elif k is None:
            basic.append(None)
            adv.append(slice(None))
        elif k is Ellipsis:
            basic.append(k)
            adv.append(k)
        else:  # a slice (or a Python bool, which acts like None plus a mask)
            basic.append(k)
            adv.append(slice(None))
    return I.SplitKey((tuple(basic), tuple(adv)))


def _index_error(e, x):
    msg = str(e)
    if "0-dimensional" in msg:
        msg = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
               "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    msg = msg.replace(" axis ", " dimension ")
    if msg.startswith("shape mismatch: indexing arrays"):
        # NumPy: "... with shapes (32,) (100,) "; torch: "... with shapes [32], [100]"
        shapes = ", ".join("[" + ", ".join(d for d in s.split(",") if d) + "]"
                           for s in re.findall(r"\(([\d,]*)\)", msg))
        msg = ("shape mismatch: indexing tensors could not be broadcast together with "
               f"shapes {shapes}")
    return IndexError(msg)


def getitem(x, key):
    """x[key]: one `getitem` node; its backward adds g into zeros at key."""
    tk = type(key)
    if not (tk is int or tk is slice):
        key = normalize_key(key)
    try:
        return apply(I.getitem, x, key=key)
    except IndexError as e:
        raise _index_error(e, x) from None


# ---- writing: x[key] = v ------------------------------------------------------------
def _value(v, x):
    if isinstance(v, TensorBase):
        # an integer or bool x cannot carry a gradient: the value is only copied in
        return v if x._data.dtype.kind in "fc" else v.detach()
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    return like(x, np.asarray(v, dtype=x._data.dtype))


def _write(x, key, v, accumulate, name):
    """x[key] = v in place: x's array is changed where it lives (views see the change).

    With autograd, x's history is rebased (the in-place machinery of ops/inplace.py):
    a new tensor `old` takes over x's previous history, and x.grad_fn becomes a
    `setitem` node with inputs (old, v). Its backward gives old zero gradient at the
    overwritten positions and v the gradient gathered from them.
    """
    key = normalize_key(key)
    v = _value(v, x)
    vdata = v._data if isinstance(v, TensorBase) else v

    def compute(old):
        return apply(I.setitem, old, v, key=key, accumulate=accumulate)

    def fast(out):  # no graph needed: write straight into the array
        try:
            if accumulate:
                I.add_at(out, key, vdata)
            else:
                I.write(out, key, vdata)
        except ValueError as e:
            raise _value_error(name, vdata, e) from None

    others = (v,) if isinstance(v, TensorBase) else ()
    try:
        # needs_old: `old` keeps a copy of the previous values (what the graph shows)
        return inplace._inplace(x, compute, others, needs_old=True, fast=fast,
                                casting="unsafe")
    except IndexError as e:
        raise _index_error(e, x) from None
    except ValueError as e:
        raise _value_error(name, vdata, e) from None


def _value_error(name, vdata, e):
    return RuntimeError(f"{name}: shape mismatch: value tensor of shape "
                        f"{list(np.shape(vdata))} cannot be broadcast to the indexing result "
                        f"({e})")


def setitem(x, key, value):
    """x[key] = value, differentiable w.r.t. both the untouched part of x and value."""
    _write(x, key, value, False, "setitem")


def index_put_(input, indices, values, accumulate=False):
    return _write(input, tuple(indices), values, bool(accumulate), "index_put_")


def index_put(input, indices, values, accumulate=False):
    key = normalize_key(tuple(indices))
    return apply(I.setitem, input, _value(values, input), key=key, accumulate=bool(accumulate))


# ---- gather / scatter ----------------------------------------------------------------
def _check_index(name, x, d, index, same_ndim=True):
    idx = index._data if isinstance(index, TensorBase) else np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    idx = idx.astype(np.int64, copy=False)
    if same_ndim and idx.ndim != builtins.max(x._data.ndim, 0) and not (
            idx.ndim <= 1 and x._data.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    n = x._data.shape[d] if x._data.ndim else 1
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= n:
            raise RuntimeError(f"index {lo if lo < 0 else hi} is out of bounds for dimension "
                               f"{d} with size {n}")
    return idx


def _check_corner(name, x, d, idx, other, what):
    for k, (i, s) in enumerate(zip(idx.shape, other)):
        if k != d and i > s:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be smaller than {what} "
                               f"{list(other)} apart from dimension {d}")


def _as_1d(x, idx):
    """gather/scatter on 0-d tensors: PyTorch treats them as one-element vectors."""
    return x.reshape(1) if x._data.ndim == 0 else x, idx.reshape(1) if idx.ndim == 0 else idx


def gather(input, dim, index, *, sparse_grad=False):
    """out[i][j] = input[index[i][j]][j] (dim 0); backward scatter-adds g."""
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    idx = _check_index("gather", x, d, index)
    _check_corner("gather", x, d, idx, x._data.shape, "self")
    if x._data.ndim == 0 or idx.ndim == 0:
        x1, i1 = _as_1d(x, idx)
        return F.reshape(apply(I.gather, x1, axis=0, index=i1), idx.shape)
    return apply(I.gather, x, axis=d, index=idx)


def _src(src, value, x):
    if src is None:
        src = value
    if isinstance(src, TensorBase):
        if src._data.dtype != x._data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        return src
    if isinstance(src, (bool, int, float, np.generic)):
        return src.item() if isinstance(src, np.generic) else src
    return like(x, np.asarray(src, dtype=x._data.dtype))


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """out = input, then out[index[i][j]][j] = src[i][j] (dim 0)."""
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    idx = _check_index("scatter", x, d, index)
    s = _src(src, value, x)
    if s is None:
        raise TypeError("scatter() missing 1 required argument: 'src' or 'value'")
    _check_corner("scatter", x, d, idx, x._data.shape, "self")
    if idx.ndim == 0:  # `zeros(10).scatter_(0, tensor(y), value=1)`: one position
        idx = idx.reshape(1)
    if isinstance(s, TensorBase):
        _check_corner("scatter", x, -1, idx, s._data.shape, "src")
    if reduce is not None:
        if reduce == "add":
            if not isinstance(s, TensorBase):
                s = like(x, np.full(idx.shape, s, dtype=x._data.dtype))
            return scatter_add(x, d, idx, s)
        if reduce == "multiply":
            out = x._data.copy()
            sd = s._data if isinstance(s, TensorBase) else np.full(idx.shape, s, x._data.dtype)
            np.multiply.at(out, I.along(idx, d), I._corner(sd, idx.shape))
            return like(x, out)
        raise RuntimeError("reduce argument must be either add or multiply.")
    return apply(I.scatter, x, s, axis=d, index=idx)


def scatter_add(input, dim, index, src):
    """out = input, then out[index[i][j]][j] += src[i][j] (dim 0), repeats adding up."""
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    idx = _check_index("scatter_add", x, d, index)
    s = _src(src, None, x)
    _check_corner("scatter_add", x, d, idx, x._data.shape, "self")
    if idx.ndim == 0:  # one position, as scatter's 0-d index
        idx = idx.reshape(1)
        s = F.reshape(s, (1,)) if s._data.ndim == 0 else s
    _check_corner("scatter_add", x, -1, idx, s._data.shape, "src")
    return apply(I.scatter_add, x, s, axis=d, index=idx)


def _index_1d(name, index):
    idx = index._data if isinstance(index, TensorBase) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    return idx.reshape(-1)


def index_select(input, dim, index):
    """Rows (along dim) picked by a 1-D index; backward adds g into the picked rows."""
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    idx = _index_1d("index_select", index)
    n = x._data.shape[d] if x._data.ndim else 1
    # NOTE: no negative indices (PyTorch raises where NumPy would count from the end)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise IndexError(f"index out of range in self (index {bad}, dimension {d} with "
                         f"size {n})")
    if x._data.ndim == 0:
        return F.reshape(apply(I.index_select, x.reshape(1), axis=0, index=idx), ())
    return apply(I.index_select, x, axis=d, index=idx)


def index_add(input, dim, index, source, *, alpha=1):
    """out = input, then out[index[i]] += alpha * source[i] along dim (repeats add up)."""
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    idx = _index_1d("index_add", index)
    s = F._tensor(source)
    if s._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_add_(): self ({_dt.name(x._data.dtype)}) and source "
                           f"({_dt.name(s._data.dtype)}) "
                           "must have the same scalar type")
    ss = s._data.shape
    want = x._data.shape[:d] + (idx.size,) + x._data.shape[d + 1:]
    if ss != want:
        raise RuntimeError(f"index_add_(): Source/destination tensor must have same slice "
                           f"shapes. Destination shape {tuple(x._data.shape)}, source shape "
                           f"{tuple(ss)}, index size {idx.size} along dim {d}")
    n = x._data.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return apply(I.index_add, x, s, axis=d, index=idx, alpha=alpha)


def masked_fill(input, mask, value):
    """where(mask, value, input): value is a number or a 0-d tensor (which gets the sum
    of g over the filled positions)."""
    x = F._tensor(input)
    m = mask._data if isinstance(mask, TensorBase) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                           f"dtype {m.dtype}")
    try:
        np.broadcast_shapes(m.shape, x._data.shape)
    except ValueError:
        raise RuntimeError(f"masked_fill: the shape of the mask {tuple(m.shape)} cannot be "
                           f"broadcast to the input shape {tuple(x._data.shape)}") from None
    if isinstance(value, TensorBase):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        if value._rg and x._data.dtype.kind not in "fc":
            raise RuntimeError(f"masked_fill: an integer tensor ({_dt.name(x._data.dtype)}) "
                               "cannot be "
                               "filled with a value that requires grad (autograd does not "
                               "support integer results)")
    elif isinstance(value, np.generic):
        value = value.item()
    return apply(I.masked_fill, x, value, mask=m)


def masked_select(input, mask):
    """The elements where mask is True, as a 1-D tensor (input and mask broadcast)."""
    x = F._tensor(input)
    m = mask._data if isinstance(mask, TensorBase) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask (got {m.dtype})")
    try:
        shape = np.broadcast_shapes(m.shape, x._data.shape)
    except ValueError:
        raise RuntimeError(f"masked_select: the shapes of input {tuple(x._data.shape)} and "
                           f"mask {tuple(m.shape)} cannot be broadcast together") from None
    if x._data.shape != shape:
        x = F.expand(x, shape)
    if m.shape != shape:
        m = np.broadcast_to(m, shape)
    return apply(I.getitem, x, key=m)


def take_along_dim(input, indices, dim=None):
    """np.take_along_axis: input and indices broadcast except along dim; dim=None reads
    the flattened input."""
    x = F._tensor(input)
    idx = indices._data if isinstance(indices, TensorBase) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{idx.dtype}")
    idx = idx.astype(np.int64, copy=False)
    if dim is None:
        return gather(F.reshape(x, (-1,)), 0, idx.reshape(-1))
    nd = x._data.ndim
    d = _dim(dim, nd)
    if idx.ndim != nd:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {nd} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    xs, ids = list(x._data.shape), list(idx.shape)
    xs[d] = ids[d] = 1
    try:
        b = list(np.broadcast_shapes(tuple(xs), tuple(ids)))
    except ValueError:
        raise RuntimeError(f"take_along_dim: the shapes of input {tuple(x._data.shape)} and "
                           f"indices {tuple(idx.shape)} cannot be broadcast apart from "
                           f"dimension {d}") from None
    bx, bi = list(b), list(b)
    bx[d], bi[d] = x._data.shape[d], idx.shape[d]
    if tuple(bx) != x._data.shape:
        x = F.expand(x, tuple(bx))
    if tuple(bi) != idx.shape:
        idx = np.broadcast_to(idx, tuple(bi))
    idx = np.where(idx < 0, idx + x._data.shape[d], idx)  # NumPy-style negative indices
    return gather(x, d, idx)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Repeat each element (along dim; of the flattened input if dim is None) `repeats`
    times: an index_select with index np.repeat(arange(n), repeats), so the backward
    sums the gradient of the copies."""
    x = F._tensor(input)
    if dim is None:
        x = F.reshape(x, (-1,))
        dim = 0
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d] if x._data.ndim else 1
    r = repeats._data if isinstance(repeats, TensorBase) else np.asarray(repeats)
    if r.ndim > 1 or (r.ndim == 1 and r.size not in (1, n)):
        raise RuntimeError(f"repeats must be 0-dim or 1-dim tensor of size {n} (got shape "
                           f"{tuple(r.shape)})")
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    counts = r.reshape(-1)
    idx = np.repeat(np.arange(n), counts if r.ndim == 1 and counts.size == n else int(counts[0]))
    if x._data.ndim == 0:
        x = F.reshape(x, (1,))
    return apply(I.index_select, x, axis=d, index=idx)


# ---- sorting: integer indices, values through gather -----------------------------------
def _argsort(a, axis, descending):
    """Stable argsort; descending keeps equal elements in order and puts NaN first
    (PyTorch sorts NaN as the largest value)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    r = np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    return n - 1 - r


def argsort(input, dim=-1, descending=False, stable=False):
    x = F._tensor(input)
    if x._data.ndim == 0:
        return _int64(x, 0)
    return _int64(x, _argsort(x._data, _dim(dim, x._data.ndim), descending))


def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices); values = gather(input, dim, indices), so they are differentiable."""
    x = F._tensor(input)
    if x._data.ndim == 0:
        return sort_result(F.reshape(x, ()) if x._rg else x, _int64(x, 0))
    d = _dim(dim, x._data.ndim)
    idx = _argsort(x._data, d, descending).astype(np.int64, copy=False)
    return sort_result(apply(I.gather, x, axis=d, index=idx), _int64(x, idx))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) along dim, in order; values differentiable."""
    x = F._tensor(input)
    nd = x._data.ndim
    d = _dim(dim, nd)
    n = x._data.shape[d] if nd else 1
    k = int(k)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if nd == 0:
        return topk_result(F.reshape(x, ()), _int64(x, 0))
    idx = _argsort(x._data, d, largest)
    idx = idx[(slice(None),) * d + (slice(0, k),)].astype(np.int64, copy=False)
    return topk_result(apply(I.gather, x, axis=d, index=idx), _int64(x, idx))


def kthvalue(input, k, dim=-1, keepdim=False):
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d] if x._data.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = _argsort(x._data, d, False)[(slice(None),) * d + (slice(k - 1, k),)]
    vals = apply(I.gather, x, axis=d, index=idx.astype(np.int64))
    if not keepdim:
        vals, idx = F.reshape(vals, np.squeeze(idx, d).shape), np.squeeze(idx, d)
    return kthvalue_result(vals, _int64(x, idx))


# ---- integer helpers (no gradient) -----------------------------------------------------
def one_hot(tensor, num_classes=-1):
    """(..., ) int64 class indices -> (..., num_classes) int64 0/1."""
    x = F._tensor(tensor, "one_hot")
    t = x._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(t.shape + (int(num_classes),), dtype=np.int64)
    np.put_along_axis(out, t[..., None], 1, axis=-1)
    return _int64(x, out)


def nonzero(input, *, as_tuple=False):
    x = F._tensor(input)
    a = x._data
    if as_tuple:
        if a.ndim == 0:
            a = a.reshape(1)
        return tuple(_int64(x, i) for i in np.nonzero(a))
    return _int64(x, np.argwhere(a))


def argwhere(input):
    return nonzero(input)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct values (always sorted here), optionally the inverse map and counts."""
    x = F._tensor(input)
    a = x._data
    if dim is None:
        res = np.unique(a, return_inverse=return_inverse, return_counts=return_counts)
    else:
        d = _dim(dim, a.ndim)
        res = np.unique(a, return_inverse=return_inverse, return_counts=return_counts, axis=d)
    if not (return_inverse or return_counts):
        return like(x, res)
    res = list(res)
    out = [like(x, res[0])]
    k = 1
    if return_inverse:
        inv = res[k]
        out.append(_int64(x, inv.reshape(a.shape) if dim is None else inv.reshape(-1)))
        k += 1
    if return_counts:
        out.append(_int64(x, res[k]))
    return tuple(out)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw category indices from (rows of) non-negative weights, with tapegrad's RNG.

    With replacement: inverse CDF (searchsorted of uniforms). Without: the exponential
    race (the k smallest E_j / p_j, E_j ~ Exp(1)), which samples without replacement
    with probabilities proportional to p. Streams differ from PyTorch's.
    """
    p = F._tensor(input)._data
    if p.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{p.dtype}")
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    one = p.ndim == 1
    p = np.atleast_2d(p).astype(np.float64)
    rows, n = p.shape
    k = int(num_samples)
    if k <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(axis=1)
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _random.rng(generator)
    if replacement:
        cdf = np.cumsum(p, axis=1) / total[:, None]
        cdf[:, -1] = 1.0
        u = g.random((rows, k))
        # one searchsorted over all rows: row r's cdf is shifted into [r, r + 1]
        off = np.arange(rows)[:, None]
        flat = np.searchsorted((cdf + off).ravel(), (u + off).ravel(), side="right")
        out = np.minimum(flat.reshape(rows, k) - off * n, n - 1)
    else:
        if k > n:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        if ((p > 0).sum(axis=1) < k).any():
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        with np.errstate(divide="ignore"):
            keys = g.exponential(size=(rows, n)) / p
        out = np.argsort(keys, axis=1, kind="stable")[:, :k]
    return _int64(input, out[0] if one else out)


# ---- in-place forms (the in-place machinery of ops/inplace.py rebases the history) ----
def _inplace_form(fn, name):
    def f(self, *args, **kwargs):
        others = tuple(a for a in list(args) + list(kwargs.values())
                       if isinstance(a, TensorBase) and a._data.dtype.kind == "f")
        return inplace._inplace(self, lambda old: fn(old, *args, **kwargs), others,
                                needs_old=False, casting="unsafe")
    f.__name__ = name
    f.__doc__ = f"In-place {fn.__name__}: same table entry, the result written into self."
    return f


scatter_ = _inplace_form(scatter, "scatter_")
scatter_add_ = _inplace_form(scatter_add, "scatter_add_")
index_add_ = _inplace_form(index_add, "index_add_")

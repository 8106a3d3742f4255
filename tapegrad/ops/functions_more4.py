"""Reductions into positions and running extremes, and the storage-shaped methods:
scatter_reduce(_), cummax, cummin, aminmax, fill_diagonal_, as_strided, resize_,
resize_as_.

No table entries of their own. The differentiable results are formulas of table ops
(scatter_add, gather, where, amin/amax), whose gradients are torch's:
- scatter_reduce sum/mean: scatter_add of src into input (zeroed where scattered to when
  include_self=False), mean divided by the constant count of contributions;
- scatter_reduce amax/amin: the result is computed with NumPy, then rebuilt as (the
  contributions equal to it, summed) / (how many there are), so the gradient is split
  evenly among ties, torch's rule;
- scatter_reduce prod: input (or 1) times exp(scatter_add(log|src|)) times the signs, its
  value replaced by NumPy's exact product (expr - value(expr) + exact keeps expr's
  gradient: prod / src for src, as torch's); a zero in src, where that quotient is 0/0
  and torch takes the product of the others, has no gradient here (an error if needed);
- cummax/cummin: indices by NumPy, values = gather(input, dim, indices);
- fill_diagonal_: in place where(diagonal, value, x).
as_strided is a copy, not torch's view (see its docstring), with torch's values: the storage
it reads is the contiguous array the input's NumPy array is (or is a view of).
resize_ keeps the first elements in row-major order; growing pads with zeros (torch leaves
them uninitialized) and, after a shrink, gets the old values back as torch's storage does.
"""
import math

import numpy as np

from ..core.state import state
from ..core.tensor_base import TensorBase, like
from . import functions as F
from . import index_functions as I
from .inplace import _inplace
from .return_types import structseq
from .shape_functions import _dim

cummax_result = structseq("cummax", ["values", "indices"])
cummin_result = structseq("cummin", ["values", "indices"])
aminmax_result = structseq("aminmax", ["min", "max"])

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _t(x, name, arg="input", pos=1):
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                    f"{type(x).__name__}")


def _targets(idx, d):
    """The index tuple of x each element of idx writes to (dim d replaced by idx)."""
    grid = list(np.indices(idx.shape, sparse=True))
    grid[d] = idx
    return tuple(grid)


def _identity(reduce, dt):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)
    small = -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)
    return small if reduce == "amax" else big


def _reduce_numpy(x, idx, s, d, reduce, include_self, tgt, hit, counts):
    out = x.copy()
    if not include_self:
        out[hit] = _identity(reduce, x.dtype)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    ufunc.at(out, tgt, s)
    if reduce == "mean":
        n = counts + (1 if include_self else 0)
        div = np.floor_divide if x.dtype.kind in "iub" else np.true_divide
        out = np.where(n > 0, div(out, np.maximum(n, 1)), out).astype(x.dtype)
    return out


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """out = input, then each src element reduced into out[index] along dim (sum, prod,
    mean, amax, amin); include_self=False leaves input's own value out where something is
    scattered. Gradients as torch's (prod: not with a zero in src; see the module docstring)."""
    x, s = _t(input, "scatter_reduce"), _t(src, "scatter_reduce", "src", 4)
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if not isinstance(index, TensorBase) or index._data.dtype.kind not in "iu":
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if s._data.dtype != x._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    squeeze = x.ndim == 0
    if squeeze:  # a 0-d self: a 1-element vector, then back
        x, s = F.reshape(x, (1,)), F.reshape(s, (-1,))
        index = like(index, index._data.reshape(-1))
    d = _dim(dim, x.ndim)
    # scatter_add checks the index (dims, range, shape against self and src) as torch's
    # scatter family does, and is the sum itself
    total = I.scatter_add(x, d, index, s)
    idx = index._data.astype(np.int64)
    tgt = _targets(idx, d)
    part = tuple(slice(0, n) for n in idx.shape)
    hit = np.zeros(x.shape, bool)
    hit[tgt] = True
    counts = np.zeros(x.shape, np.int64)
    np.add.at(counts, tgt, 1)
    xa, sa = x._data, s._data[part]
    if x._data.dtype.kind != "f" or (reduce == "prod" and (sa == 0).any()):
        if reduce == "prod" and state.grad_enabled and (x._rg or s._rg):
            raise RuntimeError("scatter_reduce(): the gradient of reduce='prod' with a zero "
                               "in src is not implemented in tapegrad")
        out = like(x, _reduce_numpy(xa, idx, sa, d, reduce, include_self, tgt, hit, counts))
    elif reduce == "prod":
        out = _prod(x, s, d, index, include_self, idx, tgt, part, hit, counts)
    else:
        out = _differentiable(x, s, d, index, reduce, include_self, total, idx, tgt, part,
                              hit, counts)
    return F.reshape(out, ()) if squeeze else out


def _prod(x, s, d, index, include_self, idx, tgt, part, hit, counts):
    exact = _reduce_numpy(x._data, idx, s._data[part], d, "prod", include_self, tgt, hit,
                          counts)
    s_part = s[part] if s._data.shape != idx.shape else s
    logs = I.scatter_add(like(x, np.zeros(x.shape, x._data.dtype)), d, index,
                         F.log(F.abs(s_part)))
    sign = np.ones(x.shape, x._data.dtype)
    np.multiply.at(sign, tgt, np.sign(s._data[part]))
    base = x if include_self else F.where(like(x, hit), like(x, np.ones((), x._data.dtype)), x)
    expr = F.mul(base, F.mul(F.exp(logs), like(x, sign)))
    return F.add(F.sub(expr, like(x, expr._data)), like(x, exact))


def _differentiable(x, s, d, index, reduce, include_self, total, idx, tgt, part, hit,
                    counts):
    zero = like(x, np.zeros((), x._data.dtype))
    drop = like(x, hit & (not include_self))  # self's values left out of the reduction
    if reduce in ("sum", "mean"):
        out = total if include_self else I.scatter_add(F.where(drop, zero, x), d, index, s)
        if reduce == "mean":
            n = counts + (1 if include_self else 0)
            out = F.div(out, like(x, np.maximum(n, 1).astype(x._data.dtype)))
        return out
    res = _reduce_numpy(x._data, idx, s._data[part], d, reduce, include_self, tgt, hit,
                        counts)
    # torch divides the gradient among every element equal to the result, self included
    # even where include_self=False drops it (its share is then lost, as in torch)
    tied = x._data == res
    self_is = tied & ~drop._data
    src_is = s._data[part] == res[tgt]
    k = self_is.astype(np.int64)
    np.add.at(k, tgt, src_is.astype(np.int64))
    n = k + (tied & drop._data)
    s_part = s[part] if s._data.shape != idx.shape else s
    summed = I.scatter_add(F.where(like(x, self_is), x, zero), d, index,
                           F.where(like(x, src_is), s_part, zero))
    out = F.div(summed, like(x, np.maximum(n, 1).astype(x._data.dtype)))
    if (n != k).any():  # the dropped shares' value, as a constant: out's value stays res
        with np.errstate(all="ignore"):
            out = F.add(out, like(x, np.where(n != k, res * (n - k) / np.maximum(n, 1), 0)
                                  .astype(x._data.dtype)))
    # no contribution equals the result only when it is nan
    return F.where(like(x, n == 0), like(x, res), out) if (n == 0).any() else out


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """scatter_reduce in place."""
    return _inplace(self, lambda x: scatter_reduce(x, dim, index, src, reduce,
                                                   include_self=include_self),
                    (src,) if isinstance(src, TensorBase) else ())


def _cum_extreme(name, result, better):
    def f(input, dim):
        x = _t(input, name)
        nd = x.ndim
        d = _dim(dim, nd)
        a = np.moveaxis(x._data.reshape(1) if nd == 0 else x._data, d if nd else 0, 0)
        idx = np.zeros(a.shape, np.int64)
        if a.shape[0]:
            cur, ci = a[0].copy(), np.zeros(a.shape[1:], np.int64)
            for i in range(1, a.shape[0]):
                v = a[i]
                # torch: a nan wins and stays; ties move the index to the later element
                nan = np.isnan(v) if a.dtype.kind == "f" else np.zeros(v.shape, bool)
                curnan = np.isnan(cur) if a.dtype.kind == "f" else nan
                take = nan | (~curnan & better(v, cur))
                cur = np.where(take, v, cur)
                ci = np.where(take, i, ci)
                idx[i] = ci
        idx = np.moveaxis(idx, 0, d if nd else 0)
        if nd == 0:
            return result(x, like(x, np.zeros((), np.int64)))  # torch: values is x itself
        ind = like(x, idx)
        return result(I.gather(x, d, ind), ind)
    f.__name__ = name
    f.__doc__ = (f"torch.{name}: the running {name[3:]} along dim and the index where it "
                 f"occurred (values = gather(input, dim, indices): its gradient).")
    return f


cummax = _cum_extreme("cummax", cummax_result, lambda v, cur: v >= cur)
cummin = _cum_extreme("cummin", cummin_result, lambda v, cur: v <= cur)


def aminmax(input, *, dim=None, keepdim=False):
    """(amin, amax) over dim (all dims when None); gradients as amin's and amax's."""
    x = _t(input, "aminmax")
    if dim is None:
        if x._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(x.ndim))
    else:
        d = _dim(dim, x.ndim)
        if x.ndim and x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,) if x.ndim else ()
    if not dims:
        return aminmax_result(F.clone(x), F.clone(x))
    return aminmax_result(F.amin(x, dims, keepdim), F.amax(x, dims, keepdim))


def fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal (all indices equal) set to fill_value, in place; a tall matrix
    with wrap=True starts again every n + 1 rows (numpy.fill_diagonal's rule is torch's)."""
    x = _t(self, "fill_diagonal_")
    if x.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(x.shape, bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    value = fill_value.item() if isinstance(fill_value, TensorBase) else fill_value
    value = like(x, np.asarray(value, dtype=x._data.dtype))
    if x._rg and x.grad_fn is None and state.grad_enabled:  # torch writes through a view
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return _inplace(x, lambda t: F.where(like(t, mask), value, t), ())


def _storage_of(a):
    """(the 1-D storage a lives in, a's offset in it, the storage position of each of a's
    elements): a itself when it owns contiguous memory, else the contiguous array it is a
    NumPy view of (a transpose, a slice), as torch's storage is the base's."""
    item = a.dtype.itemsize
    base = a.base
    while isinstance(base, np.ndarray) and not base.flags.owndata and isinstance(
            base.base, np.ndarray):
        base = base.base
    if (a.flags.c_contiguous or not isinstance(base, np.ndarray) or base.dtype != a.dtype
            or not base.flags.c_contiguous or any(st % item for st in a.strides)):
        return a.reshape(-1), 0, np.arange(a.size, dtype=np.int64).reshape(a.shape)
    off = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    pos = np.full(a.shape, off, np.int64)
    for k, (m, st) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = m
        pos = pos + (np.arange(m, dtype=np.int64) * (st // item)).reshape(shape)
    return base.reshape(-1), int(off), pos


def as_strided(input, size, stride, storage_offset=None):
    """The storage elements at storage_offset + sum(i_k * stride_k), in the given size.
    The storage is input's, as torch's: its own memory when contiguous, else the
    contiguous array it is a view of (a transpose, a slice), and storage_offset defaults
    to input's offset in it. A copy (torch returns a view): input's elements are picked by
    index_select (overlapping windows add their gradients, as torch's as_strided backward
    does); storage elements outside input are constants."""
    x = _t(input, "as_strided")
    size, stride = [int(v) for v in size], [int(v) for v in stride]
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(v < 0 for v in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {stride}")
    store, own_off, where_x = _storage_of(x._data)
    off = own_off if storage_offset is None else int(storage_offset)
    need = 0 if 0 in size else off + 1 + sum((n - 1) * st for n, st in zip(size, stride))
    n, item = store.size, x._data.dtype.itemsize
    if need > n:
        raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset "
                           f"{off}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size {n * item}")
    pos = np.full(size, off, np.int64)
    for k, (m, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = m
        pos = pos + (np.arange(m, dtype=np.int64) * st).reshape(shape)
    pos = pos.reshape(-1)
    owner = np.full(n, -1, np.int64)  # storage position -> x's row-major element (or -1)
    owner[where_x.reshape(-1)] = np.arange(x._data.size, dtype=np.int64)
    pick = owner[pos]
    inside = pick >= 0
    flat = I.index_select(F.reshape(x, (-1,)), 0, like(x, np.maximum(pick, 0)))
    if not inside.all():
        flat = F.where(like(x, inside), flat, like(x, store[pos]))
    return F.reshape(flat, tuple(size))


def resize_(self, *sizes, memory_format=None):
    """self reshaped to `sizes` in place, keeping its first elements in row-major order
    (see the module docstring for growing). No gradient: torch refuses tensors that
    require grad."""
    x = _t(self, "resize_")
    if x._rg:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(int(v) for v in (sizes[0] if len(sizes) == 1 and isinstance(
        sizes[0], (tuple, list)) else sizes))
    if any(v < 0 for v in shape):
        raise RuntimeError("numel: integer multiplication overflow")  # torch's message
    n = math.prod(shape)
    a = x._data
    store = _storage(a)
    if store is not None and store.size >= n:
        new = store[:n]  # the same memory: a later grow gets the old values back
    else:
        new = np.zeros(n, a.dtype)
        k = min(n, a.size)
        new[:k] = a.reshape(-1)[:k]
    x._data = new.reshape(shape)
    x._version[0] += 1
    return x


def _storage(a):
    """The 1-D array `a` is the start of (a resized tensor's old memory), else `a`
    flattened when it is contiguous, else None."""
    base = a.base
    if (isinstance(base, np.ndarray) and base.flags.c_contiguous and a.flags.c_contiguous
            and base.dtype == a.dtype
            and base.__array_interface__["data"][0] == a.__array_interface__["data"][0]):
        return base.reshape(-1)
    return a.reshape(-1) if a.flags.c_contiguous else None


def resize_as_(self, the_template, memory_format=None):
    """resize_ to the_template's shape."""
    return resize_(self, tuple(_t(the_template, "resize_as_", "the_template", 2).shape))

"""Indexing, slicing, joining by index: getitem/setitem, gather/scatter(_add/_reduce),
index_select/add/fill/copy/put, masked_fill/select/scatter, take, where, nonzero.
Derivatives: rules/indexing.py."""
import builtins
import itertools
import re

import numpy as np

from .. import dtypes as _dt
from ..core import tape as _tape
from ..core.record import apply
from ..core.state import state
from ..core.tensor_base import TensorBase, like, scalar_to
from . import _args, conversion as _conversion, pointwise as _pointwise, shape as _shape
from .inplace import _inplace, _shape_error
from .public import public, public_copy
from .rules import indexing as I, pointwise as E, reductions as R


@public(function=False)
def unfold(input, dimension, size, step):
    """Tensor.unfold: every window of `size` along `dimension`, `step` apart, as a new
    last dim: out[..., i, ..., j] = x[..., i * step + j, ...]. A view of x's storage
    (as_strided), as torch's: writes through it reach x, and the gradient adds back into
    the viewed positions. An index_select copy when x's strides are not all positive
    (an empty or expanded x)."""
    x = _args._tensor(input, "unfold")
    nd = x._data.ndim
    d = _args._dim(dimension, nd)
    n = x._data.shape[d] if nd else 1
    size, step = int(size), int(step)
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return _shape.reshape(x, (1,))
    k = (n - size) // step + 1
    where_x = I.storage_of(x._data)[2]  # x's elements' places in its storage
    strides = [int(np.diff(where_x, axis=j).flat[0]) if m > 1 else 1
               for j, m in enumerate(where_x.shape)]
    if 0 not in where_x.shape and all(st > 0 for st in strides):  # a view, as torch's
        shape = tuple(x._data.shape)
        return as_strided(x, shape[:d] + (k,) + shape[d + 1:] + (size,),
                          strides[:d] + [strides[d] * step] + strides[d + 1:] + [strides[d]])
    idx = (np.arange(k)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    y = index_select(x, d, _args._int64(x, idx))
    shape = tuple(x._data.shape)
    y = _shape.reshape(y, shape[:d] + (k, size) + shape[d + 1:])
    return _shape.movedim(y, d + 1, -1)


@public(out=("disjoint", "exact", "dense"))
def take(input, index):
    """The elements at flat positions `index` (a tensor of any shape, of its shape):
    x.flatten()[index]; negative positions count from the end, as torch's."""
    x = _args._tensor(input, "take")
    if not isinstance(index, TensorBase):
        raise TypeError(f"take(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_dt.torch_name(idx.dtype)}")
    n = x._data.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    flat = index_select(_shape.reshape(x, (-1,)), 0, _args._int64(x, np.where(idx < 0, idx + n, idx)
                                                        .reshape(-1)))
    return _shape.reshape(flat, idx.shape)


def _index_mask(name, x, dim, index):
    """(dim, a bool array of x's shape: True in the slices `index` picks along dim)."""
    d = _args._dim(dim, x._data.ndim)
    idx = index._data if isinstance(index, TensorBase) else np.asarray(index)
    if idx.dtype != np.int64:
        raise IndexError(f"{name}(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise (RuntimeError("Index has to be a vector/scalar") if name == "index_fill_" else
               IndexError(f"{name}(): Index is supposed to be a vector"))
    idx = idx.reshape(-1)
    n = x._data.shape[d] if x._data.ndim else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    hit = np.zeros(n, dtype=bool)
    hit[idx] = True
    shape = [1] * x._data.ndim
    if shape:
        shape[d] = n
    return d, np.broadcast_to(hit.reshape(shape), x._data.shape), idx % max(n, 1)


@public
def index_fill(input, dim, index, value):
    """x with the slices `index` along dim set to `value` (a number or a 0-d tensor):
    where(picked, value, x); the gradient of x is 0 in the filled slices."""
    x = _args._tensor(input, "index_fill")
    if isinstance(value, TensorBase):
        if value._data.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                             f"tensor with {value._data.ndim} dimension(s).")
        if value._data.dtype != x._data.dtype:
            value = value.to(x._data.dtype)
    _, mask, _ = _index_mask("index_fill_", x, dim, index)
    out = _pointwise.where(like(x, mask), value, x)
    return out if out._data.dtype == x._data.dtype else out.to(x._data.dtype)


@public
def index_copy(input, dim, index, source):
    """x with the slices `index` along dim replaced by source's slices: the picked slices
    zeroed (index_fill), then source added in (index_add). Repeated indices: the copies
    add up here; torch leaves which one wins undefined."""
    x = _args._tensor(input, "index_copy")
    s = _args._tensor(source, "index_copy")
    if s._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_dt.torch_name(x._data.dtype)} and (source) "
                           f"{_dt.torch_name(s._data.dtype)}")
    d, mask, idx = _index_mask("index_copy_", x, dim, index)
    want = tuple(x._data.shape[:d]) + (idx.size,) + tuple(x._data.shape[d + 1:])
    if x._data.ndim and tuple(s._data.shape) != want:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {want}, source slice shape: "
                           f"{tuple(s._data.shape)}")
    if x._data.ndim == 0:
        return _pointwise.where(like(x, mask), _shape.reshape(s, ()), x)
    zeroed = _pointwise.where(like(x, mask), like(x, np.zeros((), x._data.dtype)), x)
    return index_add(zeroed, d, _args._int64(x, idx), s)


@public
def masked_scatter(input, mask, source):
    """x with its masked positions (row-major order) taking source's first elements in
    order: where(mask, source.flatten()[k], x), k counting the True positions."""
    x = _args._tensor(input, "masked_scatter")
    s = _args._tensor(source, "masked_scatter")
    m = mask._data if isinstance(mask, TensorBase) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_dt.torch_name(m.dtype)}")
    if s._data.dtype != x._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_dt.torch_name(x._data.dtype)} and "
                           f"{_dt.torch_name(s._data.dtype)}")
    shape = np.broadcast_shapes(m.shape, x._data.shape)
    if shape != tuple(x._data.shape):
        x = _shape.expand(x, shape)
    m = np.broadcast_to(m, shape)
    k = np.cumsum(m.reshape(-1)) - 1
    if int(m.sum()) > s._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if s._data.size == 0:
        return _pointwise.where(like(x, m), like(x, np.zeros((), x._data.dtype)), x)
    picked = index_select(_shape.reshape(s, (-1,)), 0, _args._int64(x, np.maximum(k, 0)))
    return _pointwise.where(like(x, m), _shape.reshape(picked, shape), x)


# ---- in place: the out-of-place function's result written into self (ops/inplace.py) --
def _grads(*xs):
    return tuple(x for x in xs if isinstance(x, TensorBase))


@public(function=False)
def index_fill_(self, dim, index, value):
    return _inplace(self, lambda x: index_fill(x, dim, index, value), _grads(value),
                    needs_old=False)


@public(function=False)
def index_copy_(self, dim, index, source):
    return _inplace(self, lambda x: index_copy(x, dim, index, source), _grads(source),
                    needs_old=False)


@public(function=False)
def masked_scatter_(self, mask, source):
    return _inplace(self, lambda x: masked_scatter(x, mask, source), _grads(source),
                    needs_old=False)


@public(method=False)
def combinations(input, r=2, with_replacement=False):
    """Every length-r combination of a 1-D tensor's elements, one per row (itertools'
    order), by one index_select."""
    x = _args._tensor(input, "combinations")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return like(x, np.zeros((0,), x._data.dtype))
    make = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(make(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    flat = index_select(x, 0, like(x, idx.reshape(-1)))
    return _shape.reshape(flat, idx.shape)


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


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


@public
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """out = input, then each src element reduced into out[index] along dim (sum, prod,
    mean, amax, amin); include_self=False leaves input's own value out where something is
    scattered. Gradients as torch's (prod with a zero in src: first order only)."""
    x, s = _args._tensor(input, "scatter_reduce"), _args._tensor(src, "scatter_reduce", "src", 4)
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if not isinstance(index, TensorBase) or index._data.dtype.kind not in "iu":
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if s._data.dtype != x._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    squeeze = x.ndim == 0
    if squeeze:  # a 0-d self: a 1-element vector, then back
        x, s = _shape.reshape(x, (1,)), _shape.reshape(s, (-1,))
        index = like(index, index._data.reshape(-1))
    d = _args._dim(dim, x.ndim)
    # scatter_add checks the index (dims, range, shape against self and src) as torch's
    # scatter family does, and is the sum itself
    total = scatter_add(x, d, index, s)
    idx = index._data.astype(np.int64)
    tgt = _targets(idx, d)
    part = tuple(slice(0, n) for n in idx.shape)
    hit = np.zeros(x.shape, bool)
    hit[tgt] = True
    counts = np.zeros(x.shape, np.int64)
    np.add.at(counts, tgt, 1)
    xa, sa = x._data, s._data[part]
    if reduce == "prod" and x._data.dtype.kind == "f" and state.grad_enabled and (
            x._rg or s._rg) and (sa == 0).any():
        out = _prod_zeros(x, s[part] if s._data.shape != idx.shape else s, include_self, tgt,
                          hit, _reduce_numpy(xa, idx, sa, d, reduce, include_self, tgt, hit,
                                             counts))
    elif x._data.dtype.kind != "f" or (reduce == "prod" and (sa == 0).any()):
        out = like(x, _reduce_numpy(xa, idx, sa, d, reduce, include_self, tgt, hit, counts))
    elif reduce == "prod":
        out = _prod(x, s, d, index, include_self, idx, tgt, part, hit, counts)
    else:
        out = _differentiable(x, s, d, index, reduce, include_self, total, idx, tgt, part,
                              hit, counts)
    return _shape.reshape(out, ()) if squeeze else out


def _valued(expr, exact, x):
    """expr's gradient with the value `exact` (the product in torch's order): expr - expr
    + exact where both are finite; expr itself elsewhere (inf - inf would be nan)."""
    out = _pointwise.add(_pointwise.sub(expr, like(x, expr._data)), like(x, exact))
    fine = np.isfinite(expr._data) & np.isfinite(exact)
    return out if fine.all() else _pointwise.where(like(x, fine), out, expr)


def _prod(x, s, d, index, include_self, idx, tgt, part, hit, counts):
    exact = _reduce_numpy(x._data, idx, s._data[part], d, "prod", include_self, tgt, hit,
                          counts)
    s_part = s[part] if s._data.shape != idx.shape else s
    logs = scatter_add(like(x, np.zeros(x.shape, x._data.dtype)), d, index,
                         _pointwise.log(_pointwise.abs(s_part)))
    sign = np.ones(x.shape, x._data.dtype)
    np.multiply.at(sign, tgt, np.sign(s._data[part]))
    base = x if include_self else _pointwise.where(like(x, hit), like(x, np.ones((), x._data.dtype)), x)
    expr = _pointwise.mul(base, _pointwise.mul(_pointwise.exp(logs), like(x, sign)))
    return _valued(expr, exact, x)


def _prod_zeros(x, s_part, include_self, tgt, hit, exact):
    """prod with a zero in src: (self, or 1 where include_self=False drops it) times the
    product of each target's src (its rule divides only by nonzero src); the value is
    the sequential product."""
    prods = apply(I.scatter_prod, s_part, shape=x.shape, targets=tgt)
    base = x if include_self else _pointwise.where(like(x, hit), like(x, np.ones((), x._data.dtype)), x)
    expr = _pointwise.mul(base, prods)
    return _valued(expr, exact, x)


def _differentiable(x, s, d, index, reduce, include_self, total, idx, tgt, part, hit,
                    counts):
    zero = like(x, np.zeros((), x._data.dtype))
    drop = like(x, hit & (not include_self))  # self's values left out of the reduction
    if reduce in ("sum", "mean"):
        out = total if include_self else scatter_add(_pointwise.where(drop, zero, x), d, index, s)
        if reduce == "mean":
            n = counts + (1 if include_self else 0)
            out = _pointwise.div(out, like(x, np.maximum(n, 1).astype(x._data.dtype)))
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
    summed = scatter_add(_pointwise.where(like(x, self_is), x, zero), d, index,
                           _pointwise.where(like(x, src_is), s_part, zero))
    out = _pointwise.div(summed, like(x, np.maximum(n, 1).astype(x._data.dtype)))
    if (n != k).any():  # the dropped shares' value, as a constant: out's value stays res
        with np.errstate(all="ignore"):
            out = _pointwise.add(out, like(x, np.where(n != k, res * (n - k) / np.maximum(n, 1), 0)
                                  .astype(x._data.dtype)))
    # no contribution equals the result only when it is nan
    return _pointwise.where(like(x, n == 0), like(x, res), out) if (n == 0).any() else out


@public(function=False)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """scatter_reduce in place."""
    return _inplace(self, lambda x: scatter_reduce(x, dim, index, src, reduce,
                                                   include_self=include_self),
                    (src,) if isinstance(src, TensorBase) else ())


@public(function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal (all indices equal) set to fill_value, in place; a tall matrix
    with wrap=True starts again every n + 1 rows (numpy.fill_diagonal's rule is torch's)."""
    x = _args._tensor(self, "fill_diagonal_")
    if x.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(x.shape, bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    value = fill_value._data.item() if isinstance(fill_value, TensorBase) else fill_value
    value = like(x, np.asarray(value, dtype=x._data.dtype))
    if x._rg and x.grad_fn is None and state.grad_enabled:  # torch writes through a view
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return _inplace(x, lambda t: _pointwise.where(like(t, mask), value, t), ())


@public
def as_strided(input, size, stride, storage_offset=None):
    """The storage elements at storage_offset + sum(i_k * stride_k), in the given size.
    The storage is input's, as torch's: its own memory when contiguous, else the
    contiguous array it is a view of (a transpose, a slice), and storage_offset defaults
    to input's offset in it. A view, as torch's: writes through it reach input (and its
    base). The gradient adds into the input element each output element views
    (overlapping windows add, as torch's as_strided backward does); storage elements
    outside input are constants."""
    x = _args._tensor(input, "as_strided")
    size, stride = [int(v) for v in size], [int(v) for v in stride]
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(v < 0 for v in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {stride}")
    store, own_off, where_x = I.storage_of(x._data)
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
    owner = np.full(n, -1, np.int64)  # storage position -> x's row-major element (or -1)
    owner[where_x.reshape(-1)] = np.arange(x._data.size, dtype=np.int64)
    return apply(I.as_strided, x, size=tuple(size), stride=tuple(stride), offset=off,
                 pick=owner[pos])


_ndarray = np.ndarray


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
        a = _index_array(np.asarray([_unwrap(v) for v in k] if isinstance(k, list) else k))
        # Python numbers alone (`v[:, [-1]]`): a constant of a tg.compile capture
        return _tape.const(a) if _python_only(k) else a
    if isinstance(k, _ndarray):
        return _index_array(k)
    if isinstance(k, np.bool_):
        return bool(k)
    if isinstance(k, slice):
        return k
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(k).__name__})")


def _python_only(k):
    """A range, or a list (nested) holding no tensor or array."""
    return not isinstance(k, list) or all(
        _python_only(v) if isinstance(v, list) else not isinstance(v, (TensorBase, _ndarray))
        for v in k)


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
        return _inplace(x, compute, others, needs_old=True, fast=fast,
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


@public
def index_put_(input, indices, values, accumulate=False):
    return _write(input, tuple(indices), values, bool(accumulate), "index_put_")


@public
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


def _as_vector(t):
    """A 0-d tensor as a one-element vector (anything else unchanged)."""
    return _shape.reshape(t, (1,)) if isinstance(t, TensorBase) and t._data.ndim == 0 else t


@public(out=("disjoint", "exact"))
def gather(input, dim, index, *, sparse_grad=False):
    """out[i][j] = input[index[i][j]][j] (dim 0); backward scatter-adds g."""
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    if isinstance(index, TensorBase) and index._data.size == 0:
        # torch skips every check for an empty index (any dtype, any number of dims)
        flat = _shape.reshape(x, (-1,))
        empty = apply(I.gather, flat, axis=0, index=np.zeros(0, np.int64))
        return _shape.reshape(empty, index._data.shape)
    idx = _check_index("gather", x, d, index)
    _check_corner("gather", x, d, idx, x._data.shape, "self")
    if x._data.ndim == 0 or idx.ndim == 0:
        x1, i1 = _as_1d(x, idx)
        return _shape.reshape(apply(I.gather, x1, axis=0, index=i1), idx.shape)
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


@public
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """out = input, then out[index[i][j]][j] = src[i][j] (dim 0)."""
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    if x._data.ndim == 0:  # a 0-d self is a one-element vector (torch)
        s1 = _as_vector(src)
        return _shape.reshape(scatter(_shape.reshape(x, (1,)), 0, _as_vector(index), s1,
                                      value, reduce=reduce), ())
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


@public
def scatter_add(input, dim, index, src):
    """out = input, then out[index[i][j]][j] += src[i][j] (dim 0), repeats adding up."""
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    if x._data.ndim == 0:  # a 0-d self is a one-element vector (torch)
        return _shape.reshape(scatter_add(_shape.reshape(x, (1,)), 0, _as_vector(index),
                                          _as_vector(src)), ())
    idx = _check_index("scatter_add", x, d, index)
    s = _src(src, None, x)
    _check_corner("scatter_add", x, d, idx, x._data.shape, "self")
    if idx.ndim == 0:  # one position, as scatter's 0-d index
        idx = idx.reshape(1)
        s = _shape.reshape(s, (1,)) if s._data.ndim == 0 else s
    _check_corner("scatter_add", x, -1, idx, s._data.shape, "src")
    return apply(I.scatter_add, x, s, axis=d, index=idx)


def _index_1d(name, index):
    idx = index._data if isinstance(index, TensorBase) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    # (a 1-D index as it is: the same array a tg.compile capture knows, not a new view)
    return idx if idx.ndim == 1 else idx.reshape(-1)


@public(out=("disjoint", "exact", "dense"))
def index_select(input, dim, index):
    """Rows (along dim) picked by a 1-D index; backward adds g into the picked rows."""
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    idx = _index_1d("index_select", index)
    n = x._data.shape[d] if x._data.ndim else 1
    # NOTE: no negative indices (PyTorch raises where NumPy would count from the end)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise IndexError(f"index out of range in self (index {bad}, dimension {d} with "
                         f"size {n})")
    if x._data.ndim == 0:
        return _shape.reshape(apply(I.index_select, x.reshape(1), axis=0, index=idx), ())
    return apply(I.index_select, x, axis=d, index=idx)


@public
def index_add(input, dim, index, source, *, alpha=1):
    """out = input, then out[index[i]] += alpha * source[i] along dim (repeats add up)."""
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    idx = _index_1d("index_add", index)
    s = _args._tensor(source)
    if s._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_add_(): self ({_dt.name(x._data.dtype)}) and source "
                           f"({_dt.name(s._data.dtype)}) "
                           "must have the same scalar type")
    ss = s._data.shape
    if x._data.ndim == 0 and s._data.ndim == 0 and idx.size == 1:
        # 0-d self and source: one-element vectors (torch's slice shapes are both empty)
        out = index_add(_shape.reshape(x, (1,)), 0, index, _shape.reshape(s, (1,)), alpha=alpha)
        return _shape.reshape(out, ())
    if x._data.ndim != s._data.ndim:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x._data.shape)} "
                           f"source.shape = {list(ss)}")
    want = x._data.shape[:d] + (idx.size,) + x._data.shape[d + 1:]
    if ss != want:
        raise RuntimeError(f"index_add_(): Source/destination tensor must have same slice "
                           f"shapes. Destination shape {tuple(x._data.shape)}, source shape "
                           f"{tuple(ss)}, index size {idx.size} along dim {d}")
    n = x._data.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if x._data.dtype.kind in "iu" and type(alpha) is int:  # wrapped or refused as torch
        alpha = scalar_to(alpha, x._data.dtype)
    return apply(I.index_add, x, s, axis=d, index=idx, alpha=alpha)


@public
def masked_fill(input, mask, value):
    """where(mask, value, input): value is a number or a 0-d tensor (which gets the sum
    of g over the filled positions)."""
    x = _args._tensor(input)
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
    if not isinstance(value, TensorBase):
        scalar_to(value, x._data.dtype)     # torch's refusal of a value the dtype cannot hold
    return apply(I.masked_fill, x, value, mask=m)


@public(out=("disjoint", "exact"))
def masked_select(input, mask):
    """The elements where mask is True, as a 1-D tensor (input and mask broadcast)."""
    x = _args._tensor(input)
    m = mask._data if isinstance(mask, TensorBase) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask (got {m.dtype})")
    try:
        shape = np.broadcast_shapes(m.shape, x._data.shape)
    except ValueError:
        raise RuntimeError(f"masked_select: the shapes of input {tuple(x._data.shape)} and "
                           f"mask {tuple(m.shape)} cannot be broadcast together") from None
    if x._data.shape != shape:
        x = _shape.expand(x, shape)
    if m.shape != shape:
        m = np.broadcast_to(m, shape)
    return apply(I.getitem, x, key=m)


@public
def take_along_dim(input, indices, dim=None):
    """np.take_along_axis: input and indices broadcast except along dim; dim=None reads
    the flattened input."""
    x = _args._tensor(input)
    idx = indices._data if isinstance(indices, TensorBase) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{idx.dtype}")
    idx = idx.astype(np.int64, copy=False)
    if dim is None:
        return gather(_shape.reshape(x, (-1,)), 0, idx.reshape(-1))
    nd = x._data.ndim
    d = _args._dim(dim, nd)
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
        x = _shape.expand(x, tuple(bx))
    if tuple(bi) != idx.shape:
        idx = np.broadcast_to(idx, tuple(bi))
    idx = np.where(idx < 0, idx + x._data.shape[d], idx)  # NumPy-style negative indices
    return gather(x, d, idx)


@public
def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Repeat each element (along dim; of the flattened input if dim is None) `repeats`
    times: an index_select with index np.repeat(arange(n), repeats), so the backward
    sums the gradient of the copies."""
    x = _args._tensor(input)
    if dim is None:
        x = _shape.reshape(x, (-1,))
        dim = 0
    d = _args._dim(dim, x._data.ndim)
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
        x = _shape.reshape(x, (1,))
    return apply(I.index_select, x, axis=d, index=idx)


# ---- integer helpers (no gradient) -----------------------------------------------------
def one_hot(tensor, num_classes=-1):
    """(..., ) int64 class indices -> (..., num_classes) int64 0/1."""
    x = _args._tensor(tensor, "one_hot")
    t = x._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        _tape.data_read("one_hot(num_classes=-1): the class count read from the values")
        num_classes = int(t.max()) + 1
    # (through tape.host: a tg.compile replay makes it, and checks the classes, again)
    return _args._int64(x, _tape.host(_one_hot, t, int(num_classes)))


def _one_hot(t, num_classes):
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(t.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, t[..., None], 1, axis=-1)
    return out


@public
def nonzero(input, *, as_tuple=False):
    x = _args._tensor(input)
    a = x._data
    if as_tuple:
        if a.ndim == 0:
            a = a.reshape(1)
        return tuple(_args._int64(x, i) for i in np.nonzero(a))
    return _args._int64(x, np.argwhere(a))


@public
def argwhere(input):
    return nonzero(input)


@public
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero with a fixed number of rows: the first `size` indices, padded with rows
    of `fill_value` when there are fewer."""
    x = _args._tensor(input, "nonzero_static")
    if int(size) < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(x._data)[:int(size)]
    pad = np.full((int(size) - len(found), found.shape[1]), fill_value, np.int64)
    return _args._int64(x, np.concatenate([found, pad]))


# ---- in-place forms (the in-place machinery of ops/inplace.py rebases the history) ----
def _inplace_form(fn, name):
    def f(self, *args, **kwargs):
        others = tuple(a for a in list(args) + list(kwargs.values())
                       if isinstance(a, TensorBase) and a._data.dtype.kind == "f")
        return _inplace(self, lambda old: fn(old, *args, **kwargs), others,
                                needs_old=False, casting="unsafe")
    f.__name__ = name
    f.__doc__ = f"In-place {fn.__name__}: same table entry, the result written into self."
    return f


scatter_ = public(_inplace_form(scatter, "scatter_"), name="scatter_", function=False)
scatter_add_ = public(_inplace_form(scatter_add, "scatter_add_"),
                      name="scatter_add_", function=False)
index_add_ = public(_inplace_form(index_add, "index_add_"), name="index_add_", function=False)


@public(function=False)
def masked_fill_(self, mask, value):
    m = mask._data if isinstance(mask, TensorBase) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                           f"dtype {m.dtype}")
    try:
        np.broadcast_to(m, self._data.shape)
    except ValueError:
        raise _shape_error(self._data.shape, np.broadcast_shapes(m.shape, self._data.shape)) \
            from None
    if isinstance(value, TensorBase) and value._data.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    v = value if isinstance(value, TensorBase) else (
        value.item() if isinstance(value, np.generic) else value)
    others = (v,) if isinstance(v, TensorBase) else ()

    def compute(x):
        vv = v
        if isinstance(vv, TensorBase) and vv._data.dtype != x._data.dtype:
            vv = vv.to(x._data.dtype)
        # (m broadcasts to x's shape, checked above: the result has x's shape; m as it is,
        # the array a tg.compile capture knows, not a new broadcast view of it)
        return apply(E.where, m, vv, x)

    return _inplace(self, compute, others, needs_old=False, casting="unsafe")


# the copying twins of the strided views (torch.unfold_copy, torch.as_strided_copy)
unfold_copy = public_copy(unfold)
as_strided_copy = public_copy(as_strided)


# ---- unravel_index ---------------------------------------------------------------------------
@public(method=False)
def unravel_index(indices, shape):
    """Flat indices -> one coordinate tensor per dim of `shape` (int64, indices' shape),
    torch's formula: (indices // the row-major strides) % shape (so out-of-range and
    negative indices wrap)."""
    x = _args._tensor(indices, "unravel_index", "indices")
    if x._data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"tapegrad.{_dt.as_dtype(x._data.dtype).name}")
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for s in shape:
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    shape = tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs, acc = [], 1
    for s in reversed(shape):
        coefs.append(acc)
        acc *= s
    coefs = np.array(coefs[::-1], dtype=np.int64)
    sizes = np.array(shape, dtype=np.int64)
    a = x._data.astype(np.int64)[..., None]
    if (sizes == 0).any() and a.size:
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore"):
        res = np.floor_divide(a, coefs) % np.where(sizes == 0, 1, sizes)
    return tuple(_args._int64(x, res[..., k]) for k in range(len(shape)))


# ---- the *_scatter ops: input's copy with a view of it overwritten by src ----------------------
# Each is clone + the view + copy_ (the one in-place mechanism): src's gradient is the
# view of g, input's is g with the view zeroed, and every order of derivative follows.
def _clone_keeping_strides(x):
    """torch's clone (preserve_format): a dense permuted input (a transpose) keeps its
    dim order in memory, so a storage view of the copy (as_strided) sees torch's layout."""
    a = x._data
    if a.ndim < 2 or a.flags.c_contiguous or 0 in a.shape:
        return _conversion.clone(x)
    order = sorted(range(a.ndim), key=lambda i: -a.strides[i])  # outermost dim first
    expect, dense = a.dtype.itemsize, True
    for i in reversed(order):
        dense = dense and (a.shape[i] == 1 or a.strides[i] == expect)
        expect *= a.shape[i]
    if not dense:  # torch's clone is then row-major too
        return _conversion.clone(x)
    base = _conversion.clone(_shape.permute(x, order))
    return _shape.permute(base, [order.index(i) for i in range(a.ndim)])


def _scatter_into(name, input, src, view_of, keep_strides=False):
    x = _args._tensor(input, name)
    s = _args._tensor(src, name, "src", 2)
    out = _clone_keeping_strides(x) if keep_strides else _conversion.clone(x)
    view = view_of(out)
    if tuple(s._data.shape) != tuple(view._data.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self ({name}). "
                           f"src size = {list(s._data.shape)}, slice size = "
                           f"{list(view._data.shape)}")
    _pointwise.copy_(view, s)
    return out


@public
def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src."""
    return _scatter_into("select_scatter", input, src, lambda t: _shape.select(t, dim, index))


@public
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with the slice start:end:step along dim replaced by src."""
    def view_of(t):
        d = _args._dim(dim, t._data.ndim)
        if int(step) <= 0:
            raise RuntimeError("slice step must be positive")
        return getitem(t, (slice(None),) * d + (slice(start, end, step),))
    return _scatter_into("slice_scatter", input, src, view_of)


@public
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    return _scatter_into("diagonal_scatter", input, src,
                         lambda t: _shape.diagonal(t, offset, dim1, dim2))


@public
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input (as a contiguous copy) with the elements its as_strided(size, stride,
    storage_offset) view reaches replaced by src."""
    return _scatter_into("as_strided_scatter", input, src,
                         lambda t: as_strided(t, size, stride, storage_offset), True)


# ---- put, index_reduce -----------------------------------------------------------------------
@public
def put(input, index, source, accumulate=False):
    """input with input.flatten()[index] = source.flatten() (added with accumulate)."""
    x = _args._tensor(input, "put")
    s = _args._tensor(source, "put", "source", 3)
    if not isinstance(index, TensorBase) or index._data.dtype != np.int64:
        dt = _dt.torch_name(index._data.dtype) if isinstance(index, TensorBase) else "?"
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {dt}")
    if s._data.dtype != x._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_dt.torch_name(x._data.dtype)} and source.dtype = "
                           f"{_dt.torch_name(s._data.dtype)}")
    if index._data.size != s._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {s._data.size}, "
                           f"index.numel() = {index._data.size}")
    n = x._data.size
    idx = index._data.reshape(-1)
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        i = int(idx[bad][0])
        raise IndexError(f"out of range: tried to access index {i} on a tensor of {n} "
                         "elements.")
    if not idx.size:
        return _conversion.clone(x)
    flat = index_put(_shape.reshape(x, (-1,)), (_args._int64(x, idx % builtins.max(n, 1)),),
                     _shape.reshape(s, (-1,)), accumulate)
    return _shape.reshape(flat, tuple(x._data.shape))


@public(function=False)
def put_(self, index, source, accumulate=False):
    return _inplace(self, lambda x: put(x, index, source, accumulate), _grads(source),
                    needs_old=accumulate)


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


@public
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices reduced (prod, mean, amax, amin) into the slices
    `index` along dim: scatter_reduce with the index spread over source's shape."""
    x = _args._tensor(input, "index_reduce")
    s = _args._tensor(source, "index_reduce", "source", 4)
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if not isinstance(index, TensorBase) or index._data.dtype.kind not in "iu":
        dt = _dt.torch_name(index._data.dtype) if isinstance(index, TensorBase) else "?"
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {dt}")
    if index._data.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim}")
    if s._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_dt.torch_name(x._data.dtype)}) and source "
                           f"({_dt.torch_name(s._data.dtype)}) must have the same scalar type")
    nd = builtins.max(x._data.ndim, 1)
    d = _args._dim(dim, x._data.ndim)
    idx = index._data.reshape(-1).astype(np.int64)
    sshape = tuple(s._data.shape) if s._data.ndim else (1,)
    if sshape[d] != idx.size if d < len(sshape) else True:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal "
                           f"to source.size(dim): ({sshape[d] if d < len(sshape) else 1}), "
                           f"for dim: {d}")
    n = x._data.shape[d] if x._data.ndim else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range in self")
    view = [1] * nd
    view[d] = idx.size
    full = np.broadcast_to((idx % builtins.max(n, 1)).reshape(view), sshape)
    src = s if s._data.ndim else _shape.reshape(s, (1,))
    if (reduce == "prod" and x._data.ndim and (s._data == 0).any() and state.grad_enabled
            and (x._rg or s._rg)):
        return _index_prod_by_groups(x, d, idx % builtins.max(n, 1), src, include_self)
    out = scatter_reduce(x, d, _args._int64(x, np.ascontiguousarray(full)), src, reduce,
                         include_self=include_self)
    if reduce == "mean" and x._data.dtype == np.float16 and x._data.ndim:
        # torch adds the slices one by one in float16 and divides in float16; the
        # composition above sums in float32. Its value is moved onto torch's by a
        # constant (clamp's tensor-bound form does the same): the gradient is unchanged.
        exact = _float16_index_mean(x._data, d, idx % builtins.max(n, 1),
                                    s._data if s._data.ndim else s._data.reshape(1),
                                    include_self)
        with np.errstate(invalid="ignore"):
            fix = np.where(exact == out._data, np.float16(0), exact - out._data)
        if fix.any():
            out = out + like(x, fix.astype(np.float16))
    return out


def _index_prod_by_groups(x, d, idx, src, include_self):
    """index_reduce prod with a zero in source, differentiably: each destination slice's
    factors (itself unless include_self=False, then its sources, padded with ones) side
    by side along a new dim, multiplied by prod, whose rule is exact at zeros (as
    torch's index_reduce backward is)."""
    m, k = x._data.shape[d], idx.size
    members = [np.flatnonzero(idx == j) for j in range(m)]
    width = builtins.max(builtins.max((len(g) for g in members), default=0), 1)
    pick = np.full((m, width), k, np.int64)  # k: the row of ones appended to source
    for j, g in enumerate(members):
        pick[j, :len(g)] = g
    xs = _shape.movedim(x, d, 0)
    ss = _shape.movedim(src, d, 0)
    ones = like(x, np.ones((1,) + tuple(ss._data.shape[1:]), x._data.dtype))
    factors = index_select(_shape.cat([ss, ones], 0), 0, _args._int64(x, pick.reshape(-1)))
    factors = _shape.reshape(factors, (m, width) + tuple(xs._data.shape[1:]))
    first = xs
    if not include_self:  # a destination that receives something leaves itself out
        hit = np.array([len(g) > 0 for g in members]).reshape((m,) + (1,) * (xs.ndim - 1))
        first = _pointwise.where(like(x, hit), like(x, np.ones((), x._data.dtype)), xs)
    stacked = _shape.cat([_shape.unsqueeze(first, 1), factors], 1)
    return _shape.movedim(apply(R.prod, stacked, axis=1, keepdims=False), 0, d)


def _float16_index_mean(a, d, idx, src, include_self):
    """torch's float16 index_reduce mean: the sum accumulated in float16, slice by slice in
    index order, divided by the count in float16."""
    acc = np.moveaxis(a.copy(), d, 0)
    part = np.moveaxis(src, d, 0)
    count = np.full(acc.shape[0], 1 if include_self else 0, np.int64)
    if not include_self:
        acc[np.unique(idx)] = 0
    for k, i in enumerate(idx):
        acc[i] = acc[i] + part[k]
        count[i] += 1
    count[count == 0] = 1
    shape = (-1,) + (1,) * (acc.ndim - 1)
    return np.moveaxis(acc / count.astype(np.float16).reshape(shape), 0, d)


@public(function=False)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _inplace(self, lambda x: index_reduce(x, dim, index, source, reduce,
                                                 include_self=include_self),
                    _grads(source), needs_old=True)

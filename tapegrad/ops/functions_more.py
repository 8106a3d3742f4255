"""Differentiable functions real programs use that are compositions of existing ops:
Tensor.unfold (sliding windows), diff, take, index_fill, index_copy, masked_scatter,
quantile, nanquantile, cdist, trapezoid, std_mean, var_mean, rot90, logaddexp,
logaddexp2, kron, nansum, nanmean, frac.

No table entries of their own: each is a formula of ops that are in the table (index
selections, where, sums, products), so its derivative is its parts' and can be checked
on paper; second derivatives come for free. PyTorch's names, arguments, defaults and
error messages (tests/test_methods_more.py compares the errors with torch's).
"""
import math

import numpy as np

from .. import dtypes as _dt
from ..core.tensor_base import TensorBase, like
from . import functions as F
from . import index_functions as I
from . import linalg_functions as LF
from . import shape_functions as S
from .inplace import _inplace
from .shape_functions import _dim


def _t(x, name):
    return F._tensor(x, name)


def _long(x, arr):
    return like(x, np.asarray(arr, dtype=np.int64))


def unfold(input, dimension, size, step):
    """Tensor.unfold: every window of `size` along `dimension`, `step` apart, as a new
    last dim: out[..., i, ..., j] = x[..., i * step + j, ...]. One index_select (its
    gradient adds back into the picked positions). A copy, where torch returns a view."""
    x = _t(input, "unfold")
    nd = x._data.ndim
    d = _dim(dimension, nd)
    n = x._data.shape[d] if nd else 1
    size, step = int(size), int(step)
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return F.reshape(x, (1,))
    k = (n - size) // step + 1
    idx = (np.arange(k)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    y = I.index_select(x, d, _long(x, idx))
    shape = tuple(x._data.shape)
    y = F.reshape(y, shape[:d] + (k, size) + shape[d + 1:])
    return S.movedim(y, d + 1, -1)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """out[i] = x[i + 1] - x[i] along dim, `n` times (bool: x[i + 1] != x[i]), after
    concatenating `prepend` and `append`."""
    x = _t(input, "diff")
    if x._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dim(dim, x._data.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = S.cat([_t(p, "diff") for p in parts], d)
    for _ in range(n):
        m = x._data.shape[d]
        if m == 0:
            break
        hi, lo = S.narrow(x, d, 1, m - 1), S.narrow(x, d, 0, m - 1)
        x = F.ne(hi, lo) if x._data.dtype == np.bool_ else hi - lo
    return x


def take(input, index):
    """The elements at flat positions `index` (a tensor of any shape, of its shape):
    x.flatten()[index]; negative positions count from the end, as torch's."""
    x = _t(input, "take")
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
    flat = I.index_select(F.reshape(x, (-1,)), 0, _long(x, np.where(idx < 0, idx + n, idx)
                                                        .reshape(-1)))
    return F.reshape(flat, idx.shape)


def _index_mask(name, x, dim, index):
    """(dim, a bool array of x's shape: True in the slices `index` picks along dim)."""
    d = _dim(dim, x._data.ndim)
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


def index_fill(input, dim, index, value):
    """x with the slices `index` along dim set to `value` (a number or a 0-d tensor):
    where(picked, value, x); the gradient of x is 0 in the filled slices."""
    x = _t(input, "index_fill")
    if isinstance(value, TensorBase):
        if value._data.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                             f"tensor with {value._data.ndim} dimension(s).")
        if value._data.dtype != x._data.dtype:
            value = value.to(x._data.dtype)
    _, mask, _ = _index_mask("index_fill_", x, dim, index)
    out = F.where(like(x, mask), value, x)
    return out if out._data.dtype == x._data.dtype else out.to(x._data.dtype)


def index_copy(input, dim, index, source):
    """x with the slices `index` along dim replaced by source's slices: the picked slices
    zeroed (index_fill), then source added in (index_add). Repeated indices: the copies
    add up here; torch leaves which one wins undefined."""
    x = _t(input, "index_copy")
    s = _t(source, "index_copy")
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
        return F.where(like(x, mask), F.reshape(s, ()), x)
    zeroed = F.where(like(x, mask), like(x, np.zeros((), x._data.dtype)), x)
    return I.index_add(zeroed, d, _long(x, idx), s)


def masked_scatter(input, mask, source):
    """x with its masked positions (row-major order) taking source's first elements in
    order: where(mask, source.flatten()[k], x), k counting the True positions."""
    x = _t(input, "masked_scatter")
    s = _t(source, "masked_scatter")
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
        x = F.expand(x, shape)
    m = np.broadcast_to(m, shape)
    k = np.cumsum(m.reshape(-1)) - 1
    if int(m.sum()) > s._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if s._data.size == 0:
        return F.where(like(x, m), like(x, np.zeros((), x._data.dtype)), x)
    picked = I.index_select(F.reshape(s, (-1,)), 0, _long(x, np.maximum(k, 0)))
    return F.where(like(x, m), F.reshape(picked, shape), x)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    x = _t(input, name)
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if x._data.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if isinstance(q, TensorBase):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != x._data.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs, q_vector = q._data.astype(np.float64).reshape(-1), q._data.ndim == 1
    else:
        qs, q_vector = np.array([float(q)]), False
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        if isinstance(q, TensorBase):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {float(q)}")
    nd = x._data.ndim
    if dim is None:
        v = F.reshape(x, (-1,))
        d = 0
    else:
        d = _dim(dim, nd)
        v = S.movedim(x, d, -1) if nd else F.reshape(x, (1,))
    srt = I.sort(v, dim=-1).values  # NaN sorts last, as in torch
    nan = np.isnan(v._data)
    n = v._data.shape[-1]
    count = (n - nan.sum(-1, keepdims=True)) if ignore_nan else np.full(nan.shape[:-1] + (1,), n)
    outs = []
    for qv in qs:
        pos = qv * (np.maximum(count, 1) - 1).astype(np.float64)
        if interpolation == "lower":
            pos = np.floor(pos)
        elif interpolation == "higher":
            pos = np.ceil(pos)
        elif interpolation == "nearest":
            pos = np.round(pos)  # half to even, as torch's round
        lo = np.floor(pos).astype(np.int64)
        hi = np.ceil(pos).astype(np.int64)
        a = I.gather(srt, -1, _long(x, lo))
        b = I.gather(srt, -1, _long(x, hi))
        if interpolation == "midpoint":
            r = a + (b - a) * 0.5 if (hi != lo).any() else a
        else:
            w = like(x, (pos - lo).astype(x._data.dtype))
            r = a + w * (b - a)
        # a slice with a NaN gives NaN (quantile); a slice of NaNs only (nanquantile)
        bad = (count == 0) if ignore_nan else nan.any(-1, keepdims=True)
        if bad.any():
            r = F.where(like(x, bad), like(x, np.array(np.nan, x._data.dtype)), r)
        if dim is None:
            r = F.reshape(r, (1,) * nd if keepdim else ())
        elif keepdim:
            r = S.movedim(r, -1, d) if nd else F.reshape(r, ())
        else:
            r = F.reshape(r, tuple(x._data.shape[:d]) + tuple(x._data.shape[d + 1:]))
        outs.append(r)
    return S.stack(outs, 0) if q_vector else outs[0]


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along dim (all elements when dim is None): sorted values,
    interpolated between the two around position q * (n - 1); NaN if a slice has one."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaNs (each slice's count is its non-NaN values)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R),
    out[i, j] = ||x1[i] - x2[j]||_p (the norm of every difference: exact, where torch
    may use a matmul form for p = 2)."""
    a, b = _t(x1, "cdist"), _t(x2, "cdist")
    for t, nm in ((a, "X1"), (b, "X2")):
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {nm} got: "
                               f"{_dt.torch_name(t._data.dtype)}")
    for t, nm in ((a, "X1"), (b, "X2")):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {nm} got: "
                               f"{t._data.ndim}D")
    if a._data.shape[-1] != b._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{a._data.shape[-1]} X2: {b._data.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return LF.vector_norm(S.unsqueeze(a, -2) - S.unsqueeze(b, -3), float(p), dim=-1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: sum of (y[i] + y[i + 1]) / 2 * (x[i + 1] - x[i])
    (spacing dx, default 1, without x)."""
    yt = _t(y, "trapezoid")
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both x "
                        "and dx given")
    if yt._data.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got {dim})")
    d = _dim(dim, yt._data.ndim)
    m = yt._data.shape[d]
    if m == 0:
        return F.sum(yt, d)
    mid = (S.narrow(yt, d, 1, m - 1) + S.narrow(yt, d, 0, m - 1)) / 2
    if x is None:
        return F.sum(mid, d) * (1 if dx is None else dx)
    xt = _t(x, "trapezoid")
    if xt._data.ndim == 1:
        if xt._data.shape[0] != m:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point")
        shape = [1] * yt._data.ndim
        shape[d] = m
        xt = F.reshape(xt, tuple(shape))
    return F.sum(diff(xt, dim=d - yt._data.ndim) * mid, d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: trapezoid's older name (trapz(y, x, dim=) or trapz(y, dx=, dim=))."""
    return trapezoid(y, x, dx=dx, dim=dim)


def _stat_mean(stat):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        x = _t(input, f"{stat.__name__}_mean")
        s = stat(x, dim, unbiased, keepdim, correction=correction)
        return s, F.mean(x, dim, keepdim)
    f.__name__ = f"{stat.__name__}_mean"
    f.__doc__ = f"({stat.__name__}, mean) over dim, as two tensors."
    return f


std_mean = _stat_mean(F.std)
var_mean = _stat_mean(F.var)


def rot90(input, k=1, dims=(0, 1)):
    """Rotation by 90 degrees k times in the plane of dims (from dims[0] toward dims[1]):
    flips and a transpose."""
    x = _t(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = x._data.ndim
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _dim(dims[0], nd), _dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k = k % 4
    if k == 1:
        return F.transpose(S.flip(x, d1), d0, d1)
    if k == 2:
        return S.flip(x, d0, d1)
    if k == 3:
        return S.flip(F.transpose(x, d0, d1), d1)
    return F.reshape(x, tuple(x._data.shape))  # a new tensor (torch: a clone)


def logaddexp(input, other):
    """log(exp(a) + exp(b)) = max(a, b) + log1p(exp(-|a - b|)), which never overflows;
    derivative exp(a) / (exp(a) + exp(b)) = sigmoid(a - b) (1/2 each at a tie: maximum's
    and abs's subgradients at 0 give exactly that)."""
    return _logaddexp("logaddexp", input, other, None)


def logaddexp2(input, other):
    """log2(2**a + 2**b) = max(a, b) + log2(1 + 2**-|a - b|)."""
    return _logaddexp("logaddexp2", input, other, math.log(2.0))


def _logaddexp(name, input, other, ln2):
    a = _t(input, name)
    if not isinstance(other, TensorBase):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if a._data.dtype.kind != "f" or other._data.dtype.kind != "f":
        a, other = a.to(_dt.get_default_dtype()) if a._data.dtype.kind != "f" else a, (
            other.to(_dt.get_default_dtype()) if other._data.dtype.kind != "f" else other)
    m = F.maximum(a, other)
    d = -F.abs(a - other)
    out = m + (F.log1p(F.exp(d)) if ln2 is None else F.log1p(F.exp(d * ln2)) / ln2)
    # both -inf (or both +inf): torch gives that infinity, the formula inf - inf = nan
    same_inf = np.isinf(a._data) & (a._data == other._data)
    if same_inf.any():
        out = F.where(like(a, same_inf), m, out)
    return out


def kron(input, other):
    """The Kronecker product: out[i*B + k] = a[i] * b[k] in every dim (the shorter shape
    padded with leading 1s); one broadcast product and a reshape."""
    a, b = _t(input, "kron"), _t(other, "kron")
    nd = max(a._data.ndim, b._data.ndim)
    sa = (1,) * (nd - a._data.ndim) + tuple(a._data.shape)
    sb = (1,) * (nd - b._data.ndim) + tuple(b._data.shape)
    ea = F.reshape(a, tuple(v for s in sa for v in (s, 1)))
    eb = F.reshape(b, tuple(v for s in sb for v in (1, s)))
    return F.reshape(ea * eb, tuple(x * y for x, y in zip(sa, sb)))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs counted as 0 (their gradient is 0)."""
    x = _t(input, "nansum")
    if x._data.dtype.kind == "f":
        nan = np.isnan(x._data)
        if nan.any():
            x = F.where(like(x, nan), like(x, np.zeros((), x._data.dtype)), x)
    return F.sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values: nansum / their count (NaN where there are none)."""
    x = _t(input, "nanmean")
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_dt.torch_name(x._data.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    axes = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else dim)
    count = np.sum(~np.isnan(x._data), axis=None if axes is None else tuple(
        _dim(a, x._data.ndim) for a in (axes if isinstance(axes, tuple) else (axes,))),
        keepdims=keepdim)
    return nansum(x, dim, keepdim) / like(x, np.asarray(count, dtype=x._data.dtype))


def frac(input):
    """x - trunc(x) (the sign of x kept); derivative 1."""
    x = _t(input, "frac")
    if x._data.dtype.kind != "f":
        raise NotImplementedError(
            f"\"frac_cpu\" not implemented for '{_dt.torch_name(x._data.dtype)}'")
    return x - F.trunc(x)


# ---- in place: the out-of-place function's result written into self (ops/inplace.py) --
def _grads(*xs):
    return tuple(x for x in xs if isinstance(x, TensorBase))


def index_fill_(self, dim, index, value):
    return _inplace(self, lambda x: index_fill(x, dim, index, value), _grads(value),
                    needs_old=False)


def index_copy_(self, dim, index, source):
    return _inplace(self, lambda x: index_copy(x, dim, index, source), _grads(source),
                    needs_old=False)


def masked_scatter_(self, mask, source):
    return _inplace(self, lambda x: masked_scatter(x, mask, source), _grads(source),
                    needs_old=False)


def frac_(self):
    return _inplace(self, frac, (), needs_old=True)

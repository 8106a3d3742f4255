"""Reductions (torch's "Reduction Ops") and cumulative ops: sum, mean, prod, max/min,
var/std, logsumexp, median/quantile, histograms, cumsum/cumprod/cummax/cummin,
softmax/log_softmax. Derivatives: rules/reductions.py, rules/softmax.py."""
import builtins

import numpy as np

from .. import dtypes as _dt
from ..core.record import apply, apply_saved
from ..core.tensor_base import TensorBase, like
from . import (_args, comparison as _comparison, conversion as _conversion, indexing as _indexing,
               pointwise as _pointwise, shape as _shape, sorting as _sorting)
from .public import public, public_inplace
from .return_types import structseq
from .rules import indexing as IX, reductions as R, softmax as SM


def _logical_reduction(name, np_fn):
    def f(input, dim=None, keepdim=False):
        x = _args._tensor(input, name)
        d = _args._dims(dim)
        _check_dims(name, x, d)
        out = np.asarray(np_fn(x._data, axis=d, keepdims=bool(keepdim)))
        if x._data.dtype == np.uint8:  # torch keeps uint8 (0 / 1)
            out = out.astype(np.uint8)
        return like(x, out)
    f.__name__ = name
    f.__doc__ = f"torch.{name}: a bool tensor (uint8 for a uint8 input; no gradient)."
    return f


@public(out=True)
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along dim (bool/int tensors sum to int64, as PyTorch)."""
    x = _args._tensor(input, "cumsum")
    if dtype is not None:
        if _dt.as_dtype(dtype) == np.bool_:
            raise NotImplementedError('"cumsum_out_cpu" not implemented for \'Bool\'')
        x = x.to(dtype)
    elif x._data.dtype.kind in "biu":
        x = x.to(_dt.int64)
    _check_dims("cumsum", x, int(dim))
    d = int(dim) % builtins.max(x._data.ndim, 1)
    res = apply(R.cumsum, x, axis=d)
    return res if dtype is None else _keep_dtype(res, x)


all = public(_logical_reduction("all", np.all), name="all")
any = public(_logical_reduction("any", np.any), name="any")
_UNSET = object()


def _np_alias(name, value, alias, alias_name, default):
    """torch accepts NumPy's names `axis` / `keepdims` for `dim` / `keepdim` (its
    argument parser's aliases); giving both is its TypeError."""
    if alias is _UNSET:
        return value
    if value is not default:
        raise TypeError(f"{name}() got an unexpected keyword argument '{alias_name}'")
    return alias


def _reduction(op):
    def f(input, dim=None, keepdim=False, *, dtype=None, axis=_UNSET, keepdims=_UNSET):
        x = _args._tensor(input)
        if dtype is not None:
            x = x.to(dtype)
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        d = _args._dims(dim)
        if op is R.sum and x._data.dtype.kind in "biu" and dtype is None:
            x = x.to(_dt.int64)  # PyTorch sums bool/int to int64
        elif op is R.logsumexp and x._data.dtype.kind in "biu":
            x = x.to(_dt.get_default_dtype())  # torch: integers give the default float
        _check_dims(op.name, x, d)
        if d is None and op in (R.amax, R.amin):
            _args._check_reducible(op.name, x._data.shape, None)
        if x._data.ndim == 0:  # dim 0 / -1 of a 0-d tensor is the whole tensor (torch)
            d = None
        res = apply(op, x, axis=d, keepdims=bool(keepdim))
        return res if dtype is None else _keep_dtype(res, x)
    f.__name__ = op.name
    return f


def _check_dims(name, x, d):
    if d is None:
        return
    _args._check_dim_list(name, d if isinstance(d, tuple) else (d,), x._data.ndim)
    if name in ("amax", "amin"):  # no identity: nothing to give for an empty dim
        _args._check_reducible(name, x._data.shape, d)


sum = public(_reduction(R.sum), name="sum", out=True)
mean = public(_reduction(R.mean), name="mean", out=True)
amax = public(_reduction(R.amax), name="amax", out=("exact",))
amin = public(_reduction(R.amin), name="amin", out=("exact",))
logsumexp = public(_reduction(R.logsumexp), name="logsumexp", out=True)


@public(out=True)
def prod(input, dim=None, keepdim=False, *, dtype=None, axis=_UNSET, keepdims=_UNSET):
    if axis is not _UNSET:  # NumPy's name given
        dim = _np_alias("prod", dim, axis, "axis", None)
    if keepdims is not _UNSET:  # NumPy's name given
        keepdim = _np_alias("prod", keepdim, keepdims, "keepdims", False)
    x = _args._tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    elif x._data.dtype.kind in "biu":
        x = x.to(_dt.int64)  # PyTorch multiplies bool/int to int64 (NumPy: uint8 -> uint64)
    _check_dims("prod", x, dim)
    return _keep_dtype(apply(R.prod, x, axis=dim, keepdims=bool(keepdim)), x)


def _keep_dtype(res, x):
    """NumPy's products widen bool and small integers to int64: torch keeps the
    computation dtype (dtype=torch.int32 / torch.bool give int32 / bool)."""
    if res._data.dtype != x._data.dtype and x._data.dtype.kind in "biu":
        return like(res, res._data.astype(x._data.dtype))
    return res


def _max_min(op_full, op_dim, pair):
    result = structseq(op_full.name[:3], ["values", "indices"])  # torch.return_types.max

    def f(input, dim=None, keepdim=False, *, axis=_UNSET, keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op_dim.name[:3], dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op_dim.name[:3], keepdim, keepdims, "keepdims", False)
        x = _args._tensor(input)
        if isinstance(dim, TensorBase):
            return pair(x, dim)
        if dim is None:
            if x._data.size == 0:
                raise RuntimeError(f"{op_full.name}(): Expected reduction dim to be specified "
                                   "for input.numel() == 0.")
            return apply(op_full, x, axis=None, keepdims=False)
        _check_dims(op_dim.name, x, dim)
        vals, saved = apply_saved(op_dim, x, axis=int(dim), keepdims=bool(keepdim))
        return result(vals, like(x, saved["indices"].astype(np.int64)))
    return f


max = public(_max_min(R.max_all, R.max_dim, _comparison.maximum), name="max", out=True)
min = public(_max_min(R.min_all, R.min_dim, _comparison.minimum), name="min", out=True)


def _var_std(op):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=_UNSET,
          keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        x = _args._tensor(input)
        if isinstance(dim, bool):  # legacy overload var(unbiased)
            dim, unbiased = None, dim
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        d = _args._dims(dim)
        _check_dims(op.name, x, d)
        return apply(op, x, axis=d, correction=correction, keepdims=bool(keepdim))
    f.__name__ = op.name
    return f


var = public(_var_std(R.var), name="var", out=True)
std = public(_var_std(R.std), name="std", out=True)


def _arg_reduction(op):
    def f(input, dim=None, keepdim=False, *, axis=_UNSET, keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        x = _args._tensor(input)
        if x._data.dtype == np.bool_:
            raise RuntimeError(f"{op.name}(): does not support bool input")
        if dim is None:
            out = op.forward(x._data.reshape(-1), axis=0)
            if keepdim:
                out = np.reshape(out, (1,) * x._data.ndim)
            return like(x, np.asarray(out, dtype=np.int64))
        _check_dims(op.name, x, dim)
        return like(x, op.forward(x._data, axis=int(dim), keepdims=bool(keepdim)).astype(np.int64))
    f.__name__ = op.name
    return f


argmax = public(_arg_reduction(R.argmax), name="argmax", out=True)
argmin = public(_arg_reduction(R.argmin), name="argmin", out=True)


def _along_dim(op):
    """softmax / log_softmax: one dim, an optional dtype to compute in."""
    def f(input, dim=None, dtype=None, *, axis=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if dim is None:
            raise TypeError(f"{op.name}() missing required argument 'dim'")
        x = _args._tensor(input)
        if dtype is not None:
            x = x.to(dtype)
        _check_dims(op.name, x, dim)
        return apply(op, x, axis=int(dim))
    f.__name__ = op.name
    return f


softmax = public(_along_dim(SM.softmax), name="softmax")
log_softmax = public(_along_dim(SM.log_softmax), name="log_softmax")


@public
def count_nonzero(input, dim=None):
    """The number of nonzero elements (along dim): an int64 tensor."""
    x = _args._tensor(input, "count_nonzero")
    a = x._data
    axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    return like(x, np.asarray(np.count_nonzero(a, axis=axis), dtype=np.int64))


# ---- histograms (no gradient) -------------------------------------------------------------
histogram_result = structseq("histogram", ["hist", "bin_edges"])


def _float_input(name, x, kernel):
    if x.dtype.kind != "f":
        raise RuntimeError(f'"{kernel}" not implemented for \'{_args._tname(x.dtype)}\'')


@public(out=True)
def histc(input, bins=100, min=0, max=0):
    """Counts in `bins` equal bins over [min, max] (the data's range when min == max);
    values outside are ignored, a value equal to max counts in the last bin."""
    x = _args._tensor(input, "histc")
    _float_input("histc", x, "histogram_cpu")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0, but got " + str(bins))
    a = _args._np(x).reshape(-1)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and a.size:
        finite = a[np.isfinite(a)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep = (a >= lo) & (a <= hi)
    v = a[keep]
    pos = ((v - a.dtype.type(lo)) * bins / a.dtype.type(hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)  # x == max goes into the last bin
    return like(x, np.bincount(pos, minlength=bins).astype(a.dtype))


@public
def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in a 1-d non-negative integer tensor (at least
    `minlength` bins); with `weights`, the sum of the weights per value (float32 weights
    give float32, any other dtype float64, as torch). Not differentiable: torch has no
    derivative for it either, so no graph is recorded."""
    x = _args._tensor(input, "bincount")
    a = x._data
    if a.dtype.kind == "f":
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_args._tname(a.dtype)}\'')
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    minlength = int(minlength)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return like(x, np.bincount(a, minlength=minlength).astype(np.int64))
    w = _args._np(_args._tensor(weights, "bincount"))
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
    return like(x, out.astype(np.float32 if w.dtype == np.float32 else np.float64))


@public
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges): `bins` equal bins over `range` (default the data's min..max;
    a constant input gets [v - 0.5, v + 0.5]) or the given increasing edges tensor."""
    x = _args._tensor(input, "histogram")
    _float_input("histogram", x, "histogram_cpu")
    a = _args._np(x).reshape(-1)
    if isinstance(bins, TensorBase):
        edges = _args._np(bins).astype(a.dtype)
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension")
    else:
        n = int(bins)
        if n <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got " + str(n))
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif a.size:
            lo, hi = float(a.min()), float(a.max())
        else:
            lo, hi = 0.0, 1.0  # torch: an empty input without a range gets [0, 1]
        if lo > hi:
            raise RuntimeError("torch.histogram(): max must be larger than min")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, n + 1).astype(a.dtype)
    if weight is None:
        hist, _ = np.histogram(a, bins=edges)
    else:  # torch adds the weights one by one in the input's dtype (NumPy's histogram
        # takes cumulative-sum differences, which lose float32 precision)
        w = _args._np(weight).reshape(-1).astype(a.dtype)
        idx = np.searchsorted(edges, a, side="right") - 1
        idx[a == edges[-1]] = len(edges) - 2  # the last bin is closed
        keep = (idx >= 0) & (idx < len(edges) - 1)
        hist = np.zeros(len(edges) - 1, a.dtype)
        np.add.at(hist, idx[keep], w[keep])
    hist = hist.astype(a.dtype)
    if density:
        hist = hist / (hist.sum() * np.diff(edges))
    return histogram_result(like(x, hist.astype(a.dtype)), like(x, edges))


# ---- cumprod --------------------------------------------------------------------------------
@public(out=True)
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along dim (bool/int tensors give int64, as PyTorch); the
    gradient is exact with zeros in the input."""
    x = _args._tensor(input, "cumprod")
    if dtype is not None:
        if _dt.as_dtype(dtype) == np.bool_:
            raise NotImplementedError('"cumprod_out_cpu" not implemented for \'Bool\'')
        x = x.to(dtype)
    elif x.dtype.kind in "biu":
        x = x.to(_dt.int64)
    d = _args._dim(dim, x.ndim)
    return _keep_dtype(apply(R.cumprod, x, axis=d), x)


# ---- median ---------------------------------------------------------------------------------
median_result = structseq("median", ["values", "indices"])
nanmedian_result = structseq("nanmedian", ["values", "indices"])


def _median(name, x, dim, keepdim, skip_nan):
    a = _args._np(x)
    if dim is None:
        flat = _shape.reshape(x, (-1,))
        if flat.shape[0] == 0:
            return like(x, np.array(np.nan, dtype=a.dtype))
        v, _ = _median(name, flat, 0, False, skip_nan)
        return v
    nd = x.ndim
    d = _args._dim(dim, nd)
    if nd == 0:
        x, a = _shape.reshape(x, (1,)), a.reshape(1)
    if a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    order = np.argsort(a, axis=d, kind="stable")  # NaNs sort last
    nan = np.isnan(a)
    if skip_nan:
        count = a.shape[d] - nan.sum(axis=d, keepdims=True)
        k = np.maximum(count - 1, 0) // 2  # all NaN: the first NaN
    else:
        has_nan = nan.any(axis=d, keepdims=True)
        first_nan = a.shape[d] - nan.sum(axis=d, keepdims=True)  # where the NaNs start
        k = np.where(has_nan, first_nan, (a.shape[d] - 1) // 2)
    idx = np.take_along_axis(order, k, axis=d).astype(np.int64)
    vals = apply(IX.gather, x, axis=d, index=idx)
    if not keepdim or nd == 0:
        shape = tuple(s for i, s in enumerate(idx.shape) if i != d) if nd else ()
        vals, idx = _shape.reshape(vals, shape), idx.reshape(shape)
    return vals, like(x, idx)


@public(out=True)
def median(input, dim=None, keepdim=False):
    """The lower median (of all elements: a 0-d tensor; along dim: (values, indices)).
    A slice holding NaN has median NaN. The gradient goes to the selected element."""
    x = _args._tensor(input, "median")
    if dim is None:
        return _median("median", x, None, False, False)
    return median_result(*_median("median", x, dim, keepdim, False))


@public(out=True)
def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaNs (NaN only where a slice is all NaN)."""
    x = _args._tensor(input, "nanmedian")
    if dim is None:
        return _median("nanmedian", x, None, False, True)
    return nanmedian_result(*_median("nanmedian", x, dim, keepdim, True))


@public
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """out[i] = x[i + 1] - x[i] along dim, `n` times (bool: x[i + 1] != x[i]), after
    concatenating `prepend` and `append`."""
    x = _args._tensor(input, "diff")
    if x._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _args._dim(dim, x._data.ndim)
    if n == 0:  # torch returns the input itself, ignoring prepend and append
        return x
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _shape.cat([_args._tensor(p, "diff") for p in parts], d)
    for _ in range(n):
        m = x._data.shape[d]
        if m == 0:
            break
        hi, lo = _shape.narrow(x, d, 1, m - 1), _shape.narrow(x, d, 0, m - 1)
        x = _comparison.ne(hi, lo) if x._data.dtype == np.bool_ else hi - lo
    return x


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    x = _args._tensor(input, name)
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
        v = _shape.reshape(x, (-1,))
        d = 0
    else:
        d = _args._dim(dim, nd)
        v = _shape.movedim(x, d, -1) if nd else _shape.reshape(x, (1,))
    srt = _sorting.sort(v, dim=-1).values  # NaN sorts last, as in torch
    nan = np.isnan(v._data)
    n = v._data.shape[-1]
    count = (n - nan.sum(-1, keepdims=True)) if ignore_nan else np.full(nan.shape[:-1] + (1,), n)
    outs = []
    for i, qv in enumerate(qs):
        pos = qv * (np.maximum(count, 1) - 1).astype(np.float64)
        if interpolation == "lower":
            pos = np.floor(pos)
        elif interpolation == "higher":
            pos = np.ceil(pos)
        elif interpolation == "nearest":
            pos = np.round(pos)  # half to even, as torch's round
        lo = np.floor(pos).astype(np.int64)
        hi = np.ceil(pos).astype(np.int64)
        a = _indexing.gather(srt, -1, _args._int64(x, lo))
        b = _indexing.gather(srt, -1, _args._int64(x, hi))
        if interpolation == "midpoint":
            r = a + (b - a) * 0.5 if (hi != lo).any() else a
        elif interpolation == "linear" and isinstance(q, TensorBase) and q._rg:
            # the weight q * (n - 1) - lo as torch's: differentiable in q (d/dq = (b - a)
            # * (n - 1)); the rounded interpolations' positions are constant in q
            dt = x._data.dtype
            qi = _shape.reshape(q, (-1,))[i]
            w = qi * like(x, (np.maximum(count, 1) - 1).astype(dt)) - like(x, lo.astype(dt))
            r = a + w * (b - a)
        else:
            w = like(x, (pos - lo).astype(x._data.dtype))
            r = a + w * (b - a)
        # a slice with a NaN gives NaN (quantile); a slice of NaNs only (nanquantile)
        bad = (count == 0) if ignore_nan else nan.any(-1, keepdims=True)
        if bad.any():
            r = _pointwise.where(like(x, bad), like(x, np.array(np.nan, x._data.dtype)), r)
        if dim is None:
            r = _shape.reshape(r, (1,) * nd if keepdim else ())
        elif keepdim:
            r = _shape.movedim(r, -1, d) if nd else _shape.reshape(r, ())
        else:
            r = _shape.reshape(r, tuple(x._data.shape[:d]) + tuple(x._data.shape[d + 1:]))
        outs.append(r)
    return _shape.stack(outs, 0) if q_vector else outs[0]


@public
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along dim (all elements when dim is None): sorted values,
    interpolated between the two around position q * (n - 1); NaN if a slice has one."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@public
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaNs (each slice's count is its non-NaN values)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


@public(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: sum of (y[i] + y[i + 1]) / 2 * (x[i + 1] - x[i])
    (spacing dx, default 1, without x)."""
    yt = _args._tensor(y, "trapezoid")
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both x "
                        "and dx given")
    if yt._data.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got {dim})")
    d = _args._dim(dim, yt._data.ndim)
    m = yt._data.shape[d]
    if m == 0:
        return sum(yt, d)
    # torch's formulas (integer sums wrap in the input's dtype as there):
    # (sum(y) - (y[0] + y[-1]) / 2) * dx, and sum(diff(x) * (y[:-1] + y[1:])) / 2
    if x is None:
        ends = _shape.select(yt, d, 0) + _shape.select(yt, d, m - 1)
        return (sum(yt, d) - ends * 0.5) * (1 if dx is None else dx)
    pair = _shape.narrow(yt, d, 1, m - 1) + _shape.narrow(yt, d, 0, m - 1)
    xt = _args._tensor(x, "trapezoid")
    if xt._data.ndim == 1:
        if xt._data.shape[0] != m:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point")
        shape = [1] * yt._data.ndim
        shape[d] = m
        xt = _shape.reshape(xt, tuple(shape))
    xd = _shape.narrow(xt, d - yt._data.ndim, 1, m - 1) - _shape.narrow(xt, d - yt._data.ndim, 0, m - 1)
    return sum(xd * pair, d) / 2.0


@public(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: trapezoid's older name (trapz(y, x, dim=) or trapz(y, dx=, dim=))."""
    return trapezoid(y, x, dx=dx, dim=dim)


def _stat_mean(stat):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        x = _args._tensor(input, f"{stat.__name__}_mean")
        if isinstance(dim, bool):  # legacy overload var_mean(x, unbiased): over all elements
            dim, unbiased = None, dim
        s = stat(x, dim, unbiased, keepdim, correction=correction)
        return s, mean(x, dim, keepdim)
    f.__name__ = f"{stat.__name__}_mean"
    f.__doc__ = f"({stat.__name__}, mean) over dim, as two tensors."
    return f


std_mean = public(_stat_mean(std), name="std_mean", method=False)
var_mean = public(_stat_mean(var), name="var_mean", method=False)


@public
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs counted as 0 (their gradient is 0)."""
    x = _args._tensor(input, "nansum")
    if x._data.dtype.kind == "f":
        nan = np.isnan(x._data)
        if nan.any():
            x = _pointwise.where(like(x, nan), like(x, np.zeros((), x._data.dtype)), x)
    return sum(x, dim, keepdim, dtype=dtype)


@public
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values: nansum / their count (NaN where there are none)."""
    x = _args._tensor(input, "nanmean")
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_dt.torch_name(x._data.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    axes = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else dim)
    if x._data.ndim == 0:  # dim 0 / -1 of a 0-d tensor is the whole tensor (torch)
        axes = dim = None
    count = np.sum(~np.isnan(x._data), axis=None if axes is None else tuple(
        _args._dim(a, x._data.ndim) for a in (axes if isinstance(axes, tuple) else (axes,))),
        keepdims=keepdim)
    return nansum(x, dim, keepdim) / like(x, np.asarray(count, dtype=x._data.dtype))


cummax_result = structseq("cummax", ["values", "indices"])
cummin_result = structseq("cummin", ["values", "indices"])
aminmax_result = structseq("aminmax", ["min", "max"])


def _cum_extreme(name, result, better):
    def f(input, dim):
        x = _args._tensor(input, name)
        nd = x.ndim
        d = _args._dim(dim, nd)
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
        return result(_indexing.gather(x, d, ind), ind)
    f.__name__ = name
    f.__doc__ = (f"torch.{name}: the running {name[3:]} along dim and the index where it "
                 f"occurred (values = gather(input, dim, indices): its gradient).")
    return f


cummax = public(_cum_extreme("cummax", cummax_result, lambda v, cur: v >= cur), name="cummax")
cummin = public(_cum_extreme("cummin", cummin_result, lambda v, cur: v <= cur), name="cummin")


@public(out=("exact",))
def aminmax(input, *, dim=None, keepdim=False):
    """(amin, amax) over dim (all dims when None); gradients as amin's and amax's."""
    x = _args._tensor(input, "aminmax")
    if dim is None:
        if x._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(x.ndim))
    else:
        d = _args._dim(dim, x.ndim)
        if x.ndim and x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,) if x.ndim else ()
    if not dims:
        return aminmax_result(_conversion.clone(x), _conversion.clone(x))
    return aminmax_result(amin(x, dims, keepdim), amax(x, dims, keepdim))


cumsum_ = public_inplace(cumsum, function=False)


cumprod_ = public_inplace(cumprod, function=False)

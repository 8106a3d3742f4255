"""Reductions (torch's "Reduction Ops") and cumulative ops: sum, mean, prod, max/min,
var/std, logsumexp, median/quantile, histograms, cumsum/cumprod/cummax/cummin,
softmax/log_softmax. Derivatives: rules/reductions.py, rules/softmax.py."""
import builtins
import warnings

import numpy as np

from .. import dtypes as _dt
from ..core import tape as _tape
from ..core.record import apply, apply_saved
from ..core.tensor_base import TensorBase, like
from . import (_args, comparison as _comparison, conversion as _conversion, indexing as _indexing,
               pointwise as _pointwise, shape as _shape, sorting as _sorting)
from .public import public, public_inplace
from ._selection_order import std_sort_order
from .return_types import structseq
from .rules import indexing as IX, products as PR, reductions as R, softmax as SM


def _logical_reduction(name, np_fn):
    def kernel(a, axis, keepdims):
        out = np.asarray(np_fn(a, axis=axis, keepdims=keepdims))
        return out.astype(np.uint8) if a.dtype == np.uint8 else out  # torch keeps uint8

    kernel.__name__ = name

    def f(input, dim=None, keepdim=False):
        x = _args._tensor(input, name)
        d = _args._dims(dim)
        _check_dims(name, x, d)
        # (through tape.host: tg.compile's capture records the mask as a step)
        return like(x, _tape.host(kernel, x._data, d, bool(keepdim)))
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
        # (a copy of the rule's saved indices: through tape.host, a step of a capture)
        return result(vals, like(x, _tape.host(_int64_copy, saved["indices"])))
    return f


def _int64_copy(a):
    return a.astype(np.int64)


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
    def kernel(a, dim, keepdim):
        if dim is None:
            out = op.forward(a.reshape(-1), axis=0)
            if keepdim:
                out = np.reshape(out, (1,) * a.ndim)
            return np.asarray(out, dtype=np.int64)
        return np.asarray(op.forward(a, axis=dim, keepdims=keepdim), dtype=np.int64)

    kernel.__name__ = op.name

    def f(input, dim=None, keepdim=False, *, axis=_UNSET, keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        x = _args._tensor(input)
        if x._data.dtype == np.bool_:
            raise RuntimeError(f"{op.name}(): does not support bool input")
        if dim is not None:
            _check_dims(op.name, x, dim)
            dim = int(dim)
        # (through tape.host: tg.compile's capture records the indices as a step)
        return like(x, _tape.host(kernel, x._data, dim, bool(keepdim)))
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
        if op is SM.log_softmax and x._data.dtype == np.float16 and x.ndim and \
                int(np.prod(x._data.shape[int(dim) % x.ndim + 1:])) == 1:
            return _log_softmax_half_lastdim(x, int(dim))
        return apply(op, x, axis=int(dim))
    f.__name__ = op.name
    return f


def _log_softmax_half_lastdim(x, dim):
    """float16 log_softmax along a last dimension as torch's kernel for it: in float32,
    the sum of exp(x - max) and its log each stored in float16, x - max - log rounded."""
    f32, f16 = np.dtype("float32"), np.dtype("float16")
    xf = _conversion.cast(x, f32)
    m = like(xf, np.amax(xf._data, axis=dim, keepdims=True, initial=-np.inf))
    z = _pointwise.sub(xf, m)  # the max: a constant shift, log_softmax does not change
    s = _conversion.cast(sum(_pointwise.exp(z), dim, keepdim=True), f16)
    lse = _conversion.cast(_pointwise.log(_conversion.cast(s, f32)), f16)
    return _conversion.cast(_pointwise.sub(z, _conversion.cast(lse, f32)), f16)


softmax = public(_along_dim(SM.softmax), name="softmax")
log_softmax = public(_along_dim(SM.log_softmax), name="log_softmax")


@public
def count_nonzero(input, dim=None):
    """The number of nonzero elements (along dim): an int64 tensor."""
    x = _args._tensor(input, "count_nonzero")
    a = x._data
    axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    return like(x, _tape.host(_count_nonzero, a, axis))


def _count_nonzero(a, axis):
    return np.asarray(np.count_nonzero(a, axis=axis), dtype=np.int64)


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
    for k, qv in enumerate(qs):
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
        else:
            w = like(x, (pos - lo).astype(x._data.dtype))
            if interpolation == "linear" and isinstance(q, TensorBase) and q._rg:
                # torch's weight q * (count - 1) - lo is differentiable in q
                qk = _shape.select(q, 0, k) if q_vector else q
                w = qk * like(x, (np.maximum(count, 1) - 1).astype(x._data.dtype)) - like(
                    x, lo.astype(x._data.dtype))
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


# ---- logcumsumexp, cumulative_trapezoid -----------------------------------------------------
@public(out=True)
def logcumsumexp(input, dim):
    """log(cumsum(exp(x))) along dim, computed stably (a logaddexp scan); torch's
    backward (rules/reductions.py). Floating tensors only, as torch's."""
    x = _args._tensor(input, "logcumsumexp")
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_args._tname(x._data.dtype)}'")
    d = _args._dim(dim, x._data.ndim)
    return apply(R.logcumsumexp, x, axis=d)


@public(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along dim (torch's formulas: cumsum of dx * (y[i] +
    y[i + 1]) / 2; one element fewer than y along dim)."""
    yt = _args._tensor(y, "cumulative_trapezoid")
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of "
                        "arguments: both x and dx given")
    if yt._data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _args._dim(dim, yt._data.ndim)
    xt = x if x is None else _args._tensor(x, "cumulative_trapezoid", "x", 2)
    if yt._data.dtype == np.bool_ or (xt is not None and xt._data.dtype == np.bool_):
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but "
                           "bool is not supported")
    m = yt._data.shape[d]
    pair = _shape.narrow(yt, d, 0, builtins.max(m - 1, 0)) + \
        _shape.narrow(yt, d, builtins.min(1, m), builtins.max(m - 1, 0))
    if xt is None:
        step = 1.0 if dx is None else dx
        if isinstance(step, (bool, complex)):
            raise RuntimeError("cumulative_trapezoid: Currently, we only support dx as a real "
                               "number.")
        return cumsum(pair * (float(step) / 2.0), d)
    if xt._data.ndim == 1:
        if xt._data.shape[0] != m:
            raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each "
                               "sample point")
        shape = [1] * yt._data.ndim
        shape[d] = m
        xt = _shape.reshape(xt, tuple(shape))
    elif xt._data.ndim < yt._data.ndim:
        xt = _shape.reshape(xt, (1,) * (yt._data.ndim - xt._data.ndim) + tuple(xt._data.shape))
    n = xt._data.shape[d]
    step = _shape.narrow(xt, d, builtins.min(1, n), builtins.max(n - 1, 0)) - \
        _shape.narrow(xt, d, 0, builtins.max(n - 1, 0))
    return cumsum((step * pair) / 2.0, d)


# ---- cov, corrcoef --------------------------------------------------------------------------
def _cov_weights(name, w, integral, n):
    what = "integral" if integral else "floating point"
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w._data.ndim} dimensions")
    if (w._data.dtype.kind in "iu") != integral or (not integral and w._data.dtype.kind != "f"):
        raise RuntimeError(f"cov(): expected {name} to have {what} dtype but got {name} with "
                           f"{_args._tname(w._data.dtype)} dtype")
    if w._data.size != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w._data.size} != {n}")
    if w._data.size and w._data.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


@public
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows (variables) of a 2-d tensor whose columns are
    observations (a 1-d tensor: one variable), with torch's frequency and analytic
    weights and correction; a composition, so it is differentiable."""
    x = _args._tensor(input, "cov")
    if x._data.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {x._data.ndim} dimensions")
    if x._data.ndim < 2:
        x = _shape.reshape(x, (1, -1))
    n = x._data.shape[1]
    w = None
    if fweights is not None:
        _cov_weights("fweights", fweights, True, n)
        w = fweights
    if aweights is not None:
        _cov_weights("aweights", aweights, False, n)
        w = aweights if w is None else w * aweights
    w_sum = n if w is None else sum(w)
    avg = sum(x if w is None else x * w, 1) / w_sum
    if w is not None and correction != 0:
        if aweights is not None:
            norm = w_sum - correction * sum(w * aweights) / w_sum
        else:
            norm = w_sum - correction
    else:
        norm = w_sum - correction
    norm_value = float(norm._data) if isinstance(norm, TensorBase) else float(norm)
    if norm_value <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, TensorBase) else 0
    centered = x - _shape.unsqueeze(avg, 1)
    other = centered if w is None else centered * w
    c = apply(PR.matmul, centered, _shape.t(other))
    return _shape.squeeze(c / norm)


@public
def corrcoef(input):
    """Pearson correlation coefficients of the rows: cov / (std_i std_j), clipped to
    [-1, 1] (torch's)."""
    x = _args._tensor(input, "corrcoef")
    if x._data.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {x._data.ndim} dimensions")
    c = cov(x)
    if c._data.ndim == 0:
        return c / c
    std = _pointwise.sqrt(_shape.diagonal(c))
    c = c / _shape.reshape(std, (-1, 1))
    c = c / _shape.reshape(std, (1, -1))
    return _pointwise.clamp(c, -1, 1)


# ---- mode -------------------------------------------------------------------------------------
mode_result = structseq("mode", ["values", "indices"])


def _mode_rows(a):
    """(value, index) per row of a 2-d array: the most frequent value (ties: the smallest)
    and torch's CPU kernel's index: the last of the value's run after std::sort, which
    is the last occurrence for rows of up to 16 (insertion sort, stable) and follows
    introsort's steps beyond (ops/_selection_order.py)."""
    n = a.shape[1]
    order = np.argsort(a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, 1)
    values = np.empty(a.shape[0], a.dtype)
    index = np.empty(a.shape[0], np.int64)
    for r in range(a.shape[0]):
        row = s[r]
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        counts = np.diff(np.r_[starts, n])
        best = int(np.argmax(counts))  # the first maximum: the smallest value
        lo, hi = starts[best], starts[best] + counts[best]
        values[r] = row[lo]
        if counts[best] > 1 and n > 16:
            std_order = std_sort_order(a[r].tolist())
            index[r] = std_order[hi - 1]
        else:
            index[r] = order[r, lo:hi].max()
    return values, index


@public(out=True)
def mode(input, dim=-1, keepdim=False):
    """(values, indices): the most frequent value along dim (ties: the smallest) and the
    index of its last occurrence; the gradient goes to that element."""
    x = _args._tensor(input, "mode")
    nd = x._data.ndim
    d = _args._dim(dim, nd)
    if nd == 0:
        return mode_result(_conversion.clone(x), _args._int64(x, np.zeros((), np.int64)))
    if x._data.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    a = np.moveaxis(x._data, d, -1)
    lead = a.shape[:-1]
    _, index = _mode_rows(a.reshape(-1, a.shape[-1]))
    idx = np.expand_dims(index.reshape(lead), d)
    values = apply(IX.gather, x, axis=d, index=idx)
    if not keepdim:
        values, idx = _shape.squeeze(values, d), np.squeeze(idx, d)
    return mode_result(values, _args._int64(x, idx))


# ---- sum_to_size --------------------------------------------------------------------------
@public(function=False)
def sum_to_size(self, *size):
    """self summed down to `size` (the shape it was broadcast from): leading dims summed
    away, dims where size is 1 summed with keepdim."""
    shape = _args._shape_arg(size)
    have = tuple(self._data.shape)
    ok = len(shape) <= len(have) and builtins.all(
        s == h or s == 1 for s, h in zip(shape[::-1], have[::-1]))
    if not ok:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    if not shape:  # torch's sum_to: an empty size is the full sum (integers give int64)
        return sum(self)
    lead = len(have) - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and have[lead + i] != 1)
    if not dims:
        return self
    out = sum(self, dims, keepdim=True)
    return _shape.reshape(out, shape) if lead else out


# ---- gradient ---------------------------------------------------------------------------------
def _gradient_along(x, d, h, edge_order):
    """torch.gradient along dim d: central differences inside, one-sided (first or second
    order) at both ends; h a number (uniform spacing) or a 1-d tensor of coordinates.
    Torch's formulas, composed of differentiable ops."""
    def part(start, stop):  # x[start:stop] along d, Python's slice rules
        lo, hi, _ = slice(start, stop).indices(x._data.shape[d])
        return _shape.narrow(x, d, lo, builtins.max(hi - lo, 0))

    if not isinstance(h, TensorBase):
        center = (part(2, None) - part(0, -2)) / h / 2
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(-1, None) - part(-2, -1)) / h
        else:
            first = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / h
            last = (part(-3, -2) * 0.5 - part(-2, -1) * 2 + part(-1, None) * 1.5) / h
        return _shape.cat([first, center, last], d)
    shape = [1] * x._data.ndim
    shape[d] = -1
    dx = h[1:] - h[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a = _shape.reshape(-dx2 / (dx1 * (dx1 + dx2)), tuple(shape))
    b = _shape.reshape((dx2 - dx1) / (dx1 * dx2), tuple(shape))
    c = _shape.reshape(dx1 / (dx2 * (dx1 + dx2)), tuple(shape))
    center = a * part(0, -2) + b * part(1, -1) + c * part(2, None)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / dx[0]
        last = (part(-1, None) - part(-2, -1)) / dx[-1]
    else:
        a = -(dx[0] * 2.0 + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = -dx[0] / (dx[1] * (dx[0] + dx[1]))
        first = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (dx[-1] * 2 + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        last = a * part(-3, -2) + b * part(-2, -1) + c * part(-1, None)
    return _shape.cat([first, center, last], d)


@public(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The numerical derivative of input along each dim in `dim` (default every dim), as a
    tuple of tensors: central differences inside, one-sided differences of order
    `edge_order` at the ends. `spacing`: one number, one per dim, or one coordinate
    tensor per dim."""
    x = _args._tensor(input, "gradient")
    nd = x._data.ndim
    if dim is None:
        dims = list(range(nd))
    else:
        dims = [int(dim)] if isinstance(dim, (int, np.integer)) else [int(d) for d in dim]
        dims = [_args._dim(d, nd) for d in dims]
    if len(set(dims)) != len(dims):
        seen = [d for i, d in enumerate(dims) if d in dims[:i]][0]
        raise RuntimeError(f"dim {seen} appears multiple times in the list of dims")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar "
                               f"or it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        hs = list(spacing)
    else:
        hs = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d, h in zip(dims, hs):
        if x._data.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        if isinstance(h, TensorBase) and (h._data.ndim != 1 or
                                          h._data.shape[0] != x._data.shape[d]):
            raise RuntimeError("torch.gradient expected each tensor to be on the same device, "
                               "and of the same size as the input along its dim")
    if x._data.dtype.kind in "biu":  # the differences are divided: the default float dtype
        x = x.to(_dt.get_default_dtype())
    outs = []
    for d, h in zip(dims, hs):
        if isinstance(h, TensorBase):
            outs.append(_gradient_along(x, d, h.to(x._data.dtype) if h._data.dtype.kind != "f"
                                        else h, edge_order))
        else:
            outs.append(_gradient_along(x, d, float(_args._scalar(h)), edge_order))
    return tuple(outs)


# ---- histogramdd --------------------------------------------------------------------------------
histogramdd_result = structseq("histogramdd", ["hist", "bin_edges"])


@public(method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): the D-dimensional histogram of the points in the rows of input
    (last dim D); bins an int, D ints, or D edge tensors; range D (min, max) pairs as one
    flat list. Edges are computed in the input's dtype, as torch's linspace."""
    x = _args._tensor(input, "histogramdd")
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"histogramdd" not implemented for \'{_args._tname(x.dtype)}\'')
    a = _args._np(x)
    if a.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = a.shape[-1]
    pts = a.reshape(-1, D)
    if isinstance(bins, (int, np.integer)):
        bins = [int(bins)] * D
    bins = list(bins)
    if len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    edges = []
    for k, b in enumerate(bins):
        if isinstance(b, TensorBase):
            e = _args._np(b).astype(a.dtype)
        else:
            n = int(b)
            if n <= 0:
                raise RuntimeError("histogramdd(): bins must be > 0, but got " + str(n) +
                                   " for dimension " + str(k))
            if range is not None:
                lo, hi = float(range[2 * k]), float(range[2 * k + 1])
            elif pts.shape[0]:
                lo, hi = float(pts[:, k].min()), float(pts[:, k].max())
            else:
                lo, hi = 0.0, 1.0  # torch: an empty input without a range gets [0, 1]
            if lo > hi:
                raise RuntimeError(f"histogramdd(): max must be larger than min for dimension "
                                   f"{k}")
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5  # torch widens a single value's range
            e = np.linspace(lo, hi, n + 1).astype(a.dtype)
        edges.append(e)
    w = None if weight is None else _args._np(weight).reshape(-1).astype(a.dtype)
    shape = tuple(len(e) - 1 for e in edges)
    keep = np.ones(pts.shape[0], bool)
    pos = []
    for k, e in enumerate(edges):
        v = pts[:, k]
        i = np.searchsorted(e, v, side="right") - 1
        i[v == e[-1]] = len(e) - 2  # the last bin is closed
        keep &= (i >= 0) & (i < len(e) - 1) & (v >= e[0]) & (v <= e[-1])
        pos.append(i)
    hist = np.zeros(shape, a.dtype)
    flat = np.ravel_multi_index(tuple(p[keep] for p in pos), shape) if shape else None
    if pts.shape[0] and keep.any():
        np.add.at(hist.reshape(-1), flat, np.ones(int(keep.sum()), a.dtype) if w is None
                  else w[keep])
    if density:
        total = hist.sum()
        for k, e in enumerate(edges):
            view = [1] * D
            view[k] = -1
            hist = hist / np.diff(e).reshape(view)
        hist = hist / total
    return histogramdd_result(like(x, hist.astype(a.dtype)), tuple(like(x, e) for e in edges))

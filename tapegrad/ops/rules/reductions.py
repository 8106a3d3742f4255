"""Reductions: sum, mean, prod, max/min, amax/amin, var/std, logsumexp, argmax/argmin.

A sum in forward is a broadcast in backward: every rule first puts back the reduced
axes (`_unreduce`) and lets broadcasting spread the gradient over them.
Internally the keyword names are NumPy's (`axis`, `keepdims`); the public functions
take PyTorch's (`dim`, `keepdim`).
"""
import builtins
import math

import numpy as np

from ... import dtypes as _dt
from ...core.tensor_base import TensorBase
from ._within_rule import within_rule
from ..registry import defop

_builtin_max = builtins.max
_add_reduce = np.add.reduce


def _axes(ndim, axis):
    if axis is None or ndim == 0:  # NOTE: a 0-d input accepts dim 0 / -1 (PyTorch)
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim for a in axis)


def _0d(forward):
    """PyTorch lets a 0-d tensor be reduced along dim 0 or -1 (a no-op reduction);
    NumPy's mean/moveaxis/take_along_axis reject the axis, so drop it."""
    def f(x, axis=None, *args, **kw):
        return forward(x, None if x.ndim == 0 else axis, *args, **kw)
    f.__name__ = forward.__name__
    return f


def _unreduce(xp, g, x, axis, keepdims):
    """Reshape a reduced gradient so that it broadcasts against the input x."""
    if keepdims or x.ndim == 0:
        return g
    shape = list(x.shape)
    for a in _axes(x.ndim, axis):
        shape[a] = 1
    return g.reshape(tuple(shape))  # the method: an ndarray's and a Tensor's alike


def _raw(a):
    """The array of a tensor (rules under create_graph get tensors): masks and counts
    are constants, computed on raw arrays in both modes."""
    return a._data if isinstance(a, TensorBase) else a


def _count(x, axis):
    return math.prod(x.shape[a] for a in _axes(x.ndim, axis))


def _expand(xp, g, shape):
    """Broadcast a reduced gradient back over the reduced axes."""
    # The one NumPy-only branch of this file (issue 11 allows one, with its figure):
    # x.sum().backward() of an 8x8 tensor takes 11.2 us with np.full, 13.5 us with
    # np.broadcast_to (whose read-only view accumulate must then copy), measured
    # interleaved in one process; bench/run.py (a) "sum" is this path.
    if xp is np and g.size == 1 and len(shape) and math.prod(shape) <= 65536:
        out = np.empty(shape, dtype=g.dtype)  # np.full's two steps, without its Python frame
        out[...] = g
        return out
    return xp.broadcast_to(g, shape)


def _sum_vjp(xp, g, ans, x, axis=None, keepdims=False):
    return _expand(xp, _unreduce(xp, g, x, axis, keepdims), x.shape)


# the ufunc reduction itself: ndarray.sum reaches np.add.reduce through NumPy's Python
# wrapper (numpy/_core/_methods.py), the same call with one frame more
def _all_or_dims(base):
    """torch's node of a reduction: <base>0 over all elements (`x.sum()`), <base>1 over
    given dims (`x.sum(1)`)."""
    def node_name(node):
        return base + ("0" if node.args.get("axis") is None else "1")
    return node_name


sum = defop("sum", lambda x, axis=None, keepdims=False: _add_reduce(x, axis=axis,
                                                                    keepdims=keepdims),
            vjp=[_sum_vjp], linear=True,
            text="dx = g broadcast back over the summed axes",
            hint=("sum copies g to every summed element, never infinite: a non-finite result "
                  "here means the incoming gradient already was"),
            node=_all_or_dims("SumBackward"))


@_0d
def _mean_forward(x, axis=None, keepdims=False):
    if x.dtype.kind not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be "
                           "either a floating point or complex dtype. Got: "
                           f"{_dt.torch_name(x.dtype)}")
    return x.mean(axis=axis, keepdims=keepdims)


mean = defop("mean", _mean_forward, linear=True, vjp=[
    lambda xp, g, ans, x, axis=None, keepdims=False:
        _expand(xp, _unreduce(xp, g, x, axis, keepdims) / _count(x, axis), x.shape)
],
    text="dx = g/n broadcast back over the reduced axes",
    hint=("mean spreads g/n over the n reduced elements, never infinite: a non-finite result "
          "here means the incoming gradient already was"),
    node=_all_or_dims("MeanBackward"))


def _prod_others(xp, ans, x, axis):
    """d prod / d x_j: the product of all OTHER elements along `axis`, broadcast to x.
    Without zeros it is prod / x_j (PyTorch's formula too: the same rounding). With
    zeros, the product is split into non-zeros (p_nz) and zeros (zprod, value 0 but with
    the right derivatives under create_graph): a non-zero entry's others are
    p_nz / x_j * zprod; a zero entry's are p_nz (one zero), p_nz * (the other zero)
    (two zeros), else 0. The masks and zero counts are constants (raw arrays)."""
    zero = (_raw(x) == 0)
    if not zero.any():  # also an empty x
        return _unreduce(xp, ans, x, axis, False) / x
    nzeros = np.sum(zero, axis=axis, keepdims=True)
    safe = xp.where(zero, 1.0, x)
    p_nz = xp.prod(safe, axis=axis, keepdims=True)
    zprod = xp.prod(xp.where(zero, x, 1.0), axis=axis, keepdims=True)
    zsum = xp.sum(xp.where(zero, x, 0.0), axis=axis, keepdims=True)
    at_zero = xp.where(nzeros == 1, p_nz, xp.where(nzeros == 2, p_nz * (zsum - x), 0.0))
    return xp.where(zero, at_zero, p_nz / safe * zprod)


def _prod_vjp(xp, g, ans, x, axis=None, keepdims=False):
    if x.ndim == 0:
        return g
    others = _prod_others(xp, _unreduce(xp, ans, x, axis, keepdims), x, axis)
    return _unreduce(xp, g, x, axis, keepdims) * others


@_0d
def _prod_forward(x, axis=None, keepdims=False):
    if isinstance(axis, tuple):
        raise TypeError("prod() takes one dim at most, as in PyTorch")
    return np.prod(x, axis=axis, keepdims=keepdims)


# ---- forward-mode (JVP) rules of the non-linear reductions ------------------------
# tangent of ans = sum over the reduced axes of (d ans / d x) * t; written with xp
# calls and operators, like the VJP rules (sum and mean are linear: their JVP is the
# op applied to the tangent, derived by the registry).


def _prod_jvp(xp, t, ans, x, axis=None, keepdims=False):
    # d prod = sum_i t_i * prod_{j != i} x_j (the zero-safe product of the others)
    if x.ndim == 0:
        return t[0]
    others = _prod_others(xp, _unreduce(xp, ans, x, axis, keepdims), x, axis)
    return xp.sum(t[0] * others, axis=axis, keepdims=keepdims)


def _evenly_jvp_of(nan_hits):
    # amax/amin: the mean of the tangents at the tied extreme positions (PyTorch; a NaN
    # amax has none: 0/0). max()/min(): a NaN result's tangent is the NaNs' mean.
    def jvp(xp, t, ans, x, axis=None, keepdims=False):
        hit, count = _hits(ans, x, axis, keepdims, nan_hits)
        if not keepdims:
            count = np.sum(hit, axis=axis, keepdims=False).astype(count.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.sum(xp.where(hit, t[0], 0.0), axis=axis, keepdims=keepdims) / count
    return jvp


def _select_jvp(xp, t, ans, x, axis, keepdims=False, indices=None, _idx_keep=None,
                _shape=None):
    # max/min along a dim: the tangent at the returned index.
    mask = np.zeros(x.shape, dtype=bool)
    np.put_along_axis(mask, _idx_keep, True, axis=axis)
    return xp.sum(xp.where(mask, t[0], 0.0), axis=axis, keepdims=keepdims)


def _var_jvp(xp, t, ans, x, axis=None, correction=1, keepdims=False):
    # d var = 2 / (n - correction) * sum((x - mean) * t)
    n = _count(x, axis)
    return xp.sum(_centered(xp, x, axis) * t[0], axis=axis, keepdims=keepdims) * (
        2.0 / (n - correction))


def _std_jvp(xp, t, ans, x, axis=None, correction=1, keepdims=False):
    # std = sqrt(var): d std = d var / (2 std)
    return _var_jvp(xp, t, ans, x, axis, correction, keepdims) / (2.0 * ans)


def _logsumexp_jvp(xp, t, ans, x, axis=None, keepdims=False):
    # d lse = sum(softmax(x) * t)
    w = xp.exp(x - _unreduce(xp, ans, x, axis, keepdims))
    return xp.sum(w * t[0], axis=axis, keepdims=keepdims)


prod = defop("prod", _prod_forward, vjp=[_prod_vjp], jvp=_prod_jvp, reads=["ans x"],
             text="dx = g*(product of the other elements) (= g*ans/x where x != 0)",
             hint=("prod's derivative is the product of the other elements, computed without "
                   "dividing by x, so zeros are fine: finite for finite x (many large factors "
                   "can overflow)"),
             node=_all_or_dims("ProdBackward"))


def _hits(ans, x, axis, keepdims, nan_hits):
    """Where x equals its extreme (a constant mask) and how many per slice (as a float:
    an int64 count would upcast g). `nan_hits`: a NaN extreme is hit by the NaNs."""
    xd, a = _raw(x), _raw(ans)
    if not keepdims and axis is not None and x.ndim:
        a = np.expand_dims(a, _axes(x.ndim, axis))
    hit = (xd == a)
    if nan_hits and xd.dtype.kind == "f":
        hit |= np.isnan(xd) & np.isnan(a)
    return hit, np.sum(hit, axis=axis, keepdims=True).astype(xd.dtype)


def _evenly(xp, g, ans, x, axis=None, keepdims=False):
    """amax()/amin(): g / count at the positions equal to the result (ties share it), as
    PyTorch's `mask * (g / mask.sum())`: where the result is NaN no position equals it,
    the count is 0 and the whole slice's gradient is NaN (PyTorch's too)."""
    hit, count = _hits(ans, x, axis, keepdims, False)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _unreduce(xp, g, x, axis, keepdims) / count * hit.astype(count.dtype)


def _evenly_nan(xp, g, ans, x, axis=None, keepdims=False):
    """max()/min() of all elements: g shared evenly among the positions equal to the
    result, a NaN result counting the NaNs as equal; 0 elsewhere (PyTorch's
    evenly_distribute_backward)."""
    hit, count = _hits(ans, x, axis, keepdims, True)
    return xp.where(hit, _unreduce(xp, g, x, axis, keepdims) / count, 0.0)


def _amax_node(node):
    # over all dims: MaxBackward1, the node of the far more common `x.max()` (an
    # approximation: torch names x.amax()'s node AmaxBackward0 for any dims)
    return "MaxBackward1" if node.args.get("axis") is None else "AmaxBackward0"


amax = defop("amax", lambda x, axis=None, keepdims=False: np.amax(x, axis=axis, keepdims=keepdims),
             vjp=[_evenly], jvp=_evenly_jvp_of(False), reads=["ans x"],
             text="dx = g at the max positions (shared at ties)",
             hint=("amax routes g to the maxima (shared evenly at ties), never infinite: a "
                   "non-finite result here means the incoming gradient already was"),
             node=_amax_node)
def _amin_node(node):
    return "MinBackward1" if node.args.get("axis") is None else "AminBackward0"


amin = defop("amin", lambda x, axis=None, keepdims=False: np.amin(x, axis=axis, keepdims=keepdims),
             vjp=[_evenly], jvp=_evenly_jvp_of(False), reads=["ans x"],
             text="dx = g at the min positions (shared at ties)",
             hint=("amin routes g to the minima (shared evenly at ties), never infinite: a "
                   "non-finite result here means the incoming gradient already was"),
             node=_amin_node)
# max()/min() without a dim: the same value as amax/amin, another rule for NaN (above)
max_all = defop("max", lambda x, axis=None, keepdims=False: np.amax(x, axis=axis, keepdims=keepdims),
                vjp=[_evenly_nan], jvp=_evenly_jvp_of(True), reads=["ans x"],
                text="dx = g at the max positions (shared at ties; a nan max: at the nans)",
                hint=("max routes g to the maxima (shared evenly at ties, or to the nans), "
                      "never infinite: a non-finite result means the incoming gradient was"),
                node="MaxBackward1")
min_all = defop("min", lambda x, axis=None, keepdims=False: np.amin(x, axis=axis, keepdims=keepdims),
                vjp=[_evenly_nan], jvp=_evenly_jvp_of(True), reads=["ans x"],
                text="dx = g at the min positions (shared at ties; a nan min: at the nans)",
                hint=("min routes g to the minima (shared evenly at ties, or to the nans), "
                      "never infinite: a non-finite result means the incoming gradient was"),
                node="MinBackward1")


def _select_forward(pick):
    """max/min along one dim: values, with the indices saved as an extra."""

    def forward(x, axis, keepdims=False, indices=None, _idx_keep=None, _shape=None):
        # NOTE: `indices`/`_idx_keep`/`_shape` are this op's extras: create_graph re-runs
        # the forward with the node's kwargs, which include them; they are recomputed.
        if x.ndim == 0:
            return x.copy(), {"indices": np.zeros((), np.int64), "_idx_keep": None,
                              "_shape": ()}
        idx = pick(x, axis=axis, keepdims=True)
        vals = np.take_along_axis(x, idx, axis=axis)
        if not keepdims:
            vals = np.squeeze(vals, axis=axis)
            idx_out = np.squeeze(idx, axis=axis)
        else:
            idx_out = idx
        return vals, {"indices": idx_out, "_idx_keep": idx, "_shape": x.shape}

    return forward


def _select_vjp(xp, g, ans, x, axis, keepdims=False, indices=None, _idx_keep=None,
                _shape=()):
    # The whole gradient goes to the one index that was returned. Reads only the saved
    # indices and shape, not x: changing x in place after x.max(dim) is allowed, as in
    # PyTorch (which saves only the indices).
    if _idx_keep is None:  # a 0-d input
        return g
    mask = np.zeros(_shape, dtype=bool)
    np.put_along_axis(mask, _idx_keep, True, axis=axis)
    gk = g if keepdims else xp.expand_dims(g, axis)
    return xp.where(mask, gk, 0.0)


def _nanfirst(argfn):
    # PyTorch's max/min propagate NaN: a NaN wins and its index is returned.
    def pick(x, axis, keepdims):
        idx = argfn(x, axis=axis, keepdims=True)
        if x.dtype.kind == "f":
            nan = np.isnan(x)
            if nan.any():
                has = nan.any(axis=axis, keepdims=True)
                idx = np.where(has, np.argmax(nan, axis=axis, keepdims=True), idx)
        return idx
    return pick


max_dim = defop("max_dim", _select_forward(_nanfirst(np.argmax)), extra=True, vjp=[_select_vjp],
                jvp=_select_jvp, reads=[""],
                text="dx = g scattered to the argmax",
                hint=("max(dim) routes g to the returned index, never infinite: a non-finite "
                      "result here means the incoming gradient already was"),
                node="MaxBackward0")
min_dim = defop("min_dim", _select_forward(_nanfirst(np.argmin)), extra=True, vjp=[_select_vjp],
                jvp=_select_jvp, reads=[""],
                text="dx = g scattered to the argmin",
                hint=("min(dim) routes g to the returned index, never infinite: a non-finite "
                      "result here means the incoming gradient already was"),
                node="MinBackward0")


@_0d
def _var_forward(x, axis=None, correction=1, keepdims=False):
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"var(): input dtype must be floating point, got {x.dtype}")
    dev = x - np.mean(x, axis=axis, keepdims=True)
    ss = np.sum(dev * dev, axis=axis, keepdims=keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        # NOTE: with n <= correction PyTorch divides by max(0, n - correction): inf or nan.
        return ss / _builtin_max(0, _count(x, axis) - correction)


def _centered(xp, x, axis):
    return x - xp.mean(x, axis=_axes(x.ndim, axis), keepdims=True)


def _var_vjp(xp, g, ans, x, axis=None, correction=1, keepdims=False):
    n = _count(x, axis)
    with np.errstate(divide="ignore"):  # n <= correction: inf, as PyTorch (no ZeroDivisionError)
        c = np.float64(2.0) / (n - correction)
    return _unreduce(xp, g, x, axis, keepdims) * float(c) * _centered(xp, x, axis)


var = defop("var", _var_forward, vjp=[_var_vjp], jvp=_var_jvp, reads=["x"],
            text="dx = g*2*(x-mean)/(n-correction)",
            hint=("var'(x) = 2*(x-mean)/(n-correction) is finite for finite x unless n <= "
                  "correction (var of one element with correction=1 divides by 0); use "
                  "correction=0 or reduce over more elements"))


def _std_forward(x, axis=None, correction=1, keepdims=False):
    if x.dtype == np.float32:  # torch takes float32's std in double and rounds once: the
        x = x.astype(np.float64)  # variance of 1e20s (1e40) overflows float32, the std not
        return np.sqrt(_var_forward(x, axis, correction, keepdims)).astype(np.float32)
    return np.sqrt(_var_forward(x, axis, correction, keepdims))


def _std_vjp(xp, g, ans, x, axis=None, correction=1, keepdims=False):
    n = _count(x, axis)
    a = _unreduce(xp, ans, x, axis, keepdims)
    # NOTE: where the std is 0 (a constant slice) PyTorch gives gradient 0, not 0/0 = nan.
    zero = np.asarray(getattr(a, "_data", a)) == 0
    if zero.any():
        a = xp.where(zero, 1.0, a)  # a safe denominator; those entries are zeroed below
    with np.errstate(divide="ignore", invalid="ignore"):
        d = _unreduce(xp, g, x, axis, keepdims) * _centered(xp, x, axis) / (
            a * float(np.float64(n - correction)))
    return xp.where(zero, 0.0, d) if zero.any() else d


std = defop("std", _std_forward, vjp=[_std_vjp], jvp=_std_jvp, reads=["ans x"],
            text="dx = g*(x-mean)/((n-correction)*ans) (0 where ans = 0)",
            hint=("std'(x) = (x-mean)/((n-correction)*std) is taken as 0 where std = 0 (a "
                  "constant slice), so it is finite for finite x unless n <= correction (std "
                  "of one element with correction=1); sqrt(var + eps) keeps it smooth near 0"))


def _logsumexp_forward(x, axis=None, keepdims=False):
    # initial=-inf: an empty slice's logsumexp is log(0) = -inf, as PyTorch
    m = np.amax(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)  # all -inf rows: the answer is -inf, not nan
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


logsumexp = defop("logsumexp", _logsumexp_forward, vjp=[
    lambda xp, g, ans, x, axis=None, keepdims=False:
        _unreduce(xp, g, x, axis, keepdims) * xp.exp(x - _unreduce(xp, ans, x, axis, keepdims))
], jvp=_logsumexp_jvp, reads=["ans x"],
    text="dx = g*softmax(x)",
    hint=("logsumexp'(x) = softmax(x) is in [0, 1]: finite for finite x (a slice of all -inf "
          "gives nan)"))

argmax = defop("argmax", lambda x, axis=None, keepdims=False:
               np.argmax(x, axis=axis, keepdims=keepdims), differentiable=False, promote=False,
               text="no gradient: the output is an integer index",
               hint=("argmax is not differentiable (integer output): no backward rule runs for"
                     " it"))
argmin = defop("argmin", lambda x, axis=None, keepdims=False:
               np.argmin(x, axis=axis, keepdims=keepdims), differentiable=False, promote=False,
               text="no gradient: the output is an integer index",
               hint=("argmin is not differentiable (integer output): no backward rule runs for"
                     " it"))




# ---- cumulative sum (a scan: linear, its adjoint is the reversed scan) ------------------
def _cumsum_forward(x, axis, reverse=False):
    if x.ndim == 0:
        return x.copy()
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)
    return np.cumsum(x, axis=axis)


def _cumsum_vjp(xp, g, ans, x, axis, reverse=False):
    # d out_j / d x_i = 1 for i <= j: each x_i collects the gradients of the later outputs
    return within_rule(xp, cumsum, g, axis=axis, reverse=not reverse)


cumsum = defop("cumsum", _cumsum_forward, linear=True, promote=False, opmath=True, vjp=[_cumsum_vjp],
               text="dx = g summed from the end (the reversed cumulative sum)",
               hint="linear: the rule only sums g, so it is finite whenever g is")


# ---- cumulative product ------------------------------------------------------
# cumprod (cumsum, a linear scan, is above).
#
# d out_j / d x_i = prod_{k <= j, k != i} x_k for i <= j. Without zeros the VJP is
# PyTorch's reversed cumulative sum of g * out divided by x. With zeros (PyTorch handles
# them, so must we) let z be the first zero along the axis: an entry before z keeps that
# formula (the later outputs are 0); the entry AT z gets the reversed cumulative sum of
# g * cumprod(x with x_z set to 1); entries after z get 0 (their products hold x_z = 0).
# The rules are cumsums and cumprods of the table, so every order of derivative works;
# the zero masks are constants.
def _cumprod_forward(x, axis):
    if x.ndim == 0:
        return x.copy()
    return np.cumprod(x, axis=axis)


def _cumprod_zero_masks(x, axis):
    """(before the first zero, at the first zero), or None without zeros."""
    zero = _raw(x) == 0
    if not zero.any():
        return None
    seen = np.cumsum(zero, axis=axis)
    return seen == 0, zero & (seen == 1)


def _cumprod_vjp(xp, g, ans, x, axis):
    if x.ndim == 0:
        return g
    masks = _cumprod_zero_masks(x, axis)
    if masks is None:
        return within_rule(xp, cumsum, g * ans, axis=axis, reverse=True) / x
    if xp is not np:
        return _cumprod_vjp_differentiable(xp, g, x, axis)
    before, first = masks
    safe = xp.where(before, x, 1.0)
    part1 = within_rule(xp, cumsum, g * ans, axis=axis, reverse=True) / safe
    others = within_rule(xp, cumprod, xp.where(first, 1.0, x), axis=axis)
    part2 = within_rule(xp, cumsum, g * others, axis=axis, reverse=True)
    return xp.where(before, part1, xp.where(first, part2, 0.0))


def _cumprod_vjp_differentiable(xp, g, x, axis):
    """With zeros under create_graph: grad_i = sum_{j>=i} g_j * cumprod(x with x_i set to
    1)_j, all n variants of x at once (O(n^2) per slice, as PyTorch's double backward):
    the O(n) formula's 0 after the first zero has the value but not the derivative."""
    shape = tuple(x.shape)
    n, nd = shape[axis], len(shape)
    # a new axis 0 says which x_i is set to 1
    eye = np.eye(n, dtype=bool).reshape((n,) + (1,) * axis + (n,) + (1,) * (nd - axis - 1))
    later = np.triu(np.ones((n, n), dtype=bool)).reshape(eye.shape)  # j >= i
    xs = xp.broadcast_to(xp.expand_dims(x, 0), (n,) + shape)
    others = within_rule(xp, cumprod, xp.where(np.broadcast_to(eye, (n,) + shape), 1.0, xs),
                         axis=axis + 1)
    terms = xp.where(np.broadcast_to(later, (n,) + shape), others * xp.expand_dims(g, 0), 0.0)
    out = xp.sum(terms, axis=axis + 1)  # (n, the other dims): move axis 0 to `axis`
    perm = list(range(1, nd))
    perm.insert(axis, 0)
    return xp.transpose(out, perm)


def _cumprod_jvp(xp, t, ans, x, axis):
    t = t[0]
    if x.ndim == 0:
        return t
    masks = _cumprod_zero_masks(x, axis)
    if masks is None:
        return ans * within_rule(xp, cumsum, t / x, axis=axis)
    before, first = masks
    safe = xp.where(before, x, 1.0)
    part1 = ans * within_rule(xp, cumsum, t / safe, axis=axis)
    others = within_rule(xp, cumprod, xp.where(first, 1.0, x), axis=axis)
    t_at_zero = xp.sum(xp.where(first, t, 0.0), axis=axis, keepdims=True)
    return xp.where(before, part1, t_at_zero * others)


cumprod = defop("cumprod", _cumprod_forward, vjp=[_cumprod_vjp], jvp=_cumprod_jvp, reads=["ans x"],
                text="dx_i = sum_{j>=i} g_j*ans_j/x_i (zeros: see ops/rules/reductions.py)",
                hint=("cumprod's derivative is a product of the other factors, computed "
                      "without dividing by a zero: finite for finite x (many large factors "
                      "can overflow)"))


# ---- logcumsumexp --------------------------------------------------------------------------
# out_j = log(sum_{i <= j} exp(x_i)), by NumPy's logaddexp scan (stable: max + log1p(exp(
# -|a - b|)) at each step, as torch's kernel). The VJP is torch's (derivatives.yaml):
# grad_i = exp(x_i) * sum_{j >= i} g_j exp(-out_j), summed in log space separately for
# the positive and negative parts of g (a reversed logcumsumexp of log|g| - out), so no
# exp overflows. The rule uses the op itself, so every order of derivative works.
def _logcumsumexp_forward(x, axis, reverse=False):
    if x.ndim == 0:
        return x.copy()
    if reverse:
        return np.flip(np.logaddexp.accumulate(np.flip(x, axis), axis=axis), axis)
    return np.logaddexp.accumulate(x, axis=axis)


def _logcumsumexp_vjp(xp, g, ans, x, axis, reverse=False):
    if x.ndim == 0:
        return g
    lowest = np.finfo(_dt.as_dtype(x.dtype)).min
    nonzero = g != 0
    with np.errstate(divide="ignore"):
        log_abs = xp.log(xp.abs(xp.where(nonzero, g, 1.0)))
    parts = []
    for side in (g > 0, g < 0):
        logs = xp.where(side, log_abs, lowest) - ans
        with np.errstate(over="ignore"):  # lowest + x: -inf, whose exp is the 0 wanted
            parts.append(xp.exp(within_rule(xp, logcumsumexp, logs, axis=axis,
                                            reverse=not reverse) + x))
    return parts[0] - parts[1]


def _logcumsumexp_jvp(xp, t, ans, x, axis, reverse=False):
    # d out_j = sum_{i <= j} exp(x_i - out_j) t_i: the same log-space sums, forwards
    t = t[0]
    if x.ndim == 0:
        return t
    lowest = np.finfo(_dt.as_dtype(x.dtype)).min
    with np.errstate(divide="ignore"):
        log_abs = xp.log(xp.abs(xp.where(t != 0, t, 1.0)))
    parts = []
    for side in (t > 0, t < 0):
        logs = xp.where(side, log_abs + x, lowest)
        with np.errstate(over="ignore"):
            parts.append(xp.exp(within_rule(xp, logcumsumexp, logs, axis=axis,
                                            reverse=reverse) - ans))
    return parts[0] - parts[1]


logcumsumexp = defop("logcumsumexp", _logcumsumexp_forward, promote=False, opmath=True,
                     vjp=[_logcumsumexp_vjp], jvp=_logcumsumexp_jvp, reads=["ans x"],
                     text="dx = exp(x) * (g*exp(-ans)) summed from the end (in log space)",
                     hint="finite wherever x and the output are: the sums run in log space")

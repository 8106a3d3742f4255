"""Fused neural-network kernels: table entries whose backward is one formula.

Each entry could be written as a composite of simpler ops (those composites live in
`tapegrad/nn/composite_reference.py`, and the tests check that both agree). The fused form
records ONE node instead of many and computes its gradient in one pass:

    linear          Y = X W^T + b          dX = dY W,  dW = dY^T X,  db = sum dY
    cross_entropy   loss = -w[y] log_softmax(x)[y]      dx = w[y] (softmax(x) - onehot(y))
                    (mean: divided by sum w[y]; label smoothing mixes in a uniform target)
    nll_loss        loss = -w[y] x[y]                   dx = -w[y] onehot(y)
    batch_norm      y = (x - mean) / sqrt(var + eps) * w + b over the batch axes
    layer_norm      the same over the trailing axes
    embedding       Y = W[idx]                          dW = scatter-add of dY rows
    gelu, leaky_relu, dropout (mask multiply)

Rules follow the registry's signature `rule(xp, g, ans, *inputs, **kw)` and are
written ONCE against `xp`. A value the forward saved (layer/batch norm's xhat and
invstd, cross-entropy's softmax, gelu's Phi(x)) is read through a table entry of its
own (`norm_xhat`, `norm_invstd`, `softmax_rows`, `gelu_backward`) called with
`within_rule` (ops/rules/_within_rule.py): in an ordinary backward that returns the saved
array; under `create_graph=True` it is a recorded op whose rule is that value's
derivative, so the second derivative flows through the statistics too. Where the xp
form of a formula measured slower than a NumPy kernel, that kernel is a table entry of
its own with differentiable rules, and the rule calls it the same way:
`normalized_grad` (the norms' dx), `softmax_minus_onehot` (cross-entropy's dx),
`sum_over_axes` (bias and norm-weight sums), `embedding_backward` (the scatter-add;
its adjoint is the row read). Each keeps the figure that justified it in a comment.
batch_norm also has a `backward=` (ops/registry.py): dx, dw and db in one call sharing
their sums, equal bit for bit to its per-input rules (tests/test_bn_fused_backward.py).
"""
import math

import numpy as np

from ._within_rule import within_rule as _call
from ... import _ckernels
from . import pointwise as E
from .indexing import add_rows
from ._gemm import linear_rows
from ._rowsum import max_last as _max_last, sum_leading as _sum_leading_arr
from ._rowsum import sum_trailing as _sum_trailing
from ..registry import defop

# ufunc reductions called directly: ndarray.sum/max/all reach these same calls through
# NumPy's Python wrappers (numpy/_core/_methods.py), one Python frame more each
_sum, _max, _all = np.add.reduce, np.maximum.reduce, np.logical_and.reduce
# each signed integer width's unsigned twin: a negative index viewed as unsigned is larger
# than any valid one, so ONE max reduction checks both ends of an index array
_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def index_top(idx):
    """The largest entry of a non-empty integer array, a negative entry counting as
    larger than every valid index (bounds checks of embedding and cross-entropy)."""
    if idx.dtype.kind == "i":
        idx = idx.view(_UNSIGNED[idx.itemsize])
    return _max(idx, axis=None)


def _const(a):
    """A constant input (targets, class weights) as an ndarray in both modes."""
    return None if a is None else np.asarray(a._data if hasattr(a, "grad_fn") else a)


# ---- sums of a gradient over the batch axes (bias / weight gradients) -------------------
def _sum_to_forward(a, *, axes, shape):
    # leading axes (bias / layer-norm weight gradients): a vector-matrix product with
    # ones (ops/rules/_rowsum.py: ~2.5x faster on the GPT's (32, 16, C) gradients); other
    # axes: ndarray methods (~1.9 us less than np.sum + np.reshape on (32, 200))
    if axes == tuple(range(len(axes))):
        s = _sum_leading_arr(a, len(axes))
    else:
        s = _sum(a, axis=axes)
    # the sum itself when it has the shape (a reshape would be a view: the engine then
    # copies it into `.grad` instead of keeping it)
    return s if s.shape == shape else s.reshape(shape)


def _sum_to_vjp(xp, u, ans, a, *, axes, shape):
    kept = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
    return xp.broadcast_to(xp.reshape(u, kept), tuple(a.shape))


# a summed over `axes`, reshaped to `shape`: a parameter's gradient from the per-row ones
sum_to = defop("sum_over_axes", _sum_to_forward, linear=True, promote=False, opmath=True,
               vjp=[_sum_to_vjp], doc="a.sum(axes).reshape(shape): a parameter's gradient",
               text="da = g broadcast back over the summed axes",
               hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is")


def _sum_leading(xp, a, ndim):
    """a summed over its leading axes down to `ndim` dims (the engine's unbroadcasting
    of a parameter's gradient, done here: the same axes)."""
    lead = tuple(range(a.ndim - ndim))
    return _call(xp, sum_to, a, axes=lead, shape=tuple(a.shape[len(lead):])) if lead else a


# ---- linear ---------------------------------------------------------------------------
def _linear_forward(x, w, b=None):
    # Leading dims folded into the rows: ONE gemm. A (32, 16, 64) x runs a gemm per
    # batch entry through np.matmul's broadcasting loop otherwise (222 vs 154 us for
    # (512, 64) @ (64, 192), float32, 1 thread, measured). The bias joins the product
    # (ops/rules/_gemm.py: no pass of its own).
    if x.ndim > 2:
        return linear_rows(x.reshape(-1, x.shape[-1]), w, b).reshape(
            x.shape[:-1] + (w.shape[0],))
    if x.ndim == 2:
        return linear_rows(x, w, b)
    out = np.matmul(x, w.T)
    if b is not None:
        out += b
    return out


def _linear_dx(xp, g, ans, x, w, b=None):
    if g.ndim <= 2:
        return xp.matmul(g, w)
    return xp.reshape(xp.matmul(_rows(xp, g), w), tuple(g.shape[:-1]) + (w.shape[1],))


def _linear_dw(xp, g, ans, x, w, b=None):
    # dW = dY^T X, with any leading batch dimensions folded into the rows.
    return xp.matmul(_rows(xp, g).T, _rows(xp, x))  # .T: a 2-D array's transpose (array API)


def _rows(xp, a):
    """a as a matrix (rows = all leading dims); a 2-D a as it is (no reshape call)."""
    return a if a.ndim == 2 else xp.reshape(a, (-1, a.shape[-1]))


def _linear_db(xp, g, ans, x, w, b=None):
    return _sum_leading(xp, g, b.ndim)


def _linear_jvp(xp, t, ans, x, w, b=None):
    out = None
    if t[0] is not None:
        out = xp.matmul(t[0], xp.swapaxes(w, -1, -2))
    if t[1] is not None:
        term = xp.matmul(x, xp.swapaxes(t[1], -1, -2))
        out = term if out is None else out + term
    if len(t) > 2 and t[2] is not None:
        out = t[2] if out is None else out + t[2]
    return out


def _linear_node(node):
    x, bias = node.inputs[0], node.inputs[2] if len(node.inputs) > 2 else None
    nd = np.ndim(x._data)
    if nd == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    return "ViewBackward0" if bias is not None else "UnsafeViewBackward0"


linear = defop("linear", _linear_forward, inputs=("x", "weight", "bias"),
               vjp=[_linear_dx, _linear_dw, _linear_db], jvp=_linear_jvp, doc="Y = X W^T + b", reads=["weight", "x", ""],
               text="dX = g @ W ; dW = g^T @ X ; db = g.sum(0)",
               hint=("linear is linear in each input (dx = g @ W, dW = g^T @ x): finite for "
                     "finite inputs (very large values can overflow)"),
               node=_linear_node)


_ARANGE = {}


def _arange(n):
    """np.arange(n), made once per n and read-only (the row index of a pick: ~0.5 us)."""
    a = _ARANGE.get(n)
    if a is None:
        if len(_ARANGE) > 64:  # many batch sizes: keep the cache small
            _ARANGE.clear()
        a = _ARANGE[n] = np.arange(n)
        a.flags.writeable = False
    return a


# ---- cross entropy and nll (class-index targets, rows = samples, last axis = classes) ----
def _log_softmax_rows(x):
    # ndarray methods and in-place updates of the fresh `z`: same values as
    # z - log(sum(exp(z))), fewer temporaries and no np.* dispatch (~1 us each).
    # The row max (exact: the same bits either way) over a transposed copy for short
    # rows (`_rowsum.max_last`): (512, 27) float32 ~8 vs ~34 us, (128, 10) ~3 vs ~8 us;
    # below 32 rows the copy costs more than it saves ((8, 10): 2.0 vs 1.1 us).
    z = x - (_max_last(x) if x.ndim == 2 and x.shape[0] >= 32
             else _max(x, axis=1, keepdims=True))
    z -= np.log(_sum(np.exp(z), axis=1, keepdims=True))
    return z


def _row_weights(target, weight, ignore_index, dtype):
    """Per-row weight w[y_i] (0 for ignored rows) and the mask of kept rows.

    NOTE: wy is None when every row counts with weight 1 (no class weights, no
    ignore_index hit): the common case needs no per-row multiply (rules treat None as 1).
    """
    keep = target != ignore_index
    if weight is None and keep.all():
        # a copy: the saved targets must not follow later in-place changes of the caller's
        return None, keep, target.copy()
    safe = np.where(keep, target, 0)
    if weight is None:
        wy = keep.astype(dtype)
    else:
        wy = np.where(keep, weight[safe], 0).astype(dtype)
    return wy, keep, safe


def _targets(target, weight, ignore_index, C, dtype):
    """(wy, keep, safe) of `_row_weights`, with the targets checked against C classes.
    keep None: every row is kept (the common case; rules treat None as all True)."""
    if weight is None and target.size:
        if target.dtype.kind == "i" and not 0 <= ignore_index < C:
            # the common case in ONE reduction (~1.5 us less than min and max, measured
            # on 32 targets): a negative target viewed as unsigned is >= C, and an
            # ignore_index outside [0, C) cannot equal a valid target
            if index_top(target) < C:
                return None, None, target.copy()
        else:
            lo, hi = target.min(), target.max()
            if 0 <= lo and hi < C and not lo <= ignore_index <= hi:
                # every target valid, none ignored
                return None, None, target.copy()
    wy, keep, safe = _row_weights(target, weight, ignore_index, dtype)
    _check_targets(safe, keep, C)
    return wy, keep, safe


def _check_targets(safe, keep, C):
    # `safe` holds 0 at ignored rows, so two reductions find any bad kept target
    if safe.size and (safe.max() >= C or safe.min() < 0):
        bad = keep & ((safe < 0) | (safe >= C))
        t = int(safe[bad][0])
        raise IndexError(f"Target {t} is out of bounds: expected class indices in [0, {C - 1}]")


def _ce_forward(x, target, weight=None, *, ignore_index=-100, label_smoothing=0.0,
                reduction="mean", **_saved):
    # NOTE: `**_saved` swallows the extras (lsm, wy, ...) when the engine re-runs this
    # forward under create_graph with the node's keyword arguments.
    n, C = x.shape
    lsm = _log_softmax_rows(x)
    wy, keep, safe = _targets(target, weight, ignore_index, C, x.dtype)
    picked = lsm[_arange(n), safe]
    eps = label_smoothing
    if eps == 0 and wy is None and reduction != "none":
        # the common case: -(sum picked) is sum(-picked) bit for bit (negation is exact),
        # one array op less
        denom = 1.0 if reduction == "sum" else x.dtype.type(n)
        out = -_sum(picked, axis=None)
        if reduction == "mean":
            out = out / denom
        return out.astype(x.dtype, copy=False), {"lsm": lsm, "wy": wy, "keep": keep,
                                                 "safe": safe, "denom": denom}
    loss = -picked if wy is None else -wy * picked        # (n,)
    if eps > 0:
        smooth = -(lsm.sum(1) if weight is None else lsm @ weight.astype(x.dtype))
        if keep is not None:
            smooth = np.where(keep, smooth, 0)
        loss = (1 - eps) * loss + (eps / C) * smooth
    if reduction == "none":
        out = loss
        denom = 1.0
    elif reduction == "sum":
        out = loss.sum()
        denom = 1.0
    else:
        # all rows ignored: 0/0 = nan (its RuntimeWarning is filtered, ops/rules/pointwise.py)
        denom = x.dtype.type(n) if wy is None else wy.sum()
        out = loss.sum() / denom
    return out.astype(x.dtype, copy=False), {"lsm": lsm, "wy": wy, "keep": keep,
                                             "safe": safe, "denom": denom}


def _ce_dx(xp, g, ans, x, target, weight=None, *, ignore_index=-100, label_smoothing=0.0,
           reduction="mean", lsm=None, wy=None, keep=None, safe=None, denom=1.0):
    n, C = x.shape
    # d(-w[y] log p_y)/dx = w[y] (p - onehot(y));  wy None: every w[y] is 1
    d = _call(xp, softmax_minus_onehot, x, lsm=lsm, safe=safe)
    if wy is not None:
        d = d * wy[:, None]
    eps = label_smoothing
    if eps > 0:
        # d(-sum_c w_c log p_c)/dx = (sum_c w_c) p - w
        wv = np.ones(C, dtype=x.dtype) if weight is None else _const(weight).astype(x.dtype)
        p = _call(xp, softmax_rows, x, lsm=lsm)
        ds = p * float(wv.sum()) - wv
        if keep is not None:
            ds = ds * keep[:, None].astype(x.dtype)
        d = d * (1 - eps) + ds * (eps / C)
    if reduction == "none":
        return d * xp.reshape(g, (n, 1))
    if reduction == "mean":
        return d * _mean_scale(g, denom)
    return d * g


def _softmax_rows_forward(x, *, lsm=None):
    # the forward's log-softmax is reused when given (x is unchanged: version check)
    return np.exp(_log_softmax_rows(x) if lsm is None else lsm)


def _softmax_rows_vjp(xp, u, ans, x, *, lsm=None):
    p = _call(xp, softmax_rows, x, lsm=lsm)
    return p * (u - xp.sum(u * p, axis=1, keepdims=True))


# softmax over the classes (axis 1) as cross-entropy's rule reads it: exp of the saved
# log-softmax in an ordinary backward, a recorded op (softmax's rule) under create_graph
softmax_rows = defop("softmax_rows", _softmax_rows_forward, inputs=("input",),
                     vjp=[_softmax_rows_vjp], reads=["input"],
                     doc="softmax(x, dim=1), from cross-entropy's saved log-softmax",
                     text="dx = p * (g - sum(g*p, 1))",
                     hint="finite for finite x: p lies in [0, 1]")


def _softmax_minus_onehot_forward(x, *, lsm=None, safe):
    # in place on the fresh softmax: ~2 us less than p - onehot with its zeros and
    # scatter on (32, 27) (measured); the same values
    p = _softmax_rows_forward(x, lsm=lsm)
    p[_arange(p.shape[0]), safe] -= 1.0
    return p


# softmax(x) - onehot(target): cross-entropy's per-row gradient; the onehot is constant,
# so its rule is softmax's
softmax_minus_onehot = defop(
    "softmax_minus_onehot", _softmax_minus_onehot_forward, inputs=("input",),
    vjp=[lambda xp, u, ans, x, *, lsm=None, safe: _softmax_rows_vjp(xp, u, ans, x, lsm=lsm)],
    reads=["input"], doc="softmax(x, dim=1) - onehot(target): cross-entropy's dx per row",
    text="dx = p * (g - sum(g*p, 1))  (the onehot is constant)",
    hint="finite for finite x: p lies in [0, 1]")


def _mean_scale(g, denom):
    """g / (sum of row weights). NOTE: every row ignored gives denom 0; the loss is nan
    (0/0) but PyTorch's gradient is 0, not 0 * inf."""
    return g / denom if denom else g * 0.0


def _reduce_rows_jvp(D, t, reduction, denom):
    """Forward mode of a loss whose per-row gradients are D: <D_i, t_i>, then reduce."""
    per_row = np.sum(D * t, axis=1)
    if reduction == "none":
        return per_row
    total = per_row.sum()
    return total / denom if reduction == "mean" else total


def _ce_jvp(xp, t, ans, x, target, weight=None, *, reduction="mean", denom=1.0, **kw):
    if t[0] is None:
        return None
    D = _ce_dx(np, np.ones(x.shape[0], dtype=x.dtype), ans, x, target, weight,
               reduction="none", denom=1.0, **kw)
    return _reduce_rows_jvp(D, t[0], reduction, denom)


cross_entropy = defop("cross_entropy", _ce_forward, extra=True, jvp=_ce_jvp,
                      inputs=("input", "target", "weight"), vjp=[_ce_dx, None, None],
                      doc="fused log_softmax + pick + reduction; dx = (softmax - onehot)/n", reads=["input", "", ""],
                      text="dlogits = (softmax(logits) - onehot(y)) / n",
                      hint=("cross_entropy's rule w[y]*(softmax(x) - onehot(y))/n is bounded: "
                            "finite for finite logits; with reduction='mean' and every target "
                            "ignored the loss is nan (0/0) but the gradient is 0"),
                      node="NllLossBackward0")


def _nll_forward(x, target, weight=None, *, ignore_index=-100, reduction="mean", **_saved):
    n, C = x.shape
    wy, keep, safe = _targets(target, weight, ignore_index, C, x.dtype)
    picked = x[np.arange(n), safe]
    loss = -picked if wy is None else -wy * picked
    if reduction == "none":
        out, denom = loss, 1.0
    elif reduction == "sum":
        out, denom = loss.sum(), 1.0
    else:
        denom = x.dtype.type(n) if wy is None else wy.sum()
        out = loss.sum() / denom  # all rows ignored: 0/0 = nan (warning filtered)
    return out.astype(x.dtype, copy=False), {"wy": wy, "safe": safe, "denom": denom}


def _nll_dx(xp, g, ans, x, target, weight=None, *, ignore_index=-100, reduction="mean",
            wy=None, safe=None, denom=1.0):
    n, C = x.shape
    d = np.zeros((n, C), dtype=x.dtype)
    d[np.arange(n), safe] = -1.0 if wy is None else -wy
    if reduction == "none":
        return d * xp.reshape(g, (n, 1))
    if reduction == "mean":
        return d * _mean_scale(g, denom)  # every target ignored: 0, as torch (not 0 * g/0)
    return d * g


def _nll_jvp(xp, t, ans, x, target, weight=None, *, reduction="mean", denom=1.0, **kw):
    if t[0] is None:
        return None
    D = _nll_dx(np, np.ones(x.shape[0], dtype=x.dtype), ans, x, target, weight,
                reduction="none", denom=1.0, **kw)
    return _reduce_rows_jvp(D, t[0], reduction, denom)


nll_loss = defop("nll_loss", _nll_forward, extra=True, jvp=_nll_jvp,
                 inputs=("input", "target", "weight"),
                 vjp=[_nll_dx, None, None], doc="loss = -w[y] x[y]; dx = -w[y] onehot(y) (a scatter)", reads=["", "", ""],
                 text="dlogp = -onehot(y)/n",
                 hint=("nll_loss's rule is -w[y]/n at each row's target: finite; with "
                       "reduction='mean' and every target ignored the loss is nan (0/0) but "
                       "the gradient is 0, as torch's"))


def _mean(a, axes, n):
    """a.mean(axis=axes, keepdims=True) without NumPy's Python-level mean wrapper
    (~2.5 us on small arrays): the same sum divided by the count n, bit-identical for
    float32/float64 (np.mean's float64 division then rounding to float32 is exact
    double rounding for a quotient). Other dtypes (float16) keep np.mean's rules."""
    if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return _sum(a, axis=axes, keepdims=True) / n
    return a.mean(axis=axes, keepdims=True)


def _mean_trailing(a, axes, n):
    """`_mean` over the trailing axes (layer norm's) as one matrix-vector product
    (ops/rules/_rowsum.py: (512, 64) f32 19 -> 4 us); other axes (batch norm's), other
    dtypes: `_mean` itself."""
    if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return _sum_trailing(a, axes) / n
    return _mean(a, axes, n)


def _add_into(out, b):
    """out + b, in place when that keeps out's dtype and shape (out is a fresh array)."""
    if b.dtype == out.dtype and b.ndim <= out.ndim:
        out += b
        return out
    return out + b


# ---- batch norm (normalize over `axes`: all but the channel axis 1) -----------------------
def _bshape(x, axes):
    """x's shape with 1 on the normalized axes: (1, C) for (N, C), (1, C, 1) for (N, C, L)."""
    shape = list(x.shape)
    for a in axes:
        shape[a] = 1
    return tuple(shape)


def _count(x, axes):
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _bn_forward(x, w=None, b=None, *, axes, eps, correction=0, **_saved):
    n = _count(x, axes)
    # ndarray methods (no np.* dispatch) and in-place updates of fresh temporaries:
    # the same arithmetic, in the same order, as the textbook lines in the comments.
    mean = _mean(x, axes, n)
    xc = x - mean
    var = _sum(xc * xc, axis=axes, keepdims=True) / (n - correction)   # sum(xc^2) / (n - c)
    invstd = 1.0 / np.sqrt(var + eps)
    xhat = xc * invstd
    out = xhat
    if w is not None:
        shape = _bshape(x, axes)
        out = xhat * w.reshape(shape)                            # xhat * w
        if b is not None:
            out = _add_into(out, b.reshape(shape))               # + b
    elif b is not None:
        out = xhat + b.reshape(_bshape(x, axes))
    else:
        out = xhat.copy()  # the output must not BE a saved value: `out += 1` is allowed
    return out, {"mean": mean, "var": var, "invstd": invstd, "xhat": xhat}


def _stats_forward(x, axes, eps, correction):
    """(xhat, invstd) of x over `axes`, as the forwards compute them."""
    n = _count(x, axes)
    xc = x - _mean(x, axes, n)
    var = (xc * xc).sum(axis=axes, keepdims=True) / (n - correction)
    invstd = 1.0 / np.sqrt(var + eps)
    return xc * invstd, invstd


def _xhat_forward(x, *, axes, eps, correction=0, xhat=None, invstd=None):
    # the forward's saved value when given (x is unchanged: the version check)
    return _stats_forward(x, axes, eps, correction)[0] if xhat is None else xhat


def _invstd_forward(x, *, axes, eps, correction=0, xhat=None, invstd=None):
    return _stats_forward(x, axes, eps, correction)[1] if invstd is None else invstd


def _xhat(xp, x, axes, eps, correction, kw):
    """xhat alone (the weight gradients need no invstd): see `_norm_stats`."""
    return _call(xp, norm_xhat, x, axes=axes, eps=eps, correction=correction, xhat=kw["xhat"],
                 invstd=kw["invstd"])


def _norm_stats(xp, x, axes, eps, correction, kw):
    """(xhat, invstd) through their table entries: the saved arrays in an ordinary
    backward; recorded under create_graph, so the second derivative flows through the
    statistics too."""
    st = dict(axes=axes, eps=eps, correction=correction, xhat=kw["xhat"], invstd=kw["invstd"])
    return _call(xp, norm_xhat, x, **st), _call(xp, norm_invstd, x, **st)


def _xhat_vjp(xp, u, ans, x, *, axes, eps, correction=0, **st):
    # xhat's derivative is self-adjoint: invstd (u - mean(u) - xhat sum(xhat u) / dof)
    xhat, invstd = _norm_stats(xp, x, axes, eps, correction, st)
    return _normalized_grad(xp, u, xhat, invstd, axes, _count(x, axes), correction)


def _invstd_vjp(xp, u, ans, x, *, axes, eps, correction=0, **st):
    # d invstd / dx = -invstd^3 (x - mean) / dof = -invstd^2 xhat / dof
    xhat, invstd = _norm_stats(xp, x, axes, eps, correction, st)
    return u * (invstd * invstd) * xhat * (-1.0 / (_count(x, axes) - correction))


norm_xhat = defop("norm_xhat", _xhat_forward, vjp=[_xhat_vjp], reads=["x"],
                  doc="(x - mean) / sqrt(var + eps) over axes: batch/layer norm's xhat",
                  text="dx = invstd * (g - mean(g) - xhat * sum(g*xhat) / dof)",
                  hint=("large where var + eps is near 0 (a constant row with a tiny eps): invstd grows as 1/sqrt(eps); keep eps > 0"))
norm_invstd = defop("norm_invstd", _invstd_forward, vjp=[_invstd_vjp], reads=["x"],
                    doc="1 / sqrt(var + eps) over axes: batch/layer norm's invstd",
                    text="dx = -invstd^2 * xhat * g / dof",
                    hint=("large where var + eps is near 0 (a constant row with a tiny eps): invstd grows as 1/sqrt(eps); keep eps > 0"))


def _trailing(x, axes):
    """axes are x's last len(axes) axes (layer norm's: a C kernel's rows)."""
    return x.ndim > 0 and sorted(a % x.ndim for a in axes) == list(
        range(x.ndim - len(axes), x.ndim))


def _normalized_grad_forward(gx, xhat, invstd, *, axes, n, correction=0):
    """dL/dx from gx = dL/dxhat: the C kernel over trailing axes (layer norm's) of
    float32 arrays when tapegrad's C kernels are built ((512, 64): ~46 -> ~15 us, 1
    thread, measured), else `_normalized_grad_numpy`, its reference (the same
    roundings, the row sums in another order)."""
    if _ckernels.LIB is not None and _trailing(gx, axes):
        dx = _ckernels.normalized_grad_f32(gx, xhat, invstd, n, n - correction)
        if dx is not None:
            return dx
    return _normalized_grad_numpy(gx, xhat, invstd, axes=axes, n=n, correction=correction)


def _normalized_grad_numpy(gx, xhat, invstd, *, axes, n, correction=0):
    """dL/dx from gx = dL/dxhat: each x_i moves the mean and the variance every row
    shares, which gives ONE formula:
        dx = invstd * (gx - mean(gx) - xhat * sum(gx * xhat) / (n - correction))
    computed with ndarray methods, updating one fresh temporary in place (measured:
    the xp form of the same formula made batch_norm's fused fwd+bwd (32, 200) 82 ->
    87 us, layer_norm's (64, 256) 124 -> 131 us; bench/bench_nn.py)."""
    t = gx * xhat
    s = _sum_trailing(t, axes) / (n - correction)
    d = gx - _mean_trailing(gx, axes, n)
    if t.dtype == d.dtype and t.shape == d.shape:  # reuse gx*xhat's buffer for xhat*s
        d -= np.multiply(xhat, s, out=t)
    else:
        d -= xhat * s
    d *= invstd
    return d


def _ng_dgx(xp, u, ans, gx, xhat, invstd, *, axes, n, correction=0):
    # the map gx -> dx is symmetric (invstd is constant over the normalized axes)
    return _call(xp, normalized_grad, u, xhat, invstd, axes=axes, n=n, correction=correction)


def _ng_dxhat(xp, u, ans, gx, xhat, invstd, *, axes, n, correction=0):
    dof = n - correction
    s = xp.sum(gx * xhat, axis=axes, keepdims=True) / dof
    return -invstd * (u * s + gx * (xp.sum(u * xhat, axis=axes, keepdims=True) / dof))


def _ng_dinvstd(xp, u, ans, gx, xhat, invstd, *, axes, n, correction=0):
    s = xp.sum(gx * xhat, axis=axes, keepdims=True) / (n - correction)
    inner = gx - xp.sum(gx, axis=axes, keepdims=True) / n - xhat * s
    return xp.sum(u * inner, axis=axes, keepdims=True)


# batch/layer norm's input gradient as a table entry: a fused NumPy kernel, with rules
# of its own (it is linear in gx) so that create_graph differentiates it again
normalized_grad = defop("normalized_grad", _normalized_grad_forward,
                        inputs=("grad", "xhat", "invstd"),
                        vjp=[_ng_dgx, _ng_dxhat, _ng_dinvstd],
                        reads=["xhat invstd", "grad xhat invstd", "grad xhat"],
                        doc="invstd (g - mean(g) - xhat sum(g xhat) / dof): the norms' dx",
                        text="dgrad = normalized_grad(g) ; dxhat = -invstd * (g * s + grad * "
                             "sum(g*xhat) / dof) ; dinvstd = sum(g * dx / invstd)",
                        hint=("large where var + eps is near 0 (a constant row with a tiny eps): invstd grows as 1/sqrt(eps); keep eps > 0"))


def _normalized_grad(xp, gx, xhat, invstd, axes, n, correction):
    return _call(xp, normalized_grad, gx, xhat, invstd, axes=axes, n=n,
                 correction=correction)


def _bn_dx(xp, g, ans, x, w=None, b=None, *, axes, eps, correction=0, **kw):
    # w is constant over the normalized axes, so it commutes with the operator: dx =
    # normalized_grad(g * w, xhat, invstd) = normalized_grad(g, xhat, invstd * w), and the
    # (C,)-sized product replaces a full-size g * w (one big array op less)
    xhat, invstd = _norm_stats(xp, x, axes, eps, correction, kw)
    scale = invstd if w is None else invstd * xp.reshape(w, _bshape(x, axes))
    return _normalized_grad(xp, g, xhat, scale, axes, _count(x, axes), correction)


def _bn_dw(xp, g, ans, x, w=None, b=None, *, axes, eps, correction=0, **kw):
    return _call(xp, sum_to, g * _xhat(xp, x, axes, eps, correction, kw), axes=tuple(axes),
                 shape=tuple(w.shape))


def _bn_db(xp, g, ans, x, w=None, b=None, *, axes, eps, correction=0, **kw):
    return _call(xp, sum_to, g, axes=tuple(axes), shape=tuple(b.shape))


def _bn_backward(xp, g, ans, x, w=None, b=None, *, axes, eps, correction=0, **kw):
    """(dx, dw, db) in one call: the per-input rules above, sharing what they have in
    common. sum(g * xhat) is dw's sum and dx's projection; sum(g) is db and dx's mean:
        dx = invstd * w * (g - sum(g) / n - xhat * sum(g * xhat) / (n - correction))
    7 full-size array ops instead of the rules' 10 (and one call instead of three): the
    same arrays bit for bit (the same sums in the same order). Under create_graph the
    per-input rules run (each recorded through its table entries), and for float16
    (whose mean is not sum / n: `_mean`)."""
    if xp is not np or g.dtype.kind != "f" or g.dtype.itemsize < 4:
        return (_bn_dx(xp, g, ans, x, w, b, axes=axes, eps=eps, correction=correction, **kw),
                None if w is None else _bn_dw(xp, g, ans, x, w, b, axes=axes, eps=eps,
                                              correction=correction, **kw),
                None if b is None else _bn_db(xp, g, ans, x, w, b, axes=axes, eps=eps,
                                              correction=correction, **kw))
    xhat, invstd = kw["xhat"], kw["invstd"]
    if xhat is None:
        xhat, invstd = _stats_forward(x, axes, eps, correction)
    n = _count(x, axes)
    gx = g * xhat
    gxh = _sum_trailing(gx, axes)  # normalized_grad's sum, as it computes it
    gs = _sum(g, axis=axes, keepdims=True)  # _mean's sum
    scale = invstd if w is None else invstd * w.reshape(_bshape(x, axes))
    d = g - gs / n  # normalized_grad_forward's arithmetic, in its order
    d -= xhat * (gxh / (n - correction))
    d *= scale
    if axes == tuple(range(len(axes))):
        # leading axes (BatchNorm1d): dw and db are sum_to's sums (a product with ones,
        # another summation order than gxh / gs): the rules' bits, at two (C,)-sized passes
        dw = None if w is None else _sum_to_forward(gx, axes=axes, shape=tuple(w.shape))
        db = None if b is None else _sum_to_forward(g, axes=axes, shape=tuple(b.shape))
        return d, dw, db
    return (d, None if w is None else gxh.reshape(w.shape),
            None if b is None else gs.reshape(b.shape))


def _norm_tangent(tx, xhat, invstd, axes, dof):
    # d xhat = invstd * (dx - mean(dx) - xhat * sum(xhat * dx) / dof): the same
    # (self-adjoint) operator as the backward rule.
    return invstd * (tx - np.mean(tx, axis=axes, keepdims=True)
                     - xhat * (np.sum(xhat * tx, axis=axes, keepdims=True) / dof))


def _bn_jvp(xp, t, ans, x, w=None, b=None, *, axes, eps, correction=0, **kw):
    xhat, invstd = kw["xhat"], kw["invstd"]
    shape = _bshape(x, axes)
    out = 0.0
    if t[0] is not None:
        dxh = _norm_tangent(t[0], xhat, invstd, axes, _count(x, axes) - correction)
        out = out + (dxh if w is None else dxh * w.reshape(shape))
    if len(t) > 1 and t[1] is not None:
        out = out + xhat * t[1].reshape(shape)
    if len(t) > 2 and t[2] is not None:
        out = out + t[2].reshape(shape)
    return out


batch_norm = defop("batch_norm", _bn_forward, extra=True, jvp=_bn_jvp,
                   inputs=("input", "weight", "bias"),
                   vjp=[_bn_dx, _bn_dw, _bn_db], backward=_bn_backward,
                   doc="training-mode batch norm with the batch statistics, fused backward", reads=["input weight", "input weight", ""],
                   text="dx = (g - mean(g) - xhat*mean(g*xhat)) * w/std",
                   hint=("batch_norm's rule divides by std = sqrt(var + eps): finite for eps >"
                         " 0; eps = 0 on a constant channel (var = 0) gives inf"),
                   node="NativeBatchNormBackward0")


# ---- layer norm (normalize over the trailing `axes`; weight has their shape) ----------------
def _ln_forward(x, w=None, b=None, *, axes, eps, **_saved):
    """(out, {"invstd", "xhat"}): the C kernel over float32 rows when tapegrad's C kernels
    are built ((512, 64): ~50 -> ~22 us, 1 thread, measured), else `_ln_forward_numpy`,
    its reference (the same roundings, the row sums in another order)."""
    if (_ckernels.LIB is not None and type(eps) in (float, int) and _trailing(x, axes)
            and all(a is None or a.shape == x.shape[x.ndim - len(axes):] for a in (w, b))):
        got = _ckernels.layer_norm_f32(x, w, b, _count(x, axes), eps)
        if got is not None:
            out, xhat, invstd = got  # (invstd flat: the normalized axes kept as 1)
            kept = x.shape[:x.ndim - len(axes)] + (1,) * len(axes)
            return out, {"invstd": invstd.reshape(kept), "xhat": xhat}
    return _ln_forward_numpy(x, w, b, axes=axes, eps=eps)


def layer_norm_rows(x, w, b, *, axes, eps):
    """(out, xhat, invstd): `_ln_forward` as a tuple, the call tg.compile's replay runs
    for a layer norm (the same kernel as eager: the same bits)."""
    out, saved = _ln_forward(x, w, b, axes=axes, eps=eps)
    return out, saved["xhat"], saved["invstd"]


def _ln_forward_numpy(x, w=None, b=None, *, axes, eps, **_saved):
    # the arithmetic of mean(xc * xc) and xhat * w + b, in TWO full-size arrays: xc
    # becomes xhat in place, and (xc * xc)'s buffer becomes the output (each fresh
    # ~128 KB+ array costs its page faults; the values are the same bits)
    n = _count(x, axes)
    mean = _mean_trailing(x, axes, n)
    xc = x - mean
    fused = xc.dtype == x.dtype and (w is None or w.dtype == x.dtype) and (
        b is None or b.dtype == x.dtype)
    sq = np.multiply(xc, xc)
    var = _mean_trailing(sq, axes, n)
    invstd = 1.0 / np.sqrt(var + eps)
    if not fused or invstd.dtype != x.dtype:  # mixed dtypes: NumPy's promotion, fresh arrays
        xhat = xc * invstd
        out = xhat
        if w is not None:
            out = xhat * w
            if b is not None:
                out = _add_into(out, b)
        elif b is not None:
            out = xhat + b
        return out, {"invstd": invstd, "xhat": xhat}
    xhat = np.multiply(xc, invstd, out=xc)
    out = xhat
    if w is not None:
        out = np.multiply(xhat, w, out=sq)
        if b is not None:
            out += b
    elif b is not None:
        out = np.add(xhat, b, out=sq)
    return out, {"invstd": invstd, "xhat": xhat}


def _ln_dx(xp, g, ans, x, w=None, b=None, *, axes, eps, **kw):
    xhat, invstd = _norm_stats(xp, x, axes, eps, 0, kw)
    gx = g if w is None else g * w
    return _normalized_grad(xp, gx, xhat, invstd, axes, _count(x, axes), 0)


def _ln_dw(xp, g, ans, x, w=None, b=None, *, axes, eps, **kw):
    return _sum_leading(xp, g * _xhat(xp, x, axes, eps, 0, kw), w.ndim)


def _ln_db(xp, g, ans, x, w=None, b=None, *, axes, eps, **kw):
    return _sum_leading(xp, g, b.ndim)


def _ln_jvp(xp, t, ans, x, w=None, b=None, *, axes, eps, **kw):
    xhat, invstd = kw["xhat"], kw["invstd"]
    out = 0.0
    if t[0] is not None:
        dxh = _norm_tangent(t[0], xhat, invstd, axes, _count(x, axes))
        out = out + (dxh if w is None else dxh * w)
    if len(t) > 1 and t[1] is not None:
        out = out + xhat * t[1]
    if len(t) > 2 and t[2] is not None:
        out = out + t[2]
    return out


layer_norm = defop("layer_norm", _ln_forward, extra=True, jvp=_ln_jvp,
                   inputs=("input", "weight", "bias"),
                   vjp=[_ln_dx, _ln_dw, _ln_db], doc="layer norm over trailing axes, fused backward", reads=["input weight", "input weight", ""],
                   text="dx = (g*w - mean(g*w) - xhat*mean(g*w*xhat)) / std",
                   hint=("layer_norm's rule divides by std = sqrt(var + eps): finite for eps >"
                         " 0; eps = 0 on a constant row (var = 0) gives inf"),
                   node="NativeLayerNormBackward0")


# ---- embedding ----------------------------------------------------------------------------
_ONEHOT_MAX = 1 << 15  # idx.size * V up to which the backward uses a one-hot matmul
def _embedding_forward(w, idx, *, padding_idx=-1):
    return w[idx]


def _embedding_backward_forward(g, idx, *, num_weights, padding_idx=-1):
    # Scatter-add: the rows of g go to the rows of W they came from; a row picked k
    # times receives the SUM of its k gradients (worked example 10).
    V, D = num_weights, g.shape[-1]
    flat = np.asarray(idx).reshape(-1)
    if padding_idx >= 0:
        keep = flat != padding_idx
    g2 = g.reshape(-1, D)
    # NOTE: only for finite g: in a matmul 0 * inf = nan would reach every row
    if flat.size * V <= _ONEHOT_MAX and _all(np.isfinite(g2), axis=None):
        # small (a character vocabulary): onehot(idx)^T @ g is one BLAS call, about
        # twice as fast as np.add.at here; the same sums (added in another order)
        onehot = np.zeros((flat.size, V), dtype=g.dtype)
        onehot[_arange(flat.size), flat] = 1.0
        if padding_idx >= 0:
            onehot[~keep] = 0.0
        return onehot.T @ g2
    gw = np.zeros((V, D), dtype=g.dtype)
    if padding_idx >= 0:
        flat, g2 = flat[keep], g2[keep]
    return add_rows(gw, flat, g2)  # vectorized scatter-add (np.add.at's result)


def _embedding_backward_vjp(xp, u, ans, g, idx, *, num_weights, padding_idx=-1):
    # the adjoint of the scatter-add is the row read, with the padding rows left out
    rows = _call(xp, embedding, u, idx, padding_idx=padding_idx)
    if padding_idx < 0:
        return rows
    return xp.where((np.asarray(idx) != padding_idx)[..., None], rows, 0.0)


embedding_backward = defop(
    "embedding_backward", _embedding_backward_forward, linear=True, promote=False,
    inputs=("grad", "indices"), vjp=[_embedding_backward_vjp, None], reads=["", ""],
    doc="dW = scatter-add of the rows of dY at idx: the VJP of embedding",
    text="dgrad = g[idx] (rows read back; padding rows 0)",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is")


def _embedding_dw(xp, g, ans, w, idx, *, padding_idx=-1):
    return _call(xp, embedding_backward, g, idx, num_weights=w.shape[0],
                 padding_idx=padding_idx)


def _embedding_jvp(xp, t, ans, w, idx, *, padding_idx=-1):
    if t[0] is None:
        return None
    return _call(xp, embedding, t[0], idx, padding_idx=padding_idx)


embedding = defop("embedding", _embedding_forward, inputs=("weight", "indices"),
                  vjp=[_embedding_dw, None], jvp=_embedding_jvp, doc="Y = W[idx]; dW = scatter-add of dY (padding row gets none)", reads=["", ""],
                  text=("dW = zeros, g rows scatter-ADDED at the token ids (repeats add; none "
                        "to padding_idx)"),
                  hint=("embedding's rule adds rows of g into dW, never infinite: a non-finite"
                        " result here means the incoming gradient already was"),
                  strict=lambda args: args.get("padding_idx", -1) >= 0)


# ---- activations -----------------------------------------------------------------------------
def _leaky_forward(x, *, negative_slope=0.01):
    return np.where(x > 0, x, x * np.asarray(negative_slope, dtype=x.dtype))


leaky_relu = defop("leaky_relu", _leaky_forward, partials=[
    lambda xp, ans, x, negative_slope=0.01: xp.where(x > 0, 1.0, negative_slope)
], vjp=[
    # NOTE: at x == 0 the slope side is taken, as PyTorch does.
    lambda xp, g, ans, x, negative_slope=0.01: xp.where(x > 0, g, g * negative_slope)
], reads=["x"],
    text="dx = g where x>0 else slope*g",
    hint=("leaky_relu'(x) is 1 or negative_slope (the slope at x = 0), never infinite: a "
          "non-finite result here means the incoming gradient already was"))

def _hardtanh_inside(x, min_val, max_val):
    xr = E._raw(x)  # a constant mask in both modes
    return (xr > min_val) & (xr < max_val)


hardtanh = defop("hardtanh", lambda x, *, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val),
                 vjp=[lambda xp, g, ans, x, min_val=-1.0, max_val=1.0:
                      xp.where(_hardtanh_inside(x, min_val, max_val), g, 0.0)],
                 jvp=lambda xp, t, ans, x, min_val=-1.0, max_val=1.0:
                     xp.where(_hardtanh_inside(x, min_val, max_val), t[0], 0.0),
                 reads=["x"],
                 text="dx = g where min_val<x<max_val else 0 (0 at the bounds, unlike clamp)",
                 hint=("hardtanh's derivative is 0 or 1, never infinite: a non-finite result "
                       "here means the incoming gradient already was"))


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_GELU_A = 0.044715


def _erf(x):
    try:  # SciPy's vectorized erf when it is installed; math.erf otherwise (NumPy has none)
        from scipy.special import erf
        return erf(x)
    except ImportError:
        return _erf_numpy(x).astype(x.dtype, copy=False)


def _gelu_forward(x, *, approximate="none"):
    if approximate == "tanh":
        u = _SQRT_2_OVER_PI * (x + _GELU_A * x ** 3)
        return (0.5 * x * (1.0 + np.tanh(u))).astype(x.dtype, copy=False)
    return (x * _normal_cdf(x)).astype(x.dtype, copy=False)


def _normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2: the expensive part of gelu (erf)."""
    return 0.5 * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))


def _gelu_forward_saving(x, *, approximate="none", **_saved):
    """gelu's forward that keeps what the backward needs (erf costs ~30 exps).

    float32 takes `_gelu_f32`: it keeps gelu'(x) itself, so the backward is ONE
    multiply (no erf, no exp); float64 keeps Phi(x)."""
    if approximate == "tanh":
        return _gelu_forward(x, approximate=approximate), {}
    if x.dtype == np.float32:
        y, d = _gelu_f32(x)
        return y, {"dgelu": d}
    cdf = _normal_cdf(x)
    return (x * cdf).astype(x.dtype, copy=False), {"cdf": cdf}


# Abramowitz & Stegun 7.1.26: erfc(z) = t (a1 + t (a2 + ... + t a5)) exp(-z^2),
# t = 1 / (1 + p z), z >= 0, |error| <= 1.5e-7: about 1 float32 ulp of Phi near 1.
# (PyTorch's vectorized float32 erf is the same formula.)
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# The kernel evaluates -Phi(-|x|) / exp(-x^2/2) = -0.5 t (a1 + ... + t a5): -0.5 folded
# into the coefficients (_AS_B). Two passes fewer than that written as it stands: t is
# computed as K / (|x| + K), K = 1 / (p sqrt(1/2)), and scaled by S, S^5 = the t^5
# coefficient, so that the polynomial in u = S t is monic, u (C0 + u (C1 + ... + u)),
# Ck = b_k / S^(k+1); S folded into K's numerator (no pass). Max |error| in Phi on
# [-12, 12]: 2.63e-7, the unscaled form's 2.62e-7 (measured, vs float64 erf).
_AS_B = tuple(-0.5 * a for a in _AS_A)
_AS_K = 1.0 / (_AS_P * _SQRT_HALF)
_AS_S = -((-_AS_B[4]) ** 0.2)                    # the real fifth root (b_5 < 0)
_AS_SK = _AS_S * _AS_K
_AS_C = tuple(_AS_B[k] / _AS_S ** (k + 1) for k in range(4))
_SIGN_BIT = np.uint32(0x80000000)


def _normal_cdf_exp_f32(x):
    """(Phi(x), exp(-x^2 / 2)) for a float32 array (at least 1-d), in float32, with ONE
    exp and no comparison: Phi(-|x|) by A&S 7.1.26, then Phi(x) = 0.5 + sign(x) (0.5 -
    Phi(-|x|)) with x's sign bit copied by an integer OR (0.5 - Phi(-|x|) >= 0).

    SciPy's float32 erf costs ~17 ns per element (2.3 ms on the tiny GPT's (32, 16, 256)
    MLP activation, 1 thread, measured); this ~0.29 ms (the previous form of this
    kernel, with a bool-mask multiply and a pass more, ~0.34 ms). Max error vs
    float64 erf: ~3e-7 in Phi (tests/test_gelu_f32.py, against torch).
    Branch-free on purpose: np.where and masked ufuncs are slow on mixed-sign data."""
    u = np.abs(x)
    u += _AS_K
    t = np.divide(_AS_SK, u, out=u)                  # S t, t = 1 / (1 + p |x| / sqrt 2)
    with np.errstate(over="ignore"):                 # |x| > 1.8e19: x^2 = inf, exp -> 0
        e = np.square(x)
    e *= -0.5
    np.exp(e, out=e)                                 # exp(-x^2 / 2)
    q = t + _AS_C[3]
    q *= t
    for c in _AS_C[2::-1]:                           # Horner, monic in S t
        q += c
        q *= t
    q *= e                                           # -h, h = Phi(-|x|)
    q += 0.5                                         # 0.5 - h >= 0 (or nan)
    # x's sign bits into t's buffer (t is no longer read): no fresh array, whose pages
    # glibc's default malloc would fault in again on every call
    sign = np.bitwise_and(x.view(np.uint32), _SIGN_BIT, out=t.view(np.uint32))
    bits = q.view(np.uint32)
    bits |= sign                                     # sign(x) (0.5 - h)
    q += 0.5                                         # Phi(x): 1 - h for x >= 0, h below
    return q, e


def _normal_cdf_pdf_f32(x):
    """(Phi(x), phi(x)) for a float32 array, in float32: `_normal_cdf_exp_f32`."""
    if x.ndim == 0:  # 0-d ufunc results are scalars, which the in-place steps cannot fill
        cdf, pdf = _normal_cdf_pdf_f32(x.reshape(1))
        return cdf.reshape(()), pdf.reshape(())
    cdf, e = _normal_cdf_exp_f32(x)
    e *= _INV_SQRT_2PI
    return cdf, e


# kernels.c's `tg_gelu_f32` takes these float32 constants (the formula is written once,
# here: the C loop runs `_gelu_f32_numpy`'s operations in its order)
_GELU_CONSTS = np.array([_AS_K, _AS_SK, _AS_C[3], _AS_C[2], _AS_C[1], _AS_C[0],
                         _INV_SQRT_2PI], dtype=np.float32)


def _gelu_f32(x):
    """(gelu(x), gelu'(x)) for a float32 array: the C kernel when tapegrad's C kernels
    are built (one pass, ~4x faster: (32, 16, 256) 380 -> 95 us, 1 thread, measured),
    else `_gelu_f32_numpy`, its reference. The two differ only where the C library's
    exp and NumPy's round differently (one ulp)."""
    if _ckernels.LIB is not None:
        return _ckernels.gelu_f32(x, _GELU_CONSTS)
    return _gelu_f32_numpy(x)


def _gelu_f32_numpy(x):
    """(gelu(x), gelu'(x)) for a float32 array: y = x Phi(x) and d = Phi(x) + x phi(x),
    the backward's factor, computed here from the kernel's Phi and exp (x phi(x) in
    place on the exp, y in place on Phi: two fresh arrays, both returned). The simple
    formula (SciPy's erf, float64) is `_normal_cdf` / `_gelu_grad_from_cdf`; the tests
    compare the two."""
    if x.ndim == 0:
        y, d = _gelu_f32_numpy(x.reshape(1))
        return y.reshape(()), d.reshape(())
    cdf, e = _normal_cdf_exp_f32(x)
    e *= x
    e *= _INV_SQRT_2PI                               # x phi(x)
    e += cdf
    cdf *= x                                         # y, in place on Phi's buffer
    return cdf, e


def _gelu_grad_forward(x, *, approximate="none", cdf=None, dgelu=None):
    """d gelu / dx (the forward's saved gelu'(x) for float32, from its Phi(x) for
    float64, when given)."""
    if dgelu is not None:  # x is unchanged since the forward (the version check)
        return dgelu
    if cdf is not None:
        return _gelu_grad_from_cdf(x, cdf)
    if approximate == "tanh":
        u = _SQRT_2_OVER_PI * (x + _GELU_A * x ** 3)
        t = np.tanh(u)
        du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_A * x * x)
        return (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du).astype(x.dtype, copy=False)
    if x.dtype == np.float32:
        return _gelu_f32(x)[1]
    return _gelu_grad_from_cdf(x, _normal_cdf(x))


def _gelu_grad_from_cdf(x, cdf):
    pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return (cdf + x * pdf).astype(x.dtype, copy=False)


def _gelu_second(xp, ans, x, approximate="none", cdf=None, dgelu=None):
    """d^2 gelu / dx^2, in recordable ops (used when differentiating twice)."""
    if approximate == "tanh":
        u = _SQRT_2_OVER_PI * (x + _GELU_A * x * x * x)
        t = xp.tanh(u)
        du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_A * x * x)
        ddu = _SQRT_2_OVER_PI * 6.0 * _GELU_A * x
        return (1.0 - t * t) * (du - x * t * du * du + 0.5 * x * ddu)
    return xp.exp(-0.5 * x * x) * _INV_SQRT_2PI * (2.0 - x * x)


gelu_backward = defop("gelu_backward", _gelu_grad_forward, partials=[_gelu_second],
                      doc="the derivative of gelu, as an op so that gelu has a second derivative", reads=["x"],
                      text="dx = g*gelu''(x)",
                      hint=("gelu''(x) (phi(x)*(2 - x**2) in the erf form) is bounded: finite "
                            "for finite x"))


def _gelu_partial(xp, ans, x, approximate="none", cdf=None, dgelu=None):
    # cdf: Phi(x) saved by the forward (float64: no second erf); dgelu: gelu'(x) itself
    # (float32: the backward is g * dgelu)
    return _call(xp, gelu_backward, x, approximate=approximate, cdf=cdf, dgelu=dgelu)


gelu = defop("gelu", _gelu_forward_saving, extra=True, partials=[_gelu_partial],
             doc="x * Phi(x) (erf) or 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", reads=["x"],
             text="dx = g*gelu'(x), gelu'(x) = Phi(x) + x*phi(x)",
             hint=("gelu'(x) = Phi(x) + x*phi(x) is bounded (between about -0.13 and 1.13): "
                   "finite for finite x"))

# ---- dropout: multiply by a fixed mask (already scaled by 1/(1-p)) ------------------------------
dropout = defop("dropout", lambda x, *, mask: x * mask, linear=True,
                vjp=[lambda xp, g, ans, x, *, mask: g * mask],
                doc="y = x * mask, mask = keep / (1 - p)",
                text="dx = g*mask/(1-p)",
                hint=("dropout multiplies g by its mask (0 or 1/(1-p); all 0 for p = 1), never"
                      " infinite: a non-finite result here means the incoming gradient already"
                      " was"),
                node="MulBackward0")


# ---- binary cross-entropy --------------------------------------------------------------------
def _bce_forward(x, y):
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), -100.0)
        l1x = np.maximum(np.log1p(-x), -100.0)
    return -(y * lx + (1.0 - y) * l1x)


def _bce_dx(xp, g, ans, x, y):
    # PyTorch's rule: (x - y) / max(x (1 - x), 1e-12)
    return g * (x - y) / xp.maximum(x * (1.0 - x), 1e-12)


def _bce_dy(xp, g, ans, x, y):
    return g * (xp.log(1.0 - x) - xp.log(x))  # -logit(x)


binary_cross_entropy = defop("binary_cross_entropy", _bce_forward, inputs=("input", "target"),
                             vjp=[_bce_dx, _bce_dy], partials=[
                                 lambda xp, ans, x, y: _bce_dx(xp, 1.0, ans, x, y),
                                 lambda xp, ans, x, y: _bce_dy(xp, 1.0, ans, x, y)],
                             doc="-(y log x + (1-y) log(1-x)), logs clamped at -100", reads=["input target", "input"],
                             text=("dx = g*(x-y)/max(x*(1-x), 1e-12) ; dy = g*(log(1-x) - "
                                   "log(x))"),
                             hint=("d/dinput = (x-y)/max(x*(1-x), 1e-12) is clamped, so "
                                   "finite, but huge near x = 0 or 1; d/dtarget = log(1-x) - "
                                   "log(x) is infinite at x = 0 or 1: use "
                                   "binary_cross_entropy_with_logits on the logits instead"))


def _softplus_neg_forward(x):
    """log(1 + exp(-x)) without overflow: max(-x, 0) + log1p(exp(-|x|))."""
    return np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))


# d/dx log(1 + exp(-x)) = sigmoid(x) - 1
softplus_neg = defop("softplus_neg", _softplus_neg_forward,
                     partials=[lambda xp, ans, x: _sig(xp, x) - 1.0], reads=["x"],
                     doc="log(1 + exp(-x)), stable: the logits losses' softplus",
                     text="dx = g * (sigmoid(x) - 1)",
                     hint="finite for every finite x (the stable form never overflows)")


def _softplus_neg(xp, x):
    return _call(xp, softplus_neg, x)


def _sig(xp, x):
    return _call(xp, E.sigmoid, x)  # the stable sigmoid (elementwise table entry)


bce_with_logits = defop(
    "binary_cross_entropy_with_logits",
    lambda x, y: (1.0 - y) * x + _softplus_neg(np, x), inputs=("input", "target"),
    opmath=False,  # torch computes this loss as float16 ops, each rounded (not one kernel)
    vjp=[lambda xp, g, ans, x, y: g * (_sig(xp, x) - y),
         lambda xp, g, ans, x, y: -g * x], partials=[lambda xp, ans, x, y: _sig(xp, x) - y, lambda xp, ans, x, y: -x],
    doc="(1-y) x + log(1 + exp(-x)); dx = sigmoid(x) - y", reads=["input target", "input"],
    text="dx = g*(sigmoid(x) - y) ; dy = -g*x",
    hint="d/dinput = sigmoid(x) - y and d/dtarget = -x: finite for finite inputs")


def _bce_pw_forward(x, y, pw):
    return (1.0 - y) * x + (1.0 + (pw - 1.0) * y) * _softplus_neg(np, x)


bce_with_logits_pw = defop(
    "binary_cross_entropy_with_logits_pos_weight", _bce_pw_forward, opmath=False,
    inputs=("input", "target", "pos_weight"), vjp=[lambda xp, g, ans, x, y, pw: g * ((1.0 + (pw - 1.0) * y) * _sig(xp, x) - pw * y),
         lambda xp, g, ans, x, y, pw: g * ((pw - 1.0) * _softplus_neg(xp, x) - x),
         lambda xp, g, ans, x, y, pw: g * y * _softplus_neg(xp, x)],
    partials=[lambda xp, ans, x, y, pw: (1.0 + (pw - 1.0) * y) * _sig(xp, x) - pw * y,
              lambda xp, ans, x, y, pw: (pw - 1.0) * _softplus_neg(xp, x) - x,
              lambda xp, ans, x, y, pw: y * _softplus_neg(xp, x)],
    doc="(1-y) x + (1 + (pw-1) y) log(1 + exp(-x))", reads=["input target pos_weight", "input pos_weight", "input target"],
    text=("dx = g*((1+(pw-1)*y)*sigmoid(x) - pw*y) ; dy = g*((pw-1)*softplus(-x) - x) ; dpw = "
          "g*y*softplus(-x)"),
    hint=("all three derivatives (sigmoid and a stable softplus(-x) = log(1 + exp(-x))) are "
          "finite for finite inputs"),
    node="BinaryCrossEntropyWithLogitsBackward0")


def _erfinv(y):
    """Inverse error function (SciPy's when installed; Newton on erf otherwise)."""
    try:
        from scipy.special import erfinv
        return erfinv(y)
    except ImportError:
        return _erfinv_numpy(y)


def _erfinv_numpy(y):
    """erfinv without SciPy: Winitzki's approximation, then Newton steps on erf."""
    y = np.asarray(y, dtype=np.float64)
    a = 0.147
    ln = np.log1p(-y * y)
    t = 2.0 / (math.pi * a) + ln / 2.0
    x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    for _ in range(4):
        err = _erf_numpy(x) - y
        x = x - err / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def _erf_numpy(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)

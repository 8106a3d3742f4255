"""`tapegrad.nn.functional` (import as `F`): the stateless forms of the layers and losses.

Each function checks its arguments the way PyTorch does, then calls a table entry
(fused kernels in `tapegrad/ops/rules/nn.py`, elementwise ops in `ops/rules/pointwise.py`)
or composes existing ops. Names, arguments and defaults are PyTorch's.
"""
import math
import warnings
from math import prod as _prod

import numpy as np

from .. import ops as _ops_pkg  # noqa: F401  (make sure the ops package is loaded)
from ..core import tape as _tape
from ..core.record import apply, apply_saved
from ..ops import inplace as _IP
from ..ops import pointwise as _pointwise
from ..ops import reductions as _reductions
from ..ops import shape as _shape
from ..ops.rules import nn as _K
from .._tensor import Tensor

from ._loss_reduction import _REDUCTIONS, _reduce, _reduction  # noqa: E402,F401


def _t(x, name="input"):
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


# ---- linear -----------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """y = x W^T + b. Shapes: x (*, in), W (out, in), b (out,) -> (*, out)."""
    x = _t(input)
    xs, ws = x._data.shape, weight._data.shape
    if len(ws) != 2 or not xs or xs[-1] != ws[1]:
        xs, ws = tuple(x.shape), tuple(weight.shape)
        rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1
        raise RuntimeError(
            f"linear: input of shape {xs} does not fit weight of shape {ws} (in_features = "
            f"{ws[-1] if ws else '?'}, the input's last dimension is "
            f"{xs[-1] if xs else '?'}): mat1 and mat2 shapes cannot be multiplied "
            f"({rows}x{xs[-1] if xs else 0} and {ws[-1] if ws else 0}x{ws[0] if ws else 0})")
    if bias is not None and bias._data.shape not in ((ws[0],), ()):
        raise RuntimeError(f"linear: bias of shape {tuple(bias.shape)} does not match weight "
                           f"of shape {tuple(weight.shape)} (expected ({weight.shape[0]},))")
    return apply(_K.linear, x, weight, bias)


def bilinear(*args, **kwargs):
    raise NotImplementedError("bilinear is not implemented in tapegrad")


# ---- activations ----------------------------------------------------------------------------
def relu(input, inplace=False):
    """max(x, 0); the gradient passes where x > 0 (NOTE: relu'(0) = 0, as in PyTorch)."""
    return relu_(input) if inplace else _pointwise.relu(input)


def relu_(input):
    """max(x, 0) in place (torch.nn.functional.relu_)."""
    return _pointwise.relu_(input)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val); NOTE: the gradient passes strictly inside the bounds,
    as PyTorch's hardtanh_backward does (clamp's passes at the bounds too)."""
    x = _t(input)
    if inplace:
        return _pointwise.inplace_of(x, lambda v: hardtanh(v, min_val, max_val))
    y = _pointwise.clamp(x, min_val, max_val)
    inside = (x._data > min_val) & (x._data < max_val)
    if inside.all() or not x.requires_grad:
        return y
    return _pointwise.where(inside, y, y.detach())



def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, negative_slope * x elsewhere."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    return apply(_K.leaky_relu, _t(input), negative_slope=float(negative_slope))


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu in place (torch.nn.functional.leaky_relu_; LeakyReLU(inplace=True) as
    DCGAN discriminators build it)."""
    return _pointwise.inplace_of(_t(input), lambda v: leaky_relu(v, negative_slope))


def gelu(input, approximate="none"):
    """x * Phi(x) (exact, with erf) or the tanh approximation (`approximate='tanh'`)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh. "
                           f"(got {approximate!r})")
    return apply(_K.gelu, _t(input), approximate=approximate)


def silu(input, inplace=False):
    if inplace:
        return _pointwise.inplace_of(_t(input), silu)
    return input * _pointwise.sigmoid(input)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    x = _t(input)
    if inplace:
        return _pointwise.inplace_of(x, lambda v: elu(v, alpha))
    neg = _pointwise.where(x._data > 0, 0.0, x)  # exp only of non-positive values (no overflow)
    return _pointwise.where(x._data > 0, x, alpha * (_pointwise.exp(neg) - 1.0))


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, computed stably; linear where beta x > threshold."""
    x = _t(input)
    bx = x * beta
    # max(bx, 0) + log(1 + exp(-|bx|)), written with where so that the slope at 0 is 1/2
    pos = bx._data > 0
    soft = (_pointwise.where(pos, bx, 0.0) + _pointwise.log(1.0 + _pointwise.exp(_pointwise.where(pos, -bx, bx)))) / beta
    return _pointwise.where(bx._data > threshold, x, soft)


def tanh(input):
    return _pointwise.tanh(input)


def sigmoid(input):
    return _pointwise.sigmoid(input)


def _softmax_dim(ndim):
    # PyTorch's legacy implicit choice when dim is None
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    x = _t(input)
    if dim is None:
        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = _softmax_dim(x.ndim)
    return _reductions.softmax(x, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    x = _t(input)
    if dim is None:
        warnings.warn("Implicit dimension choice for log_softmax has been deprecated. Change "
                      "the call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = _softmax_dim(x.ndim)
    return _reductions.log_softmax(x, dim, dtype=dtype)


# ---- dropout ----------------------------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only).

    The mask comes from `tapegrad.random` (seed with `tg.manual_seed`); the streams do not
    match PyTorch's, so tests compare statistics and the mask rule, not exact masks."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _t(input)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        mask = _tape.const(np.zeros(x.shape, dtype=x.dtype))
    else:  # a tg.compile replay draws the mask again, from the same generator, in order
        mask = _tape.host(_dropout_mask, x.shape, x.dtype, p, generator)
    return apply(_K.dropout, x, mask=mask)


def _dropout_mask(shape, dtype, p, generator):
    """Keep with probability 1 - p, scaled by 1 / (1 - p)."""
    from ..random import rng
    keep = rng(generator).random(shape) >= p
    return keep.astype(dtype) * np.asarray(1.0 / (1.0 - p), dtype=dtype)


# ---- normalization ------------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05, *, correction=0):
    """Batch normalization over every axis except the channel axis 1.

    Input (N, C), (N, C, L) or (N, C, H, W). In training mode it normalizes with the
    batch statistics and (if given) updates `running_mean` / `running_var` in place:
        running = (1 - momentum) * running + momentum * batch_stat
    (`momentum=None`: a cumulative average, the caller passes 1/num_batches_tracked).

    Variance convention (worked example 9): by default, as in PyTorch, the batch is
    normalized with the BIASED variance (divide by n) and the running variance is
    updated with the UNBIASED one (n - 1). `correction=1` normalizes with Bessel's
    correction (n - 1) too, as in the makemore-style hand-written batch norm.
    In eval mode (`training=False`) it uses the running statistics.
    """
    x = _t(input)
    xshape = x._data.shape
    ndim = len(xshape)
    if ndim < 2:
        raise ValueError(f"expected 2D or higher input (got {ndim}D input)")
    C = xshape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t._data.size != C:
            raise RuntimeError(f"batch_norm: {name} should contain {C} elements not "
                               f"{t.numel()} (input shape {tuple(x.shape)})")
    axes = (0,) if ndim == 2 else (0,) + tuple(range(2, ndim))
    n = xshape[0] * _prod(xshape[2:])  # per channel (not size // C: C may be 0)
    if x._data.size == 0:
        # NOTE: PyTorch: an empty input gives an empty output (x * w + b, so that weight
        # and bias get zero gradients) and leaves the running statistics alone.
        shape = _bshape(ndim, C)
        out = x.clone()
        if weight is not None:
            out = out * weight.reshape(shape)
        if bias is not None:
            out = out + bias.reshape(shape)
        return out
    if training:
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {tuple(x.shape)}")
        out, saved = apply_saved(_K.batch_norm, x, weight, bias, axes=axes, eps=float(eps),
                                 correction=int(correction))
        if running_mean is not None or running_var is not None:
            m = 0.1 if momentum is None else momentum
            # through the tape's host(): a tg.compile replay updates the statistics too
            _tape.host(_update_running, saved["mean"], saved["var"],
                       None if running_mean is None else running_mean._data,
                       None if running_var is None else running_var._data, m, n, correction)
        return out
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in "
                           "evaluation mode")
    shape = _bshape(x.ndim, C)
    # Eval mode is an affine map with fixed statistics: y = x * scale + shift.
    scale, shift = _tape.host(_eval_affine, running_mean._data, running_var._data, eps, x.dtype)
    scale, shift = Tensor._of(scale), Tensor._of(shift)
    if weight is not None:
        scale = scale * weight
        shift = shift * weight
    if bias is not None:
        shift = shift + bias
    return x * _shape.reshape(scale, shape) + _shape.reshape(shift, shape)


def _update_running(mean, var, rm, rv, m, n, correction):
    """Running statistics updated in place, the same arithmetic as rm = (1 - m) * rm + m * mean."""
    mean, var = mean.reshape(-1), var.reshape(-1)
    if rm is not None:
        rm *= 1 - m
        rm += m * mean
    if rv is not None:
        unbiased = var * ((n - correction) / (n - 1))
        unbiased *= m
        rv *= 1 - m
        rv += unbiased


def _eval_affine(rm, rv, eps, dtype):
    """Eval-mode batch norm's scale and shift from the running statistics."""
    inv = 1.0 / np.sqrt(rv + eps)
    return inv.astype(dtype, copy=False), (-rm * inv).astype(dtype, copy=False)


def _bshape(ndim, C):
    return (1, C) + (1,) * (ndim - 2)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the trailing `normalized_shape` axes (biased variance), then
    scale and shift elementwise: y = (x - mean) / sqrt(var + eps) * w + b."""
    x = _t(input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = tuple(int(s) for s in normalized_shape)
    k = len(ns)
    if k == 0 or tuple(x.shape[x.ndim - k:]) != ns or x.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(ns)}, expected input with shape [*, "
            f"{', '.join(map(str, ns))}], but got input of size{list(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"layer_norm: {name} of shape {tuple(t.shape)} does not match "
                               f"normalized_shape {ns}")
    axes = tuple(range(x.ndim - k, x.ndim))
    return apply(_K.layer_norm, x, weight, bias, axes=axes, eps=float(eps))


# ---- embedding -------------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` (V, D) picked by integer indices of any shape -> (*idx, D).

    Backward is a scatter-add: a row used k times receives the sum of its k gradients.
    The row at `padding_idx` receives no gradient."""
    idx = input._data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {idx.dtype} instead")
    V = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= V:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -V:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = V + padding_idx
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported by tapegrad")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq / sparse are not supported")
    if idx.size:
        # signed indices viewed as unsigned: a negative one is >= V, so ONE reduction
        # checks both ends (~1 us less than min and max on a (32, 3) batch, measured)
        if _K.index_top(idx) >= V:
            raise IndexError("index out of range in self")
    return apply(_K.embedding, weight, idx,
                 padding_idx=-1 if padding_idx is None else int(padding_idx))


# ---- losses ------------------------------------------------------------------------------------------
def _class_dim_last(x, target):
    """(N, C, d1, ...) -> (N*d1*..., C) and targets -> (N*d1*...,); (C,) -> (1, C).
    `target` is the targets' array. (N, C) stays as it is."""
    xs = x._data.shape
    if len(xs) == 2:
        return x, target, None
    if len(xs) == 1:
        return _shape.reshape(x, (1, xs[0])), target.reshape(1), ()
    C = xs[1]
    perm = (0,) + tuple(range(2, len(xs))) + (1,)
    x2 = _shape.reshape(_shape.permute(x, perm), (-1, C))
    return x2, target.reshape(-1), (xs[0],) + tuple(xs[2:])


def _check_class_target(xs, ts, name):
    """Class-index targets of shape `ts` for an input of shape `xs` (array shapes: no
    Tensor property calls on the loss's every call)."""
    if len(xs) == 1:
        if len(ts) != 0:
            raise RuntimeError(f"{name}: for a 1-D input of shape {tuple(xs)} expected a "
                               f"0-D target, got shape {tuple(ts)}")
        return
    if len(ts) == 0 or ts[0] != xs[0]:
        raise ValueError(f"Expected input batch_size ({xs[0]}) to match target "
                         f"batch_size ({ts[0] if ts else 0}).")
    if tuple(ts[1:]) != tuple(xs[2:]):
        raise RuntimeError(f"{name}: expected target of shape "
                           f"{(xs[0],) + tuple(xs[2:])}, got {tuple(ts)}")


def _weight_arr(weight, C, name):
    if weight is None:
        return None
    w = weight._data if isinstance(weight, Tensor) else np.asarray(weight)
    if w.shape != (C,):
        raise RuntimeError(f"{name}: weight tensor should be defined either for all {C} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(w.shape)}")
    return Tensor._of(w)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits and targets (class indices, or class probabilities).

    Class-index targets use ONE fused table entry (log_softmax + pick + reduce):
        loss_i = -w[y_i] * log_softmax(x_i)[y_i]     (mixed with the uniform target when
                                                      label_smoothing > 0)
        mean:  sum_i loss_i / sum_i w[y_i]  over rows whose target != ignore_index
        dx_i = w[y_i] * (softmax(x_i) - onehot(y_i)) / sum w   ((softmax - onehot) / n
                                                               without weights)
    Input (N, C), (C,) or (N, C, d1, ...); target (N,), () or (N, d1, ...).
    """
    x = _t(input)
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    tgt = target if isinstance(target, Tensor) else Tensor._of(np.asarray(target))
    xs = x._data.shape
    C = xs[1] if len(xs) > 1 else xs[0]
    if tgt._data.dtype.kind == "f":
        return _cross_entropy_probs(x, tgt, weight, reduction, label_smoothing, C)
    _check_class_target(xs, tgt._data.shape, "cross_entropy")
    w = None if weight is None else _weight_arr(weight, C, "cross_entropy")
    x2, t2, out_shape = _class_dim_last(x, tgt._data)
    out = apply(_K.cross_entropy, x2, t2.astype(np.int64, copy=False), w,
                ignore_index=int(ignore_index), label_smoothing=float(label_smoothing),
                reduction=reduction)
    if reduction == "none" and out_shape is not None:
        out = _shape.reshape(out, out_shape)
    return out


def _cross_entropy_probs(x, tgt, weight, reduction, label_smoothing, C):
    """Soft targets (same shape as input): loss = -sum_c w_c t_c log_softmax(x)_c."""
    if tuple(tgt.shape) != tuple(x.shape):
        raise RuntimeError(f"cross_entropy: probability targets must have the input's shape "
                           f"{tuple(x.shape)}, got {tuple(tgt.shape)}")
    cdim = 1 if x.ndim > 1 else 0
    if label_smoothing > 0:
        tgt = tgt * (1 - label_smoothing) + label_smoothing / C
    lsm = _reductions.log_softmax(x, cdim)
    prod = lsm * tgt
    if weight is not None:
        shape = [1] * x.ndim
        shape[cdim] = C
        prod = prod * _shape.reshape(weight, tuple(shape))
    loss = -_reductions.sum(prod, dim=cdim)
    if reduction == "mean":
        n = x.shape[0] if x.ndim > 1 else 1
        return _reductions.sum(loss) / (loss.numel() if x.ndim > 1 else 1) if n else _reductions.sum(loss)
    return _reduce(loss, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities: loss_i = -w[y_i] * input[i, y_i]."""
    x = _t(input)
    reduction = _reduction(reduction, size_average, reduce)
    tgt = target if isinstance(target, Tensor) else Tensor._of(np.asarray(target))
    if tgt.dtype.kind not in "iu":
        raise RuntimeError(f"nll_loss: expected target of integer dtype (class indices), got "
                           f"{tgt.dtype}")
    xs = x._data.shape
    _check_class_target(xs, tgt._data.shape, "nll_loss")
    C = xs[1] if len(xs) > 1 else xs[0]
    w = None if weight is None else _weight_arr(weight, C, "nll_loss")
    x2, t2, out_shape = _class_dim_last(x, tgt._data)
    out = apply(_K.nll_loss, x2, t2.astype(np.int64, copy=False), w,
                ignore_index=int(ignore_index), reduction=reduction)
    if reduction == "none" and out_shape is not None:
        out = _shape.reshape(out, out_shape)
    return out


def _check_same_size(input, target, name, error=False):
    if tuple(target.shape) != tuple(input.shape):
        msg = (f"Using a target size ({target.shape}) that is different to the input size "
               f"({input.shape}). This will likely lead to incorrect results due to "
               "broadcasting. Please ensure they have the same size.")
        if error:
            raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                             f"input size ({input.shape}) is deprecated. Please ensure they "
                             "have the same size.")
        warnings.warn(msg, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mean((x - y)^2); d/dx = 2 (x - y) / n."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "mse_loss")
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mean(|x - y|); d/dx = sign(x - y) / n (NOTE: 0 where x == y)."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "l1_loss")
    loss = _pointwise.abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target)."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "smooth_l1_loss")
    d = input - target
    ad = _pointwise.abs(d)
    if beta == 0:
        return _reduce(ad, reduction)
    loss = _pointwise.where(ad._data < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| <= delta, delta (|d| - 0.5 delta) elsewhere."""
    reduction = _reduction(reduction)
    _check_same_size(input, target, "huber_loss")
    d = input - target
    ad = _pointwise.abs(d)
    loss = _pointwise.where(ad._data <= delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) pointwise: target (log target - input), input = log-probs.
    reduction='batchmean' divides the sum by the batch size (the mathematical KL)."""
    if reduction == "batchmean":
        red = "batchmean"
    else:
        red = _reduction(reduction, size_average, reduce)
    x = _t(input)
    if log_target:
        loss = _pointwise.exp(target) * (target - x)
    else:
        t = target if isinstance(target, Tensor) else Tensor._of(np.asarray(target, dtype=x.dtype))
        # NOTE: 0 * log 0 is taken as 0 (xlogy), as PyTorch does
        logt = Tensor._of(np.log(np.where(t._data > 0, t._data, 1.0)).astype(t._data.dtype))
        if t.requires_grad:
            logt = _pointwise.log(_pointwise.where(t._data > 0, t, 1.0))
        loss = t * (logt - x)
    if red == "batchmean":
        return _reductions.sum(loss) / (x.shape[0] if x.ndim else 1)
    return _reduce(loss, red)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (y log x + (1 - y) log(1 - x)) for probabilities x in [0, 1].

    As in PyTorch, each log is clamped at -100 so that x = 0 or 1 gives a finite loss,
    and the gradient is w (x - y) / max(x (1 - x), 1e-12)."""
    x = _t(input)
    reduction = _reduction(reduction, size_average, reduce)
    y = target if isinstance(target, Tensor) else Tensor._of(np.asarray(target, dtype=x.dtype))
    _check_same_size(x, y, "binary_cross_entropy", error=True)
    xd = x._data
    if xd.size and (np.any(xd < 0) or np.any(xd > 1) or np.any(np.isnan(xd))):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = apply(_K.binary_cross_entropy, x, y)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """BCE on logits, computed stably (never exponentiates a large positive number):
        loss = (1 - y) x + (1 + (pw - 1) y) * log(1 + exp(-x))
        dx   = (1 + (pw - 1) y) sigmoid(x) - pw y   (= sigmoid(x) - y without pos_weight)
    """
    x = _t(input)
    reduction = _reduction(reduction, size_average, reduce)
    y = target if isinstance(target, Tensor) else Tensor._of(np.asarray(target, dtype=x.dtype))
    _check_same_size(x, y, "binary_cross_entropy_with_logits", error=True)
    if pos_weight is None:
        loss = apply(_K.bce_with_logits, x, y)
    else:
        loss = apply(_K.bce_with_logits_pw, x, y, pos_weight)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---- F.one_hot and F.pad live with the indexing and shape ops -----------------------------
from ..ops.indexing import one_hot  # noqa: E402,F401
from ..ops.shape import pad  # noqa: E402,F401
del math

from .functional_conv import *  # noqa: E402,F401,F403  (conv, pooling, dropout2d: issue 6)
from .functional_sdpa import scaled_dot_product_attention  # noqa: E402,F401  (torch's signature)
from .functional_group_norm import group_norm  # noqa: E402,F401
from .functional_interpolate import (interpolate, upsample, upsample_bilinear,  # noqa: E402,F401
                                     upsample_nearest)
from .functional_pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: E402,F401
from ..ops.linalg import cosine_similarity, pairwise_distance
from .functional_normalize import normalize, rms_norm  # noqa: E402,F401
from .functional_activations2 import *  # noqa: E402,F401,F403  (glu, mish, selu, prelu, ...)
from .functional_losses2 import (cosine_embedding_loss, gaussian_nll_loss,  # noqa: E402,F401
                                 hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
                                 multilabel_soft_margin_loss, poisson_nll_loss,
                                 soft_margin_loss, triplet_margin_loss)
from .functional_instance_norm import instance_norm  # noqa: E402,F401
from .functional_adaptive_max import adaptive_max_pool1d, adaptive_max_pool2d  # noqa: E402,F401

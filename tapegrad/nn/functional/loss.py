"""torch.nn.functional's loss functions. cross_entropy, nll_loss, the BCEs, ... check
their arguments as torch does and call a fused table entry of ops/rules/nn.py; the others
(margin_ranking_loss, hinge_embedding_loss, triplet_margin_loss, poisson_nll_loss,
gaussian_nll_loss, multi_margin_loss, ...) are compositions of differentiable ops, torch's
own formula, so values and gradients match.
"""
import math
import warnings

import numpy as np

from ... import dtypes as _dt
from ...core import tape as _tape
from ...core.record import apply
from ...ops.creation import arange, ones_like, zeros_like

from ...ops.rules import nn as _K
from ...ops.linalg import pairwise_distance
from ..._tensor import Tensor
from .._reduction import _REDUCTIONS, _reduce, _reduction
from ._input_checks import _t
from ...ops import comparison as _comparison
from ...ops import pointwise as _pointwise
from ...ops import reductions as _reductions
from ...ops import _opmath, shape as _shape


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


def _check_target_dtype(t):
    """torch's class-index kernels take int64 or uint8 targets only (int32 is refused)."""
    if t.dtype != np.int64 and t.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dt.torch_name(t.dtype)}")


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
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(x, tgt, weight, reduction, label_smoothing, C)
    _check_target_dtype(tgt._data)
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
    _check_target_dtype(tgt._data)
    xs = x._data.shape
    _check_class_target(xs, tgt._data.shape, "nll_loss")
    C = xs[1] if len(xs) > 1 else xs[0]
    w = None if weight is None else _weight_arr(weight, C, "nll_loss")
    x2, t2, out_shape = _class_dim_last(x, tgt._data)
    out = apply(_K.nll_loss, x2, t2.astype(np.int64, copy=False), w,
                ignore_index=int(ignore_index), reduction=reduction)
    if reduction != "none" and x._data.dtype == np.float16:
        # torch sums float16 losses in float16 partial sums: its value, this gradient
        fix = _tape.host(_nll_half_correction, x2._data, t2, None if w is None else w._data,
                         int(ignore_index), reduction, out._data)
        out = out + Tensor._of(fix)
    if reduction == "none" and out_shape is not None:
        out = _shape.reshape(out, out_shape)
    return out


def _half_cascade(items, tags, power=4, levels=8):
    """torch's cascade sum of float16 `items` (in order; `tags` their linear indices) as
    its nll_loss kernels compute it: level 0 adds the items one by one in float16, and
    after item i, while i's next `power` bits (from the lowest) are zero, level j's sum
    is added to level j + 1 and reset; the levels are added up in float16 at the end."""
    h = np.float16
    residual = []
    for j in range(levels):
        if j == levels - 1 or not items.size:
            push = np.zeros(items.size, bool)
        else:
            push = (tags & (((1 << power) - 1) << (j * power))) == 0
        chunk = np.concatenate(([0], np.cumsum(push)[:-1])).astype(np.int64)
        first = np.searchsorted(chunk, np.arange(chunk[-1] + 1 if items.size else 0))
        pos = np.arange(items.size) - first[chunk] if items.size else chunk
        sums = np.zeros(int(chunk[-1]) + 1 if items.size else 0, h)
        for p in range(int(pos.max()) + 1 if items.size else 0):
            at = pos == p
            sums[chunk[at]] = (sums[chunk[at]] + items[at]).astype(h)
        n = int(push.sum())
        residual.append(sums[n] if sums.size > n else h(0))
        items, tags = sums[:n], tags[push]
    total = h(0)
    for r in residual:
        total = h(total + r)
    return total


def _nll_half_correction(x, t, w, ignore_index, reduction, out):
    """What to add to tapegrad's float16 nll_loss (float32 sum, rounded once) to give
    torch's value (float16 cascade sums, then sum / total weight in float16): a float16
    0-d array, exact (the difference of two close float16 values), 0 where they agree or
    either is not finite."""
    h = np.float16
    keep = t != ignore_index
    tags = np.nonzero(keep)[0]
    if not tags.size or not np.isfinite(out):
        return np.zeros((), h)
    tk = t[keep].astype(np.int64)
    data = x[tags, tk]
    with np.errstate(over="ignore", invalid="ignore"):
        if w is None:
            loss = _half_cascade(-data, tags)
            total = h(tags.size)
        else:
            loss = _half_cascade((-(data * w[tk])).astype(h), tags)
            total = _half_cascade(w[tk].astype(h), tags)
        val = loss if reduction == "sum" else h(loss / total)
        fix = np.float32(val) - np.float32(out)
    if not np.isfinite(val) or h(fix) != fix:
        return np.zeros((), h)
    return np.asarray(fix, h)


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
    small = ad < beta
    dq = _pointwise.where(small, d, 0.0)  # the square only where taken: at d = +-inf its
    loss = _pointwise.where(small, 0.5 * dq * dq / beta, ad - 0.5 * beta)  # 0*inf is nan
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| <= delta, delta (|d| - 0.5 delta) elsewhere."""
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_same_size(input, target, "huber_loss")
    wide = _opmath.widened(input, target)  # float16: each element in float32, rounded once
    if wide is not None:  # (torch's kernel), then weighted and reduced as float16
        loss = _opmath.rounded(huber_loss(*wide, reduction="none", delta=delta))
        return _reduce(loss if weight is None else loss * weight, reduction)
    d = input - target
    ad = _pointwise.abs(d)
    small = ad <= delta
    dq = _pointwise.where(small, d, 0.0)  # the square only where taken (d = +-inf: 0*inf)
    loss = _pointwise.where(small, 0.5 * dq * dq, delta * (ad - 0.5 * delta))
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
        # torch's formula: xlogy(t, t) - t * x (0 * log 0 is 0; the target's gradient is
        # torch's too: nan at t = 0 from the t/t of xlogy's second argument)
        loss = _pointwise.xlogy(t, t) - t * x
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


def _sizes(t):
    return list(t.shape)



def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin); the three broadcast together."""
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: torch.Size({_sizes(input1)}), input2: torch.Size({_sizes(input2)}), "
            f"target: torch.Size({_sizes(target)}) ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)



def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target == 1, max(0, margin - x) where target == -1 (torch adds both masks,
    so a target that is neither gives x + max(0, margin - x))."""
    reduction = _reduction(reduction, size_average, reduce)
    zeros = zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    out = _pointwise.where(target != 1, margin_clamp, zeros) + _pointwise.where(target != -1, input, zeros)
    return _reduce(out, reduction)



def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)): torch's log1p(exp(.)) (not a stable softplus, so
    the same overflow as torch for target * input below about -709)."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.requires_grad:  # torch's kernel has no target gradient
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    # input first, so a shape mismatch names the sizes in torch's order
    return _reduce(_pointwise.log1p(_pointwise.exp(-(input * target))), reduction)



def _logsigmoid(x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): exact for both signs, as torch's kernel
    wide = _opmath.widened(x)  # float16: torch's kernel computes in float32, rounds once
    if wide is not None:
        return _opmath.rounded(_logsigmoid(wide[0]))
    return x.clamp_max(0) - _pointwise.log1p(_pointwise.exp(-x.abs()))



def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross-entropy with logits per class, averaged over the last (class) dim."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(None, size_average, reduce)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:  # torch checks after computing, with its own message
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)



def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos - margin) where target == -1; cos over
    the last dim with torch's 1e-12 added to each squared norm."""
    reduction = _reduction(reduction, size_average, reduce)
    td = target.dim()
    if td > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != td + 1 or input2.dim() != td + 1:
        raise RuntimeError(f"{td}D target tensor expects {td + 1}D input tensors, but found "
                           f"inputs with sizes {_sizes(input1)} and {_sizes(input2)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + eps
    mag2 = (input2 * input2).sum(td) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = zeros_like(cos)
    out = (_pointwise.where(target == 1, 1 - cos, zeros)
           + _pointwise.where(target == -1, (cos - margin).clamp_min(0), zeros))
    return _reduce(out, reduction)



def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) with d = pairwise_distance(., ., p, eps); `swap`
    uses min(d(a, n), d(p, n)) as the negative distance."""
    reduction = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _comparison.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)



def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) for any distance `d` (default
    pairwise_distance); `swap` uses min(d(a, n), d(p, n))."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater "
                         f"than 0, got {margin} instead")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    a, pd, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _comparison.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C.
    `target` (C,) or (N, C) int64 holds each sample's classes, ended by the first -1."""
    reduction = _reduction(reduction, size_average, reduce)
    x = _t(input)
    if x.dim() > 2 or (x.dim() >= 1 and x.shape[-1] == 0):
        raise RuntimeError(f"multilabel_margin_loss: Expected non-empty vector or matrix with "
                           f"optional 0-dim batch size, but got: {list(x.shape)}")
    if tuple(target.shape) != tuple(x.shape):
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: "
                           f"{list(target.shape)} for input of size: {list(x.shape)}")
    x2 = x.reshape(1, -1) if x.dim() < 2 else x
    N, C = x2.shape
    t = np.asarray(target.numpy()).reshape(N, C)
    # count[n, c]: how often class c is a target of sample n (the list ends at the first
    # -1); the pairs (target j, non-target i) weigh max(0, 1 - x[j] + x[i])
    count = np.zeros((N, C), dtype=x2._data.dtype)
    for n in range(N):
        for c in t[n]:
            if c < 0:
                break
            if c >= C:
                raise RuntimeError(f"multilabel_margin_loss: target index {c} is out of "
                                   f"bounds for {C} classes")
            count[n, c] += 1
    pair = count[:, :, None] * (count == 0)[:, None, :]  # (N, j, i)
    margins = (1 - x2.unsqueeze(2) + x2.unsqueeze(1)).clamp_min(0)
    loss = (margins * Tensor._of(pair)).sum((1, 2)) / C
    if x.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(x) - t * x (log_input) or x - t * log(x + eps); `full` adds Stirling's
    t log t - t + log(2 pi t) / 2 where t > 1."""
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = _pointwise.exp(input) - target * input
    else:
        loss = input - target * _pointwise.log(input + eps)
    if full:
        stirling = target * _pointwise.log(target) - target + 0.5 * _pointwise.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)



def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log(var) + (input - target)^2 / var) / 2 (+ log(2 pi) / 2 if `full`). var is the
    input's shape, that shape without its last dim, or differs from it in one dim of size
    1; it is clamped to eps without cutting its gradient (torch clamps under no_grad)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape)[:-1] == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim()
                  and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # var - var.detach() is exactly 0 with var's gradient; adding the clamped constant
    # gives torch's clamp_ under no_grad: clamped values, identity gradient
    var = var - var.detach() + var.detach().clamp(min=eps)
    loss = 0.5 * (_pointwise.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)



def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Per sample, sum over classes j != y of max(0, margin - x[y] + x[j])^p (times
    weight[y]), divided by the number of classes."""
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad:  # torch's kernel has no weight gradient
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")
    in_shape, t_shape = _sizes(input), _sizes(target)
    x = input if input.dim() == 2 else input.reshape(1, -1) if input.dim() < 2 else None
    if x is None or x.shape[1] == 0:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {in_shape}")
    n, c = x.shape
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got {t_shape}. "
            f"Input has shape {in_shape}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {_sizes(weight)}")
    t = target.reshape(n, 1)
    if bool(((t < 0) | (t >= c)).any()):
        raise RuntimeError("target out of range")
    z = (margin - x.gather(1, t) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t]
    z = _pointwise.where(arange(c) != t, z, zeros_like(z))
    if reduction == "none":
        per = z.mean(dim=1)
        # torch: a 1-D input with a 0-dim target gives a 0-dim loss
        return per.reshape(()) if input.dim() < 2 and target.dim() == 0 else per
    return z.mean() if reduction == "mean" else z.sum() / c


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), torch's
    reference path. Input (in,) or (N, in); linear_weight (C, *out_features, in) gives
    logits (*N, C, *out_features). `options` (torch's chunking strategy, a memory saving
    that leaves the values unchanged) is accepted and ignored: the reference path runs."""
    x = _t(input)
    if x.ndim < 1 or x.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {x.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    batch, in_features = tuple(x.shape[:-1]), x.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively")
    C, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (C, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(C, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(x.shape)}")
    logits_shape = (*batch, C, *out_features)
    probs = tuple(target.shape) == logits_shape
    if probs and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    w2 = _shape.reshape(linear_weight, (-1, in_features))
    logits = _shape.reshape(x @ _shape.transpose(w2, 0, 1), logits_shape)
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


def _ctc_lengths(v, n, name):
    a = np.asarray(v._data if isinstance(v, Tensor) else v).reshape(-1).astype(np.int64)
    if a.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return a


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist Temporal Classification loss (Graves et al. 2006), torch's layout:
    log_probs (T, N, C) or (T, C); targets (N, S) padded or the concatenated 1-D targets.

    With l' the target of each sample with blanks around and between its labels
    (length 2 S_n + 1), the forward variable in log space
        alpha_0(s) = lp_0(l'_s) for s < 2,   alpha_t(s) = lp_t(l'_s) + logsumexp(
            alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if l'_s != blank, l'_{s-2})
    runs over t for the whole batch at once (a sample past its input length keeps its
    alpha); the loss is -logsumexp of the last two alpha of the sample's l'. Composed from
    differentiable ops (gather, logsumexp, where), so its gradient is the alpha-beta one,
    plus torch's exp(log_probs) term (see below). Unreachable cells hold a large finite negative instead of
    -inf, so no inf - inf reaches the gradient; a sample with no alignment (loss > 1e29
    then) gets torch's inf (or 0 with zero_infinity, with a zero gradient).
    mean: each loss divided by its target length (at least 1), then the batch mean."""
    lp = _t(log_probs)
    reduction = _reduction(reduction, None, None)
    unbatched = lp.ndim == 2
    if unbatched:
        lp = _shape.unsqueeze(lp, 1)
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 or 3 dimensions, got {lp.ndim}")
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    tg_arr = np.asarray(targets._data if isinstance(targets, Tensor) else targets)
    if tg_arr.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss: targets must be integers, got {tg_arr.dtype}")
    il = _ctc_lengths(input_lengths, N, "input_lengths")
    tl = _ctc_lengths(target_lengths, N, "target_lengths")
    if unbatched:
        tg_arr = tg_arr.reshape(1, -1) if tg_arr.ndim <= 1 else tg_arr
    if tg_arr.ndim == 1:  # concatenated targets
        offs = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        get = lambda n: tg_arr[offs[n]:offs[n] + tl[n]]  # noqa: E731
    else:
        get = lambda n: tg_arr[n, :tl[n]]  # noqa: E731
    for n in range(N):
        if il[n] < 0 or il[n] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {il[n]} (while checking arguments for ctc_loss_cpu)")
        if tl[n] < 0 or (tg_arr.ndim == 2 and tl[n] > tg_arr.shape[1]):
            raise RuntimeError(f"Expected tensor to have size at least {tl[n]} at dimension "
                               f"1, but got size {tg_arr.shape[1]} for argument #2 'targets'")
    S = int(tl.max()) if N else 0
    L = 2 * S + 1
    ext = np.full((N, L), blank, dtype=np.int64)
    for n in range(N):
        ext[n, 1:2 * tl[n]:2] = get(n)
    skip = np.zeros((N, L), dtype=bool)  # the s-2 transition allowed
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    dtype = lp._data.dtype
    neg = -1e30 if dtype == np.float32 else -1e300
    NEG = Tensor._of(np.full((N, 1), neg, dtype=dtype))
    # emit[t, n, s] = lp[t, n, ext[n, s]]
    emit = lp.gather(2, Tensor._of(np.ascontiguousarray(np.broadcast_to(ext, (T, N, L)))))
    start = np.full((N, L), neg, dtype=dtype)
    start[:, :2] = 0
    alpha = emit[0] + Tensor._of(start) if T else None
    skip_t, live = Tensor._of(skip), il[None, :] > np.arange(T)[:, None]
    for t in range(1, T):
        a1 = _shape.cat([NEG, alpha[:, :-1]], 1)
        a2 = _pointwise.where(skip_t, _shape.cat([NEG, NEG, alpha[:, :-2]], 1)[:, :L],
                              Tensor._of(np.asarray(neg, dtype=dtype)))
        new = _reductions.logsumexp(_shape.stack([alpha, a1, a2]), 0) + emit[t]
        alpha = _pointwise.where(Tensor._of(live[t][:, None]), new, alpha)
    last = Tensor._of(2 * tl)
    both = _shape.stack([_indexing_pick(alpha, last), _indexing_pick(alpha, np.maximum(
        2 * tl - 1, 0), mask=tl > 0, fill=neg, dtype=dtype)])
    loss = -_reductions.logsumexp(both, 0)
    if lp.requires_grad:
        # torch's ctc backward adds exp(log_probs) at every t < input length: its gradient
        # is the one w.r.t. the logits behind a log_softmax (that term vanishes through
        # log_softmax's backward), not d loss / d log_probs. The same term with value 0:
        e = _pointwise.exp(lp)
        zero = (e - e.detach()) * Tensor._of(live[:, :, None].astype(dtype))
        loss = loss + _reductions.sum(zero, (0, 2))
    bad = (np.asarray(loss._data) > 1e29) | (il == 0) & (tl > 0)
    if bad.any():
        fill = 0.0 if zero_infinity else np.inf
        loss = _pointwise.where(Tensor._of(bad), Tensor._of(np.asarray(fill, dtype=dtype)),
                                loss)
    if unbatched:
        loss = _shape.squeeze(loss, 0)
    if reduction == "mean":
        div = Tensor._of(np.maximum(tl, 1).astype(dtype).reshape(loss.shape))
        return _reductions.mean(loss / div)
    return _reduce(loss, reduction)


def _indexing_pick(alpha, pos, mask=None, fill=None, dtype=None):
    """alpha[n, pos[n]] for each row n (pos an int array); rows where `mask` is False get
    `fill` (no gradient)."""
    pos = np.asarray(pos._data if isinstance(pos, Tensor) else pos).astype(np.int64)
    got = _shape.squeeze(alpha.gather(1, Tensor._of(pos.reshape(-1, 1))), 1)
    if mask is None:
        return got
    return _pointwise.where(Tensor._of(mask), got, Tensor._of(np.asarray(fill, dtype=dtype)))

"""More of torch.nn.functional's losses, each a composition of differentiable ops (torch's
own formula, so values and gradients match): margin_ranking_loss, hinge_embedding_loss,
soft_margin_loss, multilabel_soft_margin_loss, cosine_embedding_loss, triplet_margin_loss,
poisson_nll_loss, gaussian_nll_loss, multi_margin_loss. Re-exported by `functional`."""
import math

from ..ops import comparison as _comparison
from ..ops import pointwise as _pointwise
from ..ops.creation import arange, ones_like, zeros_like
from ..ops.linalg import pairwise_distance
from ._loss_reduction import _REDUCTIONS, _reduce, _reduction


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

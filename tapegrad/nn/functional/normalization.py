"""torch.nn.functional's normalization functions.

`batch_norm` and `layer_norm` call the fused table entries of ops/rules/nn.py; the others
are compositions of public ops, so their gradients come from the ops they are made of:

    normalize:      x / max(||x||_p along dim, eps)  (CLIP embeddings, contrastive losses)
    rms_norm:       x / sqrt(mean(x^2 over normalized_shape) + eps) * weight
    group_norm:     x (N, C, *) -> (N, G, C/G * prod(*)); (x - mean) / sqrt(var + eps)
                    (biased var), back to (N, C, *), then * weight[c] + bias[c]
    instance_norm:  each (sample, channel) normalized over its own spatial elements (torch
                    runs batch norm on a (1, N*C, ...) view; same formula, same gradient).
                    Running statistics, when given, are updated in place as torch does:
                    the batch average of each instance's mean and unbiased variance.
"""
from math import prod as _prod

import numpy as np

from ... import dtypes as _dt
from ...core import tape as _tape
from ...core.record import apply, apply_saved

from ...ops.rules import nn as _K
from ...ops import pointwise as _pointwise_ops  # noqa: F401  (declares div: EXPORTS below)
from ...ops.public import EXPORTS as _EXPORTS
from ..._tensor import Tensor
from ._input_checks import _t
from ...ops import _opmath, shape as _shape
from .pooling import avg_pool2d
from .vision import pad

_div_out = _EXPORTS["div"]  # tg.div with out=: F.normalize(..., out=) follows torch's out= rules


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along `dim` (torch's formula: the clamp is recorded,
    so a norm below eps gives the gradient of input / eps)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"normalize(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _div_out(input, denom, out=out)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """RMS normalization over the trailing `normalized_shape` dims; eps None means
    finfo(input.dtype).eps, as torch (LLaMA-style blocks pass their own, e.g. 1e-6)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rms_norm(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(normalized_shape, (int, np.integer)):  # torch's binding takes no int here
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    if not ns:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{list(ns)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(ns)}")
    xs = tuple(input.shape)
    if len(xs) < len(ns) or xs[len(xs) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{list(xs)}")
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"rms_norm" not implemented for '
                                  f'\'{_dt.torch_name(input._data.dtype)}\'')
    # float16 is computed in float32 and rounded once, eps float32's (torch's opmath_t)
    half = input._data.dtype == np.float16
    x = input.float() if half else input
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    dims = tuple(range(-len(ns), 0))
    y = x * ((x * x).mean(dim=dims, keepdim=True) + eps).rsqrt()
    y = y if weight is None else y * weight
    return y.half() if half else y


# ---- normalization -------------------------------------------------------------------
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
        # torch: an empty 1-D input comes back as it is (no channel axis is read); for
        # another, the parameters are checked against 0 features, then reading the channel
        # axis 1 fails
        if ndim == 1 and x._data.size == 0:
            return x.clone()
        for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                        ("running_var", running_var)):
            if t is not None and t._data.size != 0:
                raise RuntimeError(f"{name} should contain 0 elements not {t._data.size}")
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-1, 0], but got 1) (batch_norm of a {ndim}-D input)")
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
        if not eps > 0:  # torch refuses a zero eps in training: 1/sqrt(var) of a constant
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
        w = _opmath.widened(x, weight, bias)
        if w is not None:
            out, mean, var = _half_batch_stats_norm(*w, axes, eps, correction)
            if running_mean is not None or running_var is not None:
                _tape.host(_update_running, mean._data, var._data,
                           None if running_mean is None else running_mean._data,
                           None if running_var is None else running_var._data,
                           0.1 if momentum is None else momentum, n, correction)
            return out
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
    w = _opmath.widened(x, weight, bias)  # float16: in float32, rounded once (torch)
    if w is not None:
        return _opmath.rounded(batch_norm(w[0], running_mean, running_var, w[1], w[2],
                                          False, momentum, eps, correction=correction))
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
    if (rm is not None and rm.dtype == np.float16) or (rv is not None and rv.dtype == np.float16):
        # torch updates float16 statistics in float32 and rounds once
        for r, s in ((rm, mean), (rv, var * ((n - correction) / (n - 1)))):
            if r is not None:
                r[...] = m * s + (1 - m) * r.astype(np.float32)
        return
    if rm is not None:
        rm *= 1 - m
        rm += m * mean
    if rv is not None:
        unbiased = var * ((n - correction) / (n - 1))
        unbiased *= m
        rv *= 1 - m
        rv += unbiased



def _half_batch_stats_norm(x, weight, bias, axes, eps, correction):
    """Training-mode batch norm of float16 input (x, weight, bias widened to float32) as
    torch's kernel: the batch mean and 1/sqrt(var + eps) computed in float32 and stored
    in float16, the affine map x * (invstd w) + (b - mean invstd w) in float32, rounded
    once. Returns (output, float32 mean, float32 var) for the running statistics."""
    mean = x.mean(dim=axes, keepdim=True)
    xc = x - mean
    n = _prod(x.shape[a] for a in axes)
    var = (xc * xc).sum(dim=axes, keepdim=True) / (n - correction)
    invstd = (var + eps).rsqrt()
    alpha = invstd.half().float()
    shape = _bshape(x.ndim, x.shape[1])
    if weight is not None:
        alpha = alpha * weight.reshape(shape)
    beta = -(mean.half().float() * alpha)
    if bias is not None:
        beta = beta + bias.reshape(shape)
    return (x * alpha + beta).half(), mean.detach(), var.detach()


def _eval_affine(rm, rv, eps, dtype):
    """Eval-mode batch norm's scale and shift from the running statistics (float16
    statistics of a float16 input, widened: torch computes them in float32)."""
    if rv.dtype.itemsize < np.dtype(dtype).itemsize:
        rm, rv = rm.astype(dtype), rv.astype(dtype)
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


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if not isinstance(input, Tensor):
        raise TypeError(f"group_norm(): input must be a Tensor, not {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected input with at least 2 dimensions (N, C, *), "
                           f"got shape {tuple(input.shape)}")
    N, C = input.shape[0], input.shape[1]
    if num_groups <= 0 or C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"group_norm: expected {name} of shape ({C},), got "
                               f"{tuple(t.shape)}")
    w = _opmath.widened(input, weight, bias)  # float16: in float32, rounded once (torch)
    if w is not None:
        return _opmath.rounded(group_norm(w[0], num_groups, w[1], w[2], eps))
    per_group = (C // num_groups) * _prod(tuple(input.shape[2:]))  # not -1: N may be 0
    x = input.reshape(N, num_groups, per_group)
    mean = x.mean(dim=-1, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(dim=-1, keepdim=True)
    y = (xc / (var + eps).sqrt()).reshape(tuple(input.shape))
    bshape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(bshape)
    if bias is not None:
        y = y + bias.reshape(bshape)
    return y


def _update_instance_running(mean, var, rm, rv, m, n):
    """rm = (1 - m) rm + m * mean over the batch of the instance means (rv likewise with
    the unbiased instance variances): torch's update of the repeated statistics."""
    if (rm is not None and rm.dtype == np.float16) or (rv is not None and rv.dtype == np.float16):
        # torch updates each repeated float16 copy (in float32, rounded) and averages them
        for r, s in ((rm, mean), (rv, None if rv is None else var * (n / (n - 1)))):
            if r is not None:
                rep = (m * s + (1 - m) * r.astype(np.float32)).astype(r.dtype)
                r[...] = rep.astype(np.float32).mean(axis=0)
        return
    if rm is not None:
        rm *= 1 - m
        rm += m * mean.mean(axis=0)
    if rv is not None:
        rv *= 1 - m
        rv += m * (var * (n / (n - 1))).mean(axis=0)



def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    shape = tuple(input.shape)
    if use_input_stats:
        n = int(np.prod(shape[2:]))
        if n == 1:
            raise ValueError("Expected more than 1 spatial element when training, got input "
                             f"size torch.Size({list(shape)})")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    w = _opmath.widened(input, weight, bias)  # float16: torch's batch norm kernel
    if w is not None and use_input_stats:
        x, wt, b = w
        out, mean, var = _half_batch_stats_norm(
            x.reshape((1, shape[0] * shape[1]) + shape[2:]),
            None if wt is None else wt.repeat(shape[0]),
            None if b is None else b.repeat(shape[0]), (0,) + tuple(range(2, len(shape))),
            eps, 0)
        if running_mean is not None or running_var is not None:
            _tape.host(_update_instance_running, mean._data.reshape(shape[:2]),
                       var._data.reshape(shape[:2]),
                       None if running_mean is None else running_mean._data,
                       None if running_var is None else running_var._data, momentum, n)
        return out.reshape(shape)
    if w is not None:  # the running statistics: torch's eval batch norm of the
        x, wt, b = w    # (1, N * C, ...) view, the statistics repeated (float32, rounded once)
        rep = (lambda t: None if t is None else t.repeat(shape[0]))
        out = batch_norm(x.reshape((1, shape[0] * shape[1]) + shape[2:]), rep(running_mean),
                         rep(running_var), rep(wt), rep(b), False, momentum, eps)
        return _opmath.rounded(out.reshape(shape))
    dims = tuple(range(2, input.dim()))
    per_channel = (1, shape[1]) + (1,) * len(dims)  # (C,) vectors broadcast over (N, C, ...)
    if use_input_stats:
        mean = input.mean(dim=dims, keepdim=True)
        var = ((input - mean) ** 2).mean(dim=dims, keepdim=True)  # biased, as batch norm
        if running_mean is not None or running_var is not None:
            _tape.host(_update_instance_running, mean._data.reshape(shape[:2]),
                       var._data.reshape(shape[:2]),
                       None if running_mean is None else running_mean._data,
                       None if running_var is None else running_var._data, momentum, n)
    else:
        mean, var = running_mean.reshape(per_channel), running_var.reshape(per_channel)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(per_channel)
    if bias is not None:
        out = out + bias.reshape(per_channel)
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over `size` neighbouring channels)^beta, the
    window centred on each channel (size // 2 before, (size - 1) // 2 after, zeros
    beyond the ends). Input (N, C, *) with at least 3 dims."""
    x = _t(input)
    if x.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.dim()} "
                         "dimensions)")
    if x.numel() == 0:
        return x
    N, C = x.shape[0], x.shape[1]
    sq = (x * x).reshape(N, 1, C, -1)  # channels as the rows of a one-channel image
    sq = pad(sq, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(sq, (size, 1), stride=1).reshape(tuple(x.shape))
    return x / (div * alpha + k).pow(beta)

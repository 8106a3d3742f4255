"""torch.native_layer_norm / native_batch_norm / native_group_norm: the ATen forms of the
normalizations, which return the statistics their backward saves with the output.

The output is the nn.functional op's (same values and gradient); the statistics are
computed alongside: layer norm's and batch norm's without a gradient (torch marks them
not differentiable), group norm's mean and rstd as differentiable tensors (torch's
infinitely differentiable group norm backward reads their gradients too).
"""
from . import dtypes as _dt
from .core import grad_mode as _grad_mode
from .nn.functional import normalization as _norm


def _rstd(var, eps):
    return (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): layer_norm over the trailing `normalized_shape` dims, with
    the mean and 1/sqrt(var + eps) of each normalized slice (kept dims of size 1)."""
    out = _norm.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    with _grad_mode.no_grad():
        x = _acc(input)
        mean = x.mean(dims, keepdim=True) if dims else x.clone()
        var = x.var(dims, keepdim=True, correction=0) if dims else x * 0
        return out, mean.to(_stat_dtype(input)), _rstd(var, eps).to(_stat_dtype(input))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """(output, save_mean, save_invstd): batch_norm over every dim but 1 (running stats
    updated in training); in evaluation the saved statistics are empty."""
    x = _acc(input)
    out = _norm.batch_norm(x, running_mean, running_var, _to(weight, x.dtype),
                           _to(bias, x.dtype), training, momentum, eps).to(input.dtype)
    with _grad_mode.no_grad():
        if not training:
            empty = input.new_empty((0,), dtype=_stat_dtype(input))
            return out, empty, empty.clone()
        dims = (0,) + tuple(range(2, input.ndim))
        mean = x.mean(dims)
        var = x.var(dims, correction=0)
        return out, mean.to(_stat_dtype(input)), _rstd(var, eps).to(_stat_dtype(input))


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd): group norm of an (N, C, *) input of N * C * HxW elements in
    `group` groups, with the (N, group) mean and 1/sqrt(var + eps), all differentiable."""
    x = _acc(input).reshape(N, group, (C // group) * HxW)  # sizes given: N may be 0
    mean = x.mean(-1)
    rstd = _rstd(x.var(-1, correction=0), eps)
    y = ((x - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(tuple(input.shape))
    shape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape).to(y.dtype)
    if bias is not None:
        y = y + bias.reshape(shape).to(y.dtype)
    dt = input.dtype
    return y.to(dt), mean.to(dt), rstd.to(dt)


def _stat_dtype(input):
    # torch keeps the statistics of float16 inputs in float16 on the CPU
    return input.dtype


def _acc(input):
    # the statistics of float16 are accumulated in float32, as torch's CPU kernels
    return input.to(_dt.float32) if input.dtype == _dt.float16 else input


def _to(t, dtype):
    return None if t is None else t.to(dtype)

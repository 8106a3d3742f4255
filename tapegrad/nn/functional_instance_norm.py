"""`F.instance_norm`: each (sample, channel) normalized over its own spatial elements, a
composition of mean / sub / rsqrt (torch runs batch norm on a (1, N*C, ...) view; the
formula and so the gradient are the same). Running statistics, when given, are updated
in place as torch does: the batch average of each instance's mean and unbiased variance.
"""
import numpy as np

from ..core import tape as _tape


def _update_running(mean, var, rm, rv, m, n):
    """rm = (1 - m) rm + m * mean over the batch of the instance means (rv likewise with
    the unbiased instance variances): torch's update of the repeated statistics."""
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
    dims = tuple(range(2, input.dim()))
    per_channel = (1, shape[1]) + (1,) * len(dims)  # (C,) vectors broadcast over (N, C, ...)
    if use_input_stats:
        mean = input.mean(dim=dims, keepdim=True)
        var = ((input - mean) ** 2).mean(dim=dims, keepdim=True)  # biased, as batch norm
        if running_mean is not None or running_var is not None:
            _tape.host(_update_running, mean._data.reshape(shape[:2]),
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

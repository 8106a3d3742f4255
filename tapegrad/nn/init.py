"""`tapegrad.nn.init`: in-place initialisers with PyTorch's names, fans and gains.

All of them run under `no_grad`, write into `tensor.data` in place (the Parameter keeps
its identity) and draw from `tapegrad.random` (seed with `tg.manual_seed`; the streams
differ from PyTorch's, the distributions are the same).

fan_in / fan_out as PyTorch computes them for a weight of shape (out, in, *kernel):
    fan_in = in * prod(kernel),   fan_out = out * prod(kernel)
"""
import math
import warnings

import numpy as np

from ..random import rng as _rng
from .._tensor import Tensor


def _arr(tensor):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected a Tensor, got {type(tensor).__name__}")
    return tensor._data


def _fill(tensor, values):
    a = _arr(tensor)
    a[...] = np.asarray(values).astype(a.dtype, copy=False)
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for an activation (PyTorch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.ndim
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    num_input_fmaps = tensor.shape[1]
    num_output_fmaps = tensor.shape[0]
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    return _fill(tensor, _rng(generator).uniform(a, b, size=tuple(tensor.shape)))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2)."""
    return _fill(tensor, _rng(generator).normal(mean, std, size=tuple(tensor.shape)))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) truncated to [a, b] (inverse-CDF method, as PyTorch)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    u = _rng(generator).uniform(2 * lo - 1, 2 * hi - 1, size=tuple(tensor.shape))
    from ..ops.rules.nn import _erfinv
    v = _erfinv(u) * std * math.sqrt(2.0) + mean
    return _fill(tensor, np.clip(v, a, b))


def constant_(tensor, val):
    return _fill(tensor, val)


def ones_(tensor):
    return _fill(tensor, 1.0)


def zeros_(tensor):
    return _fill(tensor, 0.0)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    raise NotImplementedError("dirac_ is not implemented in tapegrad")


def _xavier_std(tensor, gain):
    """Glorot & Bengio's std = gain * sqrt(2 / (fan_in + fan_out)) (both xavier_ fills)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010)."""
    a = math.sqrt(3.0) * _xavier_std(tensor, gain)
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    return normal_(tensor, 0.0, _xavier_std(tensor, gain), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """He et al.'s std = gain / sqrt(fan) (both kaiming_ fills); a is leaky_relu's slope."""
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al. 2015).

    PyTorch's Linear and Conv use a = sqrt(5), which gives bound = 1 / sqrt(fan_in)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def _default_layer_init_(weight, bias, *, fill_bias_without_fan_in):
    """PyTorch's default `reset_parameters` of Linear and Conv*/ConvTranspose*:
        weight ~ kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        bias   ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))        (fan_in of the weight)

    NOTE: with fan_in == 0 there is no bound. PyTorch's Linear then still fills the bias
    from U(0, 0), i.e. zeros (fill_bias_without_fan_in=True); its convolutions leave the
    bias as allocated (False)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is None:
        return
    fan_in, _ = _calculate_fan_in_and_fan_out(weight)
    if fan_in > 0:
        bound = 1 / math.sqrt(fan_in)
    elif fill_bias_without_fan_in:
        bound = 0
    else:
        return
    uniform_(bias, -bound, bound)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian matrix."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tuple(tensor.shape)))


# The old names without the trailing underscore (deprecated in PyTorch).
uniform = uniform_
normal = normal_
constant = constant_
xavier_uniform = xavier_uniform_
xavier_normal = xavier_normal_
kaiming_uniform = kaiming_uniform_
kaiming_normal = kaiming_normal_

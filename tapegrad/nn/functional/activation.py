"""torch.nn.functional's non-linear activation functions: relu, gelu, softmax, ... (the
fused table entries of ops/rules/nn.py or the elementwise ops) and glu, mish, hardswish,
selu, celu, prelu, rrelu, gumbel_softmax, the shrinks, ..., each a composition of public
differentiable ops.

Piecewise functions are written with `where` on a NumPy condition so that the slope at
a breakpoint is the one torch's backward kernel uses (e.g. hardswish'(3) = 1.5,
logsigmoid'(0) = 1/2); the comments name the kernel's rule where it matters.
"""
import warnings

import numpy as np

from ... import dtypes as _dt
from ...core import grad_mode, tape as _tape
from ...core.record import apply

from ...ops import inplace as _IP

from ...ops.rules import nn as _K
from ..._tensor import Tensor
from ._input_checks import _t
from ...ops import _opmath, pointwise as _pointwise
from ...ops import reductions as _reductions


# torch's SELU constants (Klambauer et al. 2017)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _named_t(x, name):
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")




def _floating(x, kernel):
    """torch's kernels for these activations exist for floating dtypes only."""
    if x._data.dtype.kind in "biu":  # torch names the dtype: 'Long', 'Bool' (dtypes.py)
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f'\'{_dt.torch_name(x._data.dtype)}\'')
    return x


def _dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _in_place(input, fn):
    """fn(input) written back into input (the `inplace=True` forms)."""
    return _pointwise.inplace_of(input, fn)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of input along dim."""
    x = _named_t(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _dim(dim, x.ndim)
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{x.shape[d]}")
    a, b = x.chunk(2, d)
    return a * _pointwise.sigmoid(b)


def _softplus(x):
    """log(1 + exp(x)) without overflow, slope 1/2 at 0 (no threshold: exact everywhere)."""
    pos = x > 0
    return _pointwise.where(pos, x, 0.0) + _pointwise.log1p(_pointwise.exp(_pointwise.where(pos, -x, x)))


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    x = _floating(_named_t(input, "mish"), "mish_cpu")
    if inplace:
        return _in_place(x, mish)
    return x * _pointwise.tanh(_softplus(x))


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6. torch's backward: 0 up to -3, x/3 + 1/2 strictly between,
    1 from 3 on; the where-branches below have exactly those slopes."""
    x = _floating(_named_t(input, "hardswish"), "hardswish_cpu")
    if inplace:
        return _in_place(x, hardswish)
    mid = x * (x + 3.0) / 6.0
    return _pointwise.where(x <= -3.0, x * 0.0, _pointwise.where(x < 3.0, mid, x))  # -inf * 0: NaN, as torch


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6; slope 1/6 strictly inside (-3, 3), as torch's backward (whose
    1/6 is a float32 constant even for float64: 3e-8 away from this exact one)."""
    x = _floating(_named_t(input, "hardsigmoid"), "hardsigmoid_cpu")
    if inplace:
        return _in_place(x, hardsigmoid)
    with grad_mode.no_grad():  # 1 above, 0 below, NaN: no gradient
        outside = _pointwise.where(x.isnan(), x, (x >= 3.0).to(x.dtype))
    return _pointwise.where((x > -3.0) & (x < 3.0), (x + 3.0) / 6.0, outside)


def _elu(x, alpha, scale=1.0, input_scale=1.0):
    """scale * (x for x > 0, alpha (exp(input_scale x) - 1) otherwise); the slope at 0 is
    the negative branch's, as torch's elu_backward (x <= 0)."""
    pos = x > 0
    neg = _pointwise.where(pos, 0.0, x)  # exp only of non-positive values (no overflow)
    y = _pointwise.where(pos, x, alpha * _pointwise.expm1(neg * input_scale))
    return y * scale if scale != 1.0 else y


def selu(input, inplace=False):
    """scale * elu(x, alpha) with torch's fixed constants."""
    x = _floating(_named_t(input, "selu"), "elu_cpu")
    if inplace:
        return _in_place(x, selu)
    return _elu(x, _SELU_ALPHA, _SELU_SCALE)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    x = _floating(_named_t(input, "celu"), "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return _in_place(x, lambda v: celu(v, alpha))
    return _elu(x, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def elu_(input, alpha=1.0):
    return _in_place(_named_t(input, "elu_"), lambda v: _elu(v, alpha))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """clamp in place; the slope is 1 strictly inside the bounds, as functional.hardtanh
    (restated here: functional.py imports this module, not the other way round)."""
    def ht(v):
        inside = (v > min_val) & (v < max_val)
        y = _pointwise.clamp(v, min_val, max_val)
        return _pointwise.where(inside, y, y.detach())
    return _in_place(_named_t(input, "hardtanh_"), ht)


def softsign(input):
    """x / (1 + |x|)."""
    x = _named_t(input, "softsign")
    return x / (1.0 + _pointwise.abs(x))


def _check_lambd(x, lambd):
    if lambd < 0:
        fi = np.finfo(x._data.dtype) if x._data.dtype.kind == "f" else np.finfo(np.float64)
        name = _dt.torch_name(x._data.dtype)
        raise RuntimeError(f"lambda must be in range [0, {float(fi.max):g}] for input dtype "
                           f"{name}, but found {float(lambd):g}")


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    x = _floating(_named_t(input, "softshrink"), "softshrink_check")
    _check_lambd(x, lambd)
    d = x._data
    # x * 0 in the middle: a NaN stays NaN, as in torch
    return _pointwise.where(d > lambd, x - lambd, _pointwise.where(d < -lambd, x + lambd, x * 0.0))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0 (torch's backward: zero on [-lambd, lambd])."""
    x = _floating(_named_t(input, "hardshrink"), "hardshrink_cpu")
    d = x._data
    return _pointwise.where((d >= -lambd) & (d <= lambd), x * 0.0, x)  # NaN passes, as torch


def tanhshrink(input):
    x = _named_t(input, "tanhshrink")
    return x - _pointwise.tanh(x)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    x = _floating(_named_t(input, "logsigmoid"), "log_sigmoid_cpu")
    return -_softplus(-x)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x, dim)."""
    x = _named_t(input, "softmin")
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = 0 if x.ndim in (0, 1, 3) else 1  # torch's legacy implicit choice
    return _reductions.softmax(-x, dim, dtype=dtype)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value (the gradient passes where x > threshold)."""
    x = _named_t(input, "threshold")
    if inplace:
        return _in_place(x, lambda v: _threshold(v, threshold, value))
    return _threshold(x, threshold, value)


def _threshold(x, threshold, value):
    # value in x's dtype: torch's threshold keeps an integer input integer
    # torch's test is x <= threshold (a NaN passes through); value in x's dtype (an integer
    # input stays integer)
    value = _tape.const(np.asarray(value).astype(x._data.dtype))
    return _pointwise.where(x <= threshold, value, x)


def threshold_(input, threshold, value):
    return _in_place(_named_t(input, "threshold_"), lambda v: _threshold(v, threshold, value))


def prelu(input, weight):
    """x where x > 0, weight[c] * x elsewhere; c is dim 1 (dim 0 of a 1-d input)."""
    x = _named_t(input, "prelu")
    w = _named_t(weight, "prelu")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    if w.numel() != 1:
        if x.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        C = x.shape[1] if x.ndim >= 2 else 1  # torch: a 1-d input has one channel
        if w.numel() != C:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {w.numel()} and channel size = {C}.")
        w = w.reshape((C,) + (1,) * (x.ndim - 2))
    else:  # one slope: a scalar, so a 0-d input stays 0-d
        w = w.reshape(())
    return _pointwise.where(x > 0, x, w * x)


def _check_bounds(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_slopes(shape, dtype, lower, upper, generator=None):
    from ...random import rng
    return rng(generator).uniform(lower, upper, shape).astype(dtype)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU. Training: each element x <= 0 gets its own slope drawn
    uniformly from [lower, upper] (tapegrad's generator: the draws differ from torch's);
    eval: the slope (lower + upper) / 2."""
    x = _floating(_named_t(input, "rrelu"), "leaky_relu_cpu")
    _check_bounds(lower, upper)
    if inplace:
        return _in_place(x, lambda v: rrelu(v, lower, upper, training))
    if not training:
        return _pointwise.where(x > 0, x, x * ((lower + upper) / 2))  # leaky_relu's slope rule
    # a tg.compile replay draws the slopes again, from the same generator, in order
    a = _tape.host(_rrelu_slopes, tuple(x.shape), x._data.dtype, lower, upper)
    return _pointwise.where(x > 0, x, x * a)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _gumbels(shape, dtype):
    from ...random import rng
    return -np.log(rng().exponential(1.0, shape)).astype(dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); `hard=True` returns the one-hot
    of the argmax in the forward and the soft sample's gradient (straight-through).
    `eps` is unused, as in torch (kept for its signature)."""
    x = _named_t(logits, "gumbel_softmax")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    g = _tape.host(_gumbels, tuple(x.shape), x._data.dtype)
    y_soft = _reductions.softmax((x + g) / tau, dim)
    if not hard:
        return y_soft
    d = _dim(dim, x.ndim)
    arr = y_soft._data
    idx = np.expand_dims(np.argmax(arr, axis=d), d) if arr.ndim else None
    onehot = np.zeros_like(arr)
    if arr.ndim:
        np.put_along_axis(onehot, idx, 1.0, axis=d)
    else:
        onehot = np.ones_like(arr)
    # torch's y_hard - y_soft.detach() + y_soft (same rounding): the value is the one-hot,
    # the gradient y_soft's (straight-through)
    return (-y_soft.detach() + onehot) + y_soft


# ---- activations ---------------------------------------------------------------------
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
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    kind = x._data.dtype.kind
    if kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if kind in "iu":  # torch keeps the integer dtype: the bounds truncated to integers
        if kind == "u" and min_val < 0:
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        min_val, max_val = int(min_val), int(max_val)
    if inplace:
        return _pointwise.inplace_of(x, lambda v: hardtanh(v, min_val, max_val))
    if x._data.dtype.kind == "f" and not (isinstance(min_val, Tensor) or isinstance(max_val, Tensor)):
        return apply(_K.hardtanh, x, min_val=float(min_val), max_val=float(max_val))
    y = _pointwise.clamp(x, min_val, max_val)
    inside = (x > min_val) & (x < max_val)
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
    pos = x > 0
    neg = _pointwise.where(pos, 0.0, x)  # exp only of non-positive values (no overflow)
    return _pointwise.where(pos, x, alpha * (_pointwise.exp(neg) - 1.0))



def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, computed stably; linear where beta x > threshold."""
    x = _t(input)
    wide = _opmath.widened(x)  # float16: torch's kernel computes in float32, rounds once
    if wide is not None:
        return _opmath.rounded(softplus(wide[0], beta, threshold))
    bx = x * beta
    # max(bx, 0) + log(1 + exp(-|bx|)), written with where so that the slope at 0 is 1/2
    pos = bx > 0
    soft = (_pointwise.where(pos, bx, 0.0) + _pointwise.log(1.0 + _pointwise.exp(_pointwise.where(pos, -bx, bx)))) / beta
    return _pointwise.where(bx > threshold, x, soft)



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

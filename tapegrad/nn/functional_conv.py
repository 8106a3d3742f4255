"""Public convolution, pooling and padding functions (PyTorch's `torch.nn.functional` names).

Each function translates PyTorch's arguments (ints or pairs, 'same'/'valid' padding,
unbatched inputs, 1-D variants) into one table entry of `tapegrad/ops/rules/conv.py`,
where the forward and the fused backward rules live. Re-exported by
`tapegrad.nn.functional`.
"""
import numbers
import warnings

import numpy as np

from ..core.record import apply, apply_saved
from ..ops.rules import conv as K
from ..ops import pointwise as _pointwise
from ..ops import shape as _shape
from .._tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d",
           "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "unfold", "fold", "dropout2d"]
# NOTE: `pad` is not exported: tapegrad.nn.functional.pad comes from ops/shape.py.


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor._of(x)


def _pair(v, name="argument"):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v}")
    return v


def _single(v):
    if isinstance(v, numbers.Integral):
        return int(v)
    v = tuple(v)
    if len(v) != 1:
        raise ValueError(f"expected an int or a 1-tuple, got {v}")
    return int(v[0])


def _batched(x, name, nd):
    """Accept unbatched input (one dim fewer) as PyTorch does; return (x, was_unbatched)."""
    if x.ndim == nd:
        return x, False
    if x.ndim == nd - 1:
        return _shape.reshape(x, (1,) + tuple(x.shape)), True
    raise RuntimeError(f"{name}: expected {nd - 1}D (unbatched) or {nd}D (batched) input, "
                       f"but got input of size: {list(x.shape)}")


def _unbatch(y, was):
    return _shape.reshape(y, tuple(y.shape[1:])) if was else y


# ---------------------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------------------

def _conv_padding(padding, kernel, stride, dilation, name):
    """Normalise padding to ((top, bottom), (left, right))."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError(f"{name}: padding='same' is not supported for strided "
                                   "convolutions")
            out = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                # NOTE: an even kernel pads one more on the right/bottom (as PyTorch).
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise RuntimeError(f"{name}: invalid padding string {padding!r}, should be one of "
                           "'valid', 'same'")
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"{name}: negative padding is not supported")
    return ((ph, ph), (pw, pw))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation, as torch.nn.functional.conv2d.

    input (N, C, H, W) or (C, H, W); weight (O, C/groups, kh, kw); bias (O,) ->
    (N, O, OH, OW) with OH = floor((H + 2p - d(kh-1) - 1)/s) + 1.
    """
    x, was = _batched(_tensor(input), "conv2d", 4)
    w = _tensor(weight)
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("conv2d: non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("conv2d: dilation should be greater than zero")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError("conv2d: non-positive groups is not supported")
    if w.ndim != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight (O, C/groups, kh, kw), got weight "
                           f"of shape {tuple(w.shape)}")
    pads = _conv_padding(padding, w.shape[2:], stride, dilation, "conv2d")
    args = (x, w) if bias is None else (x, w, _tensor(bias))
    y = apply(K.conv2d, *args, stride=stride, padding=pads, dilation=dilation, groups=groups)
    return _unbatch(y, was)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation: (N, C, L) x (O, C/groups, k) -> (N, O, L_out).

    Runs as conv2d on a height-1 image (kernel (1, k)).
    """
    x, was = _batched(_tensor(input), "conv1d", 3)
    w = _tensor(weight)
    if w.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D weight (O, C/groups, k), got weight of "
                           f"shape {tuple(w.shape)}")
    if isinstance(padding, str):
        p = padding
    else:
        p = (0, _single(padding))
    x4 = _shape.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
    w4 = _shape.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
    if isinstance(p, str) and p == "same" and _single(stride) != 1:
        raise RuntimeError("conv1d: padding='same' is not supported for strided convolutions")
    y = conv2d(x4, w4, bias, (1, _single(stride)), p, (1, _single(dilation)), groups)
    y = _shape.reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    return _unbatch(y, was)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed convolution (the adjoint of conv2d in its input), as PyTorch.

    input (N, C_in, H, W), weight (C_in, C_out/groups, kh, kw) ->
    (N, C_out, (H-1)s - 2p + d(kh-1) + output_padding + 1, ...). It is the table entry
    `conv2d_input_grad` (the gradient of conv2d w.r.t. its input), whose rules are
    conv2d and conv2d_weight_grad.
    """
    x, was = _batched(_tensor(input), "conv_transpose2d", 4)
    w = _tensor(weight)
    if w.ndim != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 4-D weight (C_in, C_out/groups, kh, "
                           f"kw), got weight of shape {tuple(w.shape)}")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    padding, output_padding = _pair(padding, "padding"), _pair(output_padding, "output_padding")
    groups = int(groups)
    if min(stride) <= 0 or min(dilation) <= 0 or groups <= 0 or min(padding) < 0:
        raise RuntimeError("conv_transpose2d: stride, dilation and groups must be positive "
                           "and padding non-negative")
    if w.shape[0] != x.shape[1]:
        raise RuntimeError(f"conv_transpose2d: given transposed=1, weight of size "
                           f"{list(w.shape)}, expected input{list(x.shape)} to have "
                           f"{w.shape[0]} channels, but got {x.shape[1]} channels instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"conv_transpose2d: in_channels ({w.shape[0]}) must be divisible "
                           f"by groups ({groups})")
    for op_, s in zip(output_padding, stride):
        # NOTE: PyTorch also allows output_padding < dilation; here it must be < stride
        # (then the output size determines the input size uniquely).
        if op_ < 0 or op_ >= s:
            raise RuntimeError(f"conv_transpose2d: output padding must be smaller than the "
                               f"stride, got output_padding={output_padding}, "
                               f"stride={stride}")
    N, _, H, W = x.shape
    kh, kw = w.shape[2:]
    out_hw = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
              zip((H, W), stride, padding, dilation, (kh, kw), output_padding)]
    if min(out_hw) <= 0:
        raise RuntimeError(f"conv_transpose2d: the output size {tuple(out_hw)} is too small")
    x_shape = (N, w.shape[1] * groups) + tuple(out_hw)
    y = apply(K.conv2d_input_grad, x, w, x_shape=x_shape, stride=stride,
              padding=tuple((p, p) for p in padding), dilation=dilation, groups=groups)
    if bias is not None:
        y = _pointwise.add(y, _shape.reshape(_tensor(bias), (1, -1, 1, 1)))
    return _unbatch(y, was)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Transposed 1-D convolution: conv_transpose2d on a height-1 image."""
    x, was = _batched(_tensor(input), "conv_transpose1d", 3)
    w = _tensor(weight)
    if w.ndim != 3:
        raise RuntimeError(f"conv_transpose1d: expected a 3-D weight (C_in, C_out/groups, k), "
                           f"got weight of shape {tuple(w.shape)}")
    x4 = _shape.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
    w4 = _shape.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
    y = conv_transpose2d(x4, w4, bias, (1, _single(stride)), (0, _single(padding)),
                         (0, _single(output_padding)), groups, (1, _single(dilation)))
    y = _shape.reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    return _unbatch(y, was)


# ---------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------

def _pool_args(name, kernel_size, stride, padding, dilation=1):
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if (stride is None or (not isinstance(stride, numbers.Integral)
                                           and len(tuple(stride)) == 0)) \
        else _pair(stride, "stride")
    padding = _pair(padding, "padding")
    dilation = _pair(dilation, "dilation")
    if min(kernel) <= 0:
        raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got {kernel}")
    if min(stride) <= 0:
        raise RuntimeError(f"{name}: stride must be greater than zero, but got {stride}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{name}: dilation must be greater than zero, but got {dilation}")
    for p, k in zip(padding, kernel):
        if p < 0 or p > k // 2:
            raise RuntimeError(f"{name}: pad should be smaller than or equal to half of kernel "
                               f"size, but got pad={padding}, kernel_size={kernel}")
    return kernel, stride, padding, dilation


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over each window; the gradient goes to the (first) maximum of each window and
    overlapping windows add up. `return_indices` gives flat indices into H*W."""
    x, was = _batched(_tensor(input), "max_pool2d", 4)
    kernel, stride, padding, dilation = _pool_args("max_pool2d", kernel_size, stride, padding,
                                                   dilation)
    oh, ow = K._geometry(x.shape, kernel, stride, tuple((p, p) for p in padding), dilation,
                         bool(ceil_mode))
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"max_pool2d: given input size {tuple(x.shape[1:])}, the calculated "
                           f"output size ({oh}x{ow}) is too small")
    y, saved = apply_saved(K.max_pool2d, x, kernel=kernel, stride=stride, padding=padding,
                           dilation=dilation, ceil_mode=bool(ceil_mode))
    out = _unbatch(y, was)
    if return_indices:
        idx = Tensor._of(saved["indices"].astype(np.int64))
        return out, _unbatch(idx, was)
    return out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over each window (zero padding counted unless count_include_pad=False)."""
    x, was = _batched(_tensor(input), "avg_pool2d", 4)
    kernel, stride, padding, _ = _pool_args("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("avg_pool2d: divisor must be not zero")
    oh = K.out_size(x.shape[2], kernel[0], stride[0], padding[0], padding[0], 1, ceil_mode)
    ow = K.out_size(x.shape[3], kernel[1], stride[1], padding[1], padding[1], 1, ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"avg_pool2d: given input size {tuple(x.shape[1:])}, the calculated "
                           f"output size ({oh}x{ow}) is too small")
    y = apply(K.avg_pool2d, x, kernel=kernel, stride=stride, padding=padding,
              ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
              divisor_override=None if divisor_override is None else int(divisor_override))
    return _unbatch(y, was)


def adaptive_avg_pool2d(input, output_size):
    """Average over PyTorch's adaptive windows [floor(i*H/oh), ceil((i+1)*H/oh))."""
    x, was = _batched(_tensor(input), "adaptive_avg_pool2d", 4)
    if isinstance(output_size, numbers.Integral):
        output_size = (output_size, output_size)
    oh, ow = output_size
    oh = x.shape[2] if oh is None else int(oh)
    ow = x.shape[3] if ow is None else int(ow)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"adaptive_avg_pool2d: output size must be positive, got "
                           f"{(oh, ow)}")
    y = apply(K.adaptive_avg_pool2d, x, output_size=(oh, ow))
    return _unbatch(y, was)


def _as4d_1d(x, name):
    x, was = _batched(_tensor(x), name, 3)
    return _shape.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), was


def _from4d_1d(y, was):
    y = _shape.reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    return _unbatch(y, was)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    x4, was = _as4d_1d(input, "max_pool1d")
    stride = _single(kernel_size) if stride is None else _single(stride)
    y = max_pool2d(x4, (1, _single(kernel_size)), (1, stride), (0, _single(padding)),
                   (1, _single(dilation)), ceil_mode)
    return _from4d_1d(y, was)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    x4, was = _as4d_1d(input, "avg_pool1d")
    stride = _single(kernel_size) if stride is None else _single(stride)
    y = avg_pool2d(x4, (1, _single(kernel_size)), (1, stride), (0, _single(padding)),
                   ceil_mode, count_include_pad)
    return _from4d_1d(y, was)


def adaptive_avg_pool1d(input, output_size):
    x4, was = _as4d_1d(input, "adaptive_avg_pool1d")
    y = adaptive_avg_pool2d(x4, (1, _single(output_size)))
    return _from4d_1d(y, was)


# ---------------------------------------------------------------------------------------
# im2col
# ---------------------------------------------------------------------------------------

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L), column l = the flattened window l."""
    x, was = _batched(_tensor(input), "unfold", 4)
    kernel = _pair(kernel_size, "kernel_size")
    ph, pw = _pair(padding, "padding")
    y = apply(K.unfold, x, kernel=kernel, stride=_pair(stride, "stride"),
              padding=((ph, ph), (pw, pw)), dilation=_pair(dilation, "dilation"))
    return _unbatch(y, was)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, the adjoint of unfold: (N, C*kh*kw, L) -> (N, C, H, W), overlaps summed."""
    x, was = _batched(_tensor(input), "fold", 3)
    ph, pw = _pair(padding, "padding")
    y = apply(K.fold, x, output_size=_pair(output_size, "output_size"),
              kernel=_pair(kernel_size, "kernel_size"), stride=_pair(stride, "stride"),
              padding=((ph, ph), (pw, pw)), dilation=_pair(dilation, "dilation"))
    return _unbatch(y, was)


# ---------------------------------------------------------------------------------------
# padding: one implementation, in ops/shape.py (constant, reflect, replicate,
# circular); used here by the Conv modules' padding_mode.
# ---------------------------------------------------------------------------------------

from ..ops.shape import pad


# ---------------------------------------------------------------------------------------
# channel dropout
# ---------------------------------------------------------------------------------------

def dropout2d(input, p=0.5, training=True, inplace=False, generator=None):
    """Zero whole channels: y = x * mask, mask (N, C, 1, 1) ~ Bernoulli(1-p) / (1-p), so
    dx = g * mask.

    As PyTorch 2.x: a 3-D input is read as (N, C, L) (with its warning), and other ranks
    warn and drop per (N, C) as well."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _tensor(input)
    if x.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.")
    elif x.ndim != 4:
        warnings.warn(f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).")
    if x.ndim < 2:
        raise RuntimeError(f"dropout2d: Feature dropout requires at least 2 dimensions in the "
                           f"input, got {x.ndim}")
    if not training or p == 0.0:
        return x
    from ..random import rng
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    if p == 1.0:
        mask = np.zeros(shape, dtype=x.dtype)
    else:
        keep = rng(generator).random(shape) >= p
        mask = keep.astype(x.dtype) * np.asarray(1.0 / (1.0 - p), dtype=x.dtype)
    return _pointwise.mul(x, Tensor._of(mask))

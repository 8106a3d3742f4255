"""torch.nn.functional's convolution functions: conv1d/2d, conv_transpose1d/2d, unfold,
fold.

Each function translates PyTorch's arguments (ints or pairs, 'same'/'valid' padding,
unbatched inputs, 1-D variants) into one table entry of `tapegrad/ops/rules/conv.py`,
where the forward and the fused backward rules live.
"""
from ...core.record import apply
from ...ops.rules import conv as K

from ._window_args import _batched, _pair, _single, _tensor, _unbatch
from ...ops import pointwise as _pointwise
from ...ops import shape as _shape


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

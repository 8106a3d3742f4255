"""torch.nn.functional's convolution functions: conv1d/2d/3d, conv_transpose1d/2d/3d,
unfold, fold.

Each function translates PyTorch's arguments (ints or pairs, 'same'/'valid' padding,
unbatched inputs, 1-D variants) into one table entry of `tapegrad/ops/rules/conv.py`,
where the forward and the fused backward rules live.
"""
import numbers

import numpy as np

from ... import dtypes as _dt
from ...core.record import apply
from ...ops.indexing import index_add as _index_add, index_select as _index_select
from ...ops.rules import conv as K

from ._window_args import _batched, _pair, _single, _tensor, _unbatch
from ...ops import _opmath, pointwise as _pointwise
from ...ops import shape as _shape
from .vision import pad as _pad
from ..._tensor import Tensor


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


def _check_dtypes(x, w, bias):
    """torch's convolutions compute in one dtype: input, weight and bias must share it."""
    xd = x._data.dtype
    if w._data.dtype != xd:
        raise RuntimeError(f"expected scalar type {_dt.torch_name(xd)} but found "
                           f"{_dt.torch_name(w._data.dtype)}")
    if bias is not None and _tensor(bias)._data.dtype != xd:
        raise RuntimeError(f"Input type ({_dt.cpp_name(xd)}) and bias type "
                           f"({_dt.cpp_name(bias._data.dtype)}) should be the same")


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
    _check_dtypes(x, w, bias)
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


def _check_output_padding(output_padding, stride, dilation):
    for op_, s, d in zip(output_padding, stride, dilation):
        if op_ < 0 or (op_ >= s and op_ >= d):
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={tuple(output_padding)}, "
                               f"stride={tuple(stride)}, dilation={tuple(dilation)}")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed convolution (the adjoint of conv2d in its input), as PyTorch.

    input (N, C_in, H, W), weight (C_in, C_out/groups, kh, kw) ->
    (N, C_out, (H-1)s - 2p + d(kh-1) + output_padding + 1, ...). It is the table entry
    `conv2d_input_grad` (the gradient of conv2d w.r.t. its input), whose rules are
    conv2d and conv2d_weight_grad.
    """
    wide = _opmath.widened(input, weight, bias)  # float16: in float32, rounded once (torch)
    if wide is not None:
        return _conv_transpose_half(conv_transpose2d, 2, wide, input, weight, bias, stride,
                                    padding, output_padding, groups, dilation)
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
    _check_output_padding(output_padding, stride, dilation)
    N, _, H, W = x.shape
    kh, kw = w.shape[2:]
    out_hw = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
              zip((H, W), stride, padding, dilation, (kh, kw), output_padding)]
    if min(out_hw) <= 0:
        raise RuntimeError(f"conv_transpose2d: the output size {tuple(out_hw)} is too small")
    x_shape = (N, w.shape[1] * groups) + tuple(out_hw)
    # output_padding >= stride (allowed below the dilation): conv2d of the output size
    # has op // s more rows than x; those rows of x are zeros (they reach no output)
    extra = [op_ // s for op_, s in zip(output_padding, stride)]
    if any(extra):
        x = _pad(x, (0, extra[1], 0, extra[0]))
    y = apply(K.conv2d_input_grad, x, w, x_shape=x_shape, stride=stride,
              padding=tuple((p, p) for p in padding), dilation=dilation, groups=groups)
    if bias is not None:
        y = _pointwise.add(y, _shape.reshape(_tensor(bias), (1, -1, 1, 1)))
    return _unbatch(y, was)


def _conv_transpose_half(conv, nd, wide, input, weight, bias, stride, padding,
                         output_padding, groups, dilation):
    """float16 conv_transpose{2,3}d as torch's CPU: computed in float32 and rounded once
    (oneDNN), except where an output_padding is >= its stride (torch's slow kernel)."""
    if _output_padding_big(output_padding, stride, nd):
        conv(*(None if t is None else t.detach() for t in wide), stride, padding,
             output_padding, groups, dilation)  # torch's argument checks
        return _conv_transpose_half_slow(input, weight, bias, stride, padding, output_padding,
                                         groups, dilation, nd)
    return _opmath.rounded(conv(*wide, stride, padding, output_padding, groups, dilation))


def _output_padding_big(output_padding, stride, nd):
    op, st = (tuple(int(v) for v in (a,) * nd) if isinstance(a, numbers.Integral) else
              tuple(int(v) for v in a) for a in (output_padding, stride))
    return any(o >= s for o, s in zip(op, st))


def _conv_transpose_half_slow(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, nd):
    """float16 transposed convolution as torch's slow CPU kernel, which it takes when an
    output_padding is >= its stride (oneDNN, which computes in float32 and rounds once,
    refuses those): per group, the column products of weight and input (one float16
    matrix product each) and col2im adding them into the output tap by tap, (k1, ..., kd)
    in order, each addition rounded to float16; the bias added last. (A CPU without
    oneDNN's float16 support takes this kernel for every shape; not followed here.)"""
    x, was = _batched(_tensor(input), f"conv_transpose{nd}d", nd + 2)
    w = _tensor(weight)
    tup = (lambda v: (int(v),) * nd if isinstance(v, numbers.Integral) else
           tuple(int(a) for a in v) * (nd if len(tuple(v)) == 1 else 1))
    st, pd, op, dl = tup(stride), tup(padding), tup(output_padding), tup(dilation)
    N, Cin, S, K = x.shape[0], x.shape[1], tuple(x.shape[2:]), tuple(w.shape[2:])
    G, Cog = int(groups), w.shape[1]
    out_sz = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1
                   for n, s, p, d, k, o in zip(S, st, pd, dl, K, op))
    P, O, KP = int(np.prod(S)), int(np.prod(out_sz)), int(np.prod(K))
    pos = np.indices(S).reshape(nd, P)  # input coordinates, C order
    outs = []
    for g in range(G):
        xg = _shape.reshape(x[:, g * (Cin // G):(g + 1) * (Cin // G)], (N, Cin // G, P))
        wg = _shape.reshape(w[g * (Cin // G):(g + 1) * (Cin // G)], (Cin // G, Cog * KP))
        cols = _shape.reshape(wg.t().matmul(xg), (N, Cog, KP, P))
        acc = Tensor._of(np.zeros((N, Cog, O), np.float16))
        for tap, ks in enumerate(np.ndindex(*K)):
            o = [pos[i] * st[i] - pd[i] + ks[i] * dl[i] for i in range(nd)]
            ok = np.all([(oi >= 0) & (oi < n) for oi, n in zip(o, out_sz)], axis=0)
            if not ok.any():
                continue
            flat = np.ravel_multi_index([oi[ok] for oi in o], out_sz)
            src = _index_select(cols[:, :, tap], 2, Tensor._of(np.nonzero(ok)[0]))
            acc = _index_add(acc, 2, Tensor._of(flat), src)
        outs.append(acc)
    y = _shape.reshape(_shape.cat(outs, 1), (N, Cog * G) + out_sz)
    if bias is not None:
        y = _pointwise.add(y, _shape.reshape(_tensor(bias), (1, -1) + (1,) * nd))
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
# 3-d: the depth taps folded into the channels, then one conv2d
# ---------------------------------------------------------------------------------------
# conv3d = conv2d over (H, W) of the depth windows: im2col along D (unfold with a (kd, 1)
# kernel) stacks the kd depth taps of each output depth next to the channels, so channel
# c * kd + j of the stack is x[c] at tap j, which is the weight reshaped to
# (O, C/groups * kd, kh, kw) (also per group). Every step is an existing table entry, so
# values and gradients are exact (only the summation order differs from torch's).
# conv_transpose3d is its adjoint: conv_transpose2d with the taps as extra output
# channels, then col2im along D (fold) sums each tap into its output depth.

def _triple(v, name):
    if isinstance(v, numbers.Integral):
        return (int(v),) * 3
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise ValueError(f"{name} must be an int or a triple of ints, got {v}")
    return v


def _conv3d_padding(padding, kernel, stride, dilation):
    """((lo, hi),) * 3 for ints, triples, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * 3
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("conv3d: padding='same' is not supported for strided "
                                   "convolutions")
            return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                         for k, d in zip(kernel, dilation))
        raise RuntimeError(f"conv3d: invalid padding string {padding!r}, should be one of "
                           "'valid', 'same'")
    p = _triple(padding, "padding")
    if min(p) < 0:
        raise RuntimeError("conv3d: negative padding is not supported")
    return tuple((a, a) for a in p)


def _check_conv3d_channels(x, w, groups, transposed):
    C = x.shape[1]
    need = w.shape[0] if transposed else w.shape[1] * groups
    if C != need:
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}groups={groups}, "
                           f"weight of size {list(w.shape)}, expected input{list(x.shape)} "
                           f"to have {need} channels, but got {C} channels instead")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation: (N, C, D, H, W) x (O, C/groups, kd, kh, kw) -> (N, O, OD, OH,
    OW), as torch.nn.functional.conv3d (unbatched (C, D, H, W) input too)."""
    x, was = _batched(_tensor(input), "conv3d", 5)
    w = _tensor(weight)
    if w.ndim != 5:
        raise RuntimeError(f"conv3d: expected a 5-D weight (O, C/groups, kd, kh, kw), got "
                           f"weight of shape {tuple(w.shape)}")
    stride, dilation = _triple(stride, "stride"), _triple(dilation, "dilation")
    groups = int(groups)
    if min(stride) <= 0:
        raise RuntimeError("conv3d: non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("conv3d: dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("conv3d: non-positive groups is not supported")
    _check_conv3d_channels(x, w, groups, False)
    _check_dtypes(x, w, bias)
    if w.shape[0] % groups:
        raise RuntimeError(f"conv3d: out_channels ({w.shape[0]}) must be divisible by groups "
                           f"({groups})")
    pads = _conv3d_padding(padding, w.shape[2:], stride, dilation)
    N, C, D, H, W = x.shape
    O, Cg, kd, kh, kw = w.shape
    for n, k, d, (lo, hi) in zip((D, H, W), (kd, kh, kw), dilation, pads):
        if n + lo + hi < d * (k - 1) + 1:
            raise RuntimeError(f"conv3d: calculated padded input size per channel: "
                               f"({D + sum(pads[0])} x {H + sum(pads[1])} x "
                               f"{W + sum(pads[2])}). Kernel size: ({kd} x {kh} x {kw}). "
                               "Kernel size can't be greater than actual input size")
    xd = _shape.reshape(_shape.permute(x, (0, 3, 4, 1, 2)), (N * H * W, C, D, 1))
    cols = apply(K.unfold, xd, kernel=(kd, 1), stride=(stride[0], 1),
                 padding=(pads[0], (0, 0)), dilation=(dilation[0], 1))
    OD = cols.shape[2]
    cols = _shape.reshape(cols, (N, H, W, C * kd, OD))
    cols = _shape.reshape(_shape.permute(cols, (0, 4, 3, 1, 2)), (N * OD, C * kd, H, W))
    w2 = _shape.reshape(w, (O, Cg * kd, kh, kw))
    args = (cols, w2) if bias is None else (cols, w2, _tensor(bias))
    y = apply(K.conv2d, *args, stride=stride[1:], padding=pads[1:], dilation=dilation[1:],
              groups=groups)
    OH, OW = y.shape[2], y.shape[3]
    y = _shape.permute(_shape.reshape(y, (N, OD, O, OH, OW)), (0, 2, 1, 3, 4))
    return _unbatch(y.contiguous(), was)  # contiguous, as torch's (programs `.view` it)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Transposed 3-D convolution: (N, C_in, D, H, W) x (C_in, C_out/groups, kd, kh, kw)
    -> (N, C_out, (D-1)s - 2p + d(kd-1) + output_padding + 1, ...)."""
    wide = _opmath.widened(input, weight, bias)  # float16: in float32, rounded once (torch)
    if wide is not None:
        return _conv_transpose_half(conv_transpose3d, 3, wide, input, weight, bias, stride,
                                    padding, output_padding, groups, dilation)
    x, was = _batched(_tensor(input), "conv_transpose3d", 5)
    w = _tensor(weight)
    if w.ndim != 5:
        raise RuntimeError(f"conv_transpose3d: expected a 5-D weight (C_in, C_out/groups, kd, "
                           f"kh, kw), got weight of shape {tuple(w.shape)}")
    stride, dilation = _triple(stride, "stride"), _triple(dilation, "dilation")
    padding = _triple(padding, "padding")
    output_padding = _triple(output_padding, "output_padding")
    groups = int(groups)
    if min(stride) <= 0 or min(dilation) <= 0 or groups <= 0 or min(padding) < 0:
        raise RuntimeError("conv_transpose3d: stride, dilation and groups must be positive "
                           "and padding non-negative")
    _check_conv3d_channels(x, w, groups, True)
    _check_output_padding(output_padding, stride, dilation)
    N, Cin, D, H, W = x.shape
    _, Cog, kd, kh, kw = w.shape
    Cout = Cog * groups
    OD = (D - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kd - 1) + output_padding[0] + 1
    if OD <= 0:
        raise RuntimeError(f"conv_transpose3d: the output depth {OD} is too small")
    xr = _shape.reshape(_shape.permute(x, (0, 2, 1, 3, 4)), (N * D, Cin, H, W))
    # output channel (group, c, tap) of the 2-D transpose is channel c * kd + tap
    z = conv_transpose2d(xr, _shape.reshape(w, (Cin, Cog * kd, kh, kw)), None, stride[1:],
                         padding[1:], output_padding[1:], groups, dilation[1:])
    OH, OW = z.shape[2], z.shape[3]
    z = _shape.permute(_shape.reshape(z, (N, D, Cout * kd, OH, OW)), (0, 3, 4, 2, 1))
    z = _shape.reshape(z, (N * OH * OW, Cout * kd, D))
    if output_padding[0] >= stride[0]:  # more depth blocks than D (as conv_transpose2d)
        z = _pad(z, (0, output_padding[0] // stride[0]))
    y = apply(K.fold, z, output_size=(OD, 1), kernel=(kd, 1), stride=(stride[0], 1),
              padding=((padding[0], padding[0]), (0, 0)), dilation=(dilation[0], 1))
    y = _shape.permute(_shape.reshape(y, (N, OH, OW, Cout, OD)), (0, 3, 4, 1, 2))
    if bias is not None:
        y = _pointwise.add(y, _shape.reshape(_tensor(bias), (1, -1, 1, 1, 1)))
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

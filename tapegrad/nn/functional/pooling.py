"""torch.nn.functional's pooling functions: max_pool1d/2d, avg_pool1d/2d,
adaptive_avg_pool1d/2d (argument translation into one table entry of ops/rules/conv.py,
as in convolution.py), adaptive_max_pool1d/2d, and the 3-d pools composed from the 2-d
ones (at the end).

`adaptive_max_pool1d/2d` (with `return_indices`): torch's windows
[floor(i L / out), ceil((i + 1) L / out)) as a gather plus `max(dim)`.

Windows differ in length by at most one, so each is gathered at the longest length,
a short one repeating its last index: a repeat never changes the maximum, and `max(dim)`
picks the first maximum, the original element, so the gradient goes to one element per
window as torch's. The 2-D pool is the max over rows of the max along each row: the
first maximum in row-major order, torch's scan order.
"""
import math
import numbers

import numpy as np

from ...core.record import apply, apply_saved
from ...ops.creation import tensor as _index_tensor
from ...ops.rules import conv as K

from ..._tensor import Tensor
from ...dtypes import float64 as _dt_float64
from ._window_args import _batched, _pair, _single, _tensor, _unbatch
from ...ops import shape as _shape
from ...ops import pointwise as _pointwise
from ...ops import random as _random


def _windows(n, out):
    """(out, K) source indices of each window, K the longest window."""
    starts = [(i * n) // out for i in range(out)]
    ends = [-(-((i + 1) * n) // out) for i in range(out)]
    k = max([e - s for s, e in zip(starts, ends)], default=1)
    return np.array([[min(s + j, e - 1) for j in range(k)] for s, e in zip(starts, ends)],
                    dtype=np.int64).reshape(out, k)


def _pool_last(x, dim, out):
    """Max over the adaptive windows of dimension `dim` (negative): values and the source
    index along `dim` of each maximum."""
    n = x.shape[dim]
    idx = _windows(n, out)
    k = idx.shape[1]
    g = x.index_select(dim, _index_tensor(idx.reshape(-1)))
    shape = list(g.shape)
    d = dim % len(shape)
    g = g.reshape(shape[:d] + [out, k] + shape[d + 1:])
    vals, pos = g.max(dim=d + 1)
    p = np.asarray(pos.numpy())
    rows = np.arange(out).reshape((out,) + (1,) * (len(shape) - d - 1))
    return vals, idx[rows, p]


def _check_sizes(x, name, nd):
    for d in range(x.dim() - nd, x.dim()):
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with "
                               f"dimension {d} being empty")


def _check_output_size_2d(input, output_size, message):
    """torch's F wrappers fill a tuple output size's Nones from the input's last dims
    first (a ValueError when the input has too few), then the kernel wants 2 sizes."""
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if len(output_size) != 2:
        raise RuntimeError(message)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Input (N, C, L) or (C, L) -> (..., output_size)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError("adaptive_max_pool1d() argument 'output_size' should contain one "
                               f"int (got {len(output_size)})")
        output_size = output_size[0]
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    if int(output_size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {output_size}: "
                           f"{list(input.shape[:-1]) + [int(output_size)]}")
    _check_sizes(input, "adaptive_max_pool1d", 1)
    vals, idx = _pool_last(input, -1, int(output_size))
    return (vals, _index_tensor(idx)) if return_indices else vals


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Input (N, C, H, W) or (C, H, W) -> (..., oh, ow); an output size of None keeps the
    input's size; indices count in the flattened H * W plane, as torch's."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    else:
        _check_output_size_2d(input, output_size, "adaptive_max_pool2d(): internal "
                              "error: output_size.size() must be 2")
    if input.dim() not in (3, 4):
        raise RuntimeError("adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    H, W = input.shape[-2], input.shape[-1]
    oh = H if output_size[0] is None else int(output_size[0])
    ow = W if output_size[1] is None else int(output_size[1])
    _check_sizes(input, "adaptive_max_pool2d", 2)
    row_max, cols = _pool_last(input, -1, ow)        # (..., H, ow): max along each row
    vals, rows = _pool_last(row_max, -2, oh)         # (..., oh, ow): max over the rows
    if not return_indices:
        return vals
    col_of_max = np.take_along_axis(cols, rows, axis=-2)
    return vals, _index_tensor(rows * W + col_of_max)


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



_SCALAR_NAMES = {np.dtype(np.int32): "Int", np.dtype(np.int16): "Short",
                 np.dtype(np.int8): "Char", np.dtype(np.uint8): "Byte",
                 np.dtype(np.bool_): "Bool"}


def _refuse_small_integers(x, kernel):
    """torch's average pools have integer kernels for int64 only."""
    name = _SCALAR_NAMES.get(x._data.dtype)
    if name is not None:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over each window (zero padding counted unless count_include_pad=False)."""
    x, was = _batched(_tensor(input), "avg_pool2d", 4)
    _refuse_small_integers(x, "avg_pool2d")
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
    if isinstance(output_size, numbers.Integral):
        output_size = (output_size, output_size)
    else:
        _check_output_size_2d(_tensor(input), output_size, "adaptive_avg_pool2d: "
                              f"output_size must be 2, but got {len(output_size)}")
    x, was = _batched(_tensor(input), "adaptive_avg_pool2d", 4)
    oh, ow = output_size
    oh = x.shape[2] if oh is None else int(oh)
    ow = x.shape[3] if ow is None else int(ow)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"adaptive_avg_pool2d: output size must be positive, got "
                           f"{(oh, ow)}")
    y = apply(K.adaptive_avg_pool2d, x, output_size=(oh, ow))
    return _unbatch(y, was)



def _check_nonempty_1d(x, name):
    """(C, L) or (N, C, L) with non-empty C and L (N may be 0), as torch's 1-d pools."""
    x = _tensor(x)
    if x.dim() in (2, 3) and 0 in x.shape[-2:]:
        raise RuntimeError(f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(x.shape)}")


def _as4d_1d(x, name):
    x, was = _batched(_tensor(x), name, 3)
    return _shape.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), was



def _from4d_1d(y, was):
    y = _shape.reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    return _unbatch(y, was)



def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of (N, C, L) or (C, L); `return_indices` gives indices into L."""
    _check_nonempty_1d(input, "max_pool1d")
    x4, was = _as4d_1d(input, "max_pool1d")
    stride = _single(kernel_size) if stride is None else _single(stride)
    y = max_pool2d(x4, (1, _single(kernel_size)), (1, stride), (0, _single(padding)),
                   (1, _single(dilation)), ceil_mode, return_indices)
    if return_indices:  # the flat index into 1 * L is the index into L
        return _from4d_1d(y[0], was), _from4d_1d(y[1], was)
    return _from4d_1d(y, was)



def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    x4, was = _as4d_1d(input, "avg_pool1d")
    stride = _single(kernel_size) if stride is None else _single(stride)
    y = avg_pool2d(x4, (1, _single(kernel_size)), (1, stride), (0, _single(padding)),
                   ceil_mode, count_include_pad)
    return _from4d_1d(y, was)



def adaptive_avg_pool1d(input, output_size):
    if isinstance(output_size, (tuple, list)) and len(output_size) != 1:
        raise RuntimeError("adaptive_avg_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(output_size)})")
    x4, was = _as4d_1d(input, "adaptive_avg_pool1d")
    y = adaptive_avg_pool2d(x4, (1, _single(output_size)))
    return _from4d_1d(y, was)


# ---------------------------------------------------------------------------------------
# 3-d pooling: the (H, W) pool of each depth slice, then the pool along D
# ---------------------------------------------------------------------------------------
# A max (or a mean with torch's divisors: a product of one count per dimension) over a
# box is the max over the depth window of the maxima over the (H, W) windows, so each 3-d
# pool is two calls of the 2-d one: over (H, W) with the depth folded into the channels,
# then over D with a (kd, 1) window on (N, C, D, OH * OW). Ties resolve as torch's: the
# first maximum in (D, H, W) scan order (the 2-d pool keeps the first of each slice, the
# depth pool the first slice). The gradients come from the 2-d pools' rules.

def _triple(v, name):
    if isinstance(v, numbers.Integral):
        return (int(v),) * 3
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise ValueError(f"{name} must be an int or a triple of ints, got {v}")
    return v


def _pool3d_args(name, kernel_size, stride, padding, dilation=1):
    kernel = _triple(kernel_size, "kernel_size")
    stride = kernel if (stride is None or (not isinstance(stride, numbers.Integral)
                                           and len(tuple(stride)) == 0)) \
        else _triple(stride, "stride")
    padding, dilation = _triple(padding, "padding"), _triple(dilation, "dilation")
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


def _depth_first(x):
    """(N, C, D, H, W) -> (N, C * D, H, W): each depth slice a channel."""
    N, C, D, H, W = x.shape
    return _shape.reshape(x, (N, C * D, H, W))


def _flat_3d_indices(idx_hw, idx_d, shape, oh, ow):
    """Flat indices into D*H*W of the maxima: `idx_d` (N, C, OD, OH*OW) indexes D*(OH*OW),
    `idx_hw` (N, C*D, OH, OW) indexes H*W within each depth slice."""
    N, C, D, H, W = shape
    i_d = np.asarray(idx_d.numpy())
    d, pos = i_d // (oh * ow), i_d % (oh * ow)
    hw = np.asarray(idx_hw.numpy()).reshape(N, C, D, oh * ow)
    n = np.arange(N).reshape(N, 1, 1, 1)
    c = np.arange(C).reshape(1, C, 1, 1)
    flat = d * (H * W) + hw[n, c, d, pos]
    return Tensor._of(flat.reshape(i_d.shape[:3] + (oh, ow)).astype(np.int64))


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over kd x kh x kw windows of (N, C, D, H, W) or (C, D, H, W) input;
    `return_indices` gives flat indices into D*H*W."""
    _check_non_batch_3d(_tensor(input), "max_pool3d")
    x, was = _batched(_tensor(input), "max_pool3d", 5)
    kernel, stride, padding, dilation = _pool3d_args("max_pool3d", kernel_size, stride,
                                                     padding, dilation)
    N, C, D, H, W = x.shape
    a, idx_hw = max_pool2d(_depth_first(x), kernel[1:], stride[1:], padding[1:], dilation[1:],
                           ceil_mode, return_indices=True)
    oh, ow = a.shape[2], a.shape[3]
    y, idx_d = max_pool2d(_shape.reshape(a, (N, C, D, oh * ow)), (kernel[0], 1), (stride[0], 1),
                          (padding[0], 0), (dilation[0], 1), ceil_mode, return_indices=True)
    out = _unbatch(_shape.reshape(y, (N, C, y.shape[2], oh, ow)), was)
    if return_indices:
        return out, _unbatch(_flat_3d_indices(idx_hw, idx_d, x.shape, oh, ow), was)
    return out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over kd x kh x kw windows (zero padding counted unless count_include_pad=False;
    `divisor_override` divides each window's sum by that number instead)."""
    _check_non_batch_3d(_tensor(input), "avg_pool3d")
    x, was = _batched(_tensor(input), "avg_pool3d", 5)
    _refuse_small_integers(x, "avg_pool3d_out_frame")
    kernel, stride, padding, _ = _pool3d_args("avg_pool3d", kernel_size, stride, padding)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("avg_pool3d: divisor must be not zero")
    N, C, D, H, W = x.shape
    if x._data.dtype.kind in "iu":
        return _unbatch(_avg_pool3d_integer(x, kernel, stride, padding, ceil_mode,
                                            count_include_pad, divisor_override), was)
    div = None if divisor_override is None else 1  # sums, divided once at the end
    a = avg_pool2d(_depth_first(x), kernel[1:], stride[1:], padding[1:], ceil_mode,
                   count_include_pad, div)
    oh, ow = a.shape[2], a.shape[3]
    y = avg_pool2d(_shape.reshape(a, (N, C, D, oh * ow)), (kernel[0], 1), (stride[0], 1),
                   (padding[0], 0), ceil_mode, count_include_pad, div)
    y = _shape.reshape(y, (N, C, y.shape[2], oh, ow))
    if divisor_override is not None:
        y = _pointwise.div(y, float(int(divisor_override)))
    return _unbatch(y, was)


def _avg_pool3d_integer(x, kernel, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """Integer input: torch divides each window's int64 sum once, truncating toward zero;
    the two-pass float path would truncate twice. The sums are two passes with divisor 1,
    in float64, the divisors those of a float pool of ones (sum of ones / mean of ones)."""
    def pool(t, div):
        return avg_pool3d(t, kernel, stride, padding, ceil_mode, count_include_pad, div)
    # float64 sums are exact below 2**53
    sums = np.rint(np.asarray(pool(x.to(_dt_float64), 1)._data)).astype(np.int64)
    if divisor_override is not None:
        d = np.asarray(int(divisor_override), dtype=np.int64)
    else:
        ones = Tensor._of(np.ones(x._data.shape, dtype=np.float64))
        d = np.rint(np.asarray(pool(ones, 1)._data) /
                    np.asarray(pool(ones, None)._data)).astype(np.int64)
    q = np.sign(sums) * np.sign(d) * (np.abs(sums) // np.abs(d))
    return Tensor._of(q.astype(x._data.dtype))


def _adaptive3d_size(output_size, x, name):
    if isinstance(output_size, numbers.Integral):
        output_size = (output_size,) * 3
    out = tuple(x.shape[2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    if len(out) != 3:
        raise RuntimeError(f"{name}: output_size must be 3, got {tuple(output_size)}")
    return out


def _check_rank_3d(input, name):
    if input.dim() < 4:  # torch's Python-level check (ValueError), before the kernel's
        raise ValueError(f"{name}: Input dimension should be at least 4, got input of shape "
                         f"{list(input.shape)}")


def _check_non_batch_3d(input, name):
    first = 1 if input.dim() == 5 else 0
    for d in range(first, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have "
                               f"positive length, but input has a shape of "
                               f"{list(input.shape)} and non-batch dimension {d} has length "
                               "zero!")


def adaptive_avg_pool3d(input, output_size):
    """Average over torch's adaptive windows in D, H and W."""
    _check_rank_3d(_tensor(input), "adaptive_avg_pool3d")
    x, was = _batched(_tensor(input), "adaptive_avg_pool3d", 5)
    od, oh, ow = _adaptive3d_size(output_size, x, "adaptive_avg_pool3d")
    if min(od, oh, ow) <= 0:
        raise RuntimeError(f"adaptive_avg_pool3d: output size must be positive, got "
                           f"{(od, oh, ow)}")
    if x._data.dtype == np.float16:
        if (od, oh, ow) == (1, 1, 1):  # torch takes the mean (accumulated in float32)
            return _unbatch(x.mean(dim=(-3, -2, -1), keepdim=True), was)
        return _unbatch(_adaptive_avg_pool3d_half(x, (od, oh, ow)), was)
    N, C, D, H, W = x.shape
    a = adaptive_avg_pool2d(_depth_first(x), (oh, ow))
    y = adaptive_avg_pool2d(_shape.reshape(a, (N, C, D, oh * ow)), (od, oh * ow))
    return _unbatch(_shape.reshape(y, (N, C, od, oh, ow)), was)


def _adaptive_avg_pool3d_half(x, out):
    """float16 adaptive average pooling as torch's kernel: each window summed in float16
    in (d, h, w) order, then divided by its depth, height and width in turn, every step
    rounded to float16. Vectorized over the windows: step (i, j, k) adds the window
    element at that offset where the window has one (tapegrad float16 ops round each
    step as torch's float16 arithmetic does, and give the gradient)."""
    starts, lens = [], []
    for n, o in zip(x.shape[2:], out):
        a = np.arange(o)
        s0, s1 = (a * n) // o, -((-(a + 1) * n) // o)
        starts.append(s0)
        lens.append(s1 - s0)
    acc = None
    for i in range(int(lens[0].max())):
        for j in range(int(lens[1].max())):
            for k in range(int(lens[2].max())):
                idx = [np.minimum(s + off, n - 1) for s, off, n in
                       zip(starts, (i, j, k), x.shape[2:])]
                v = x[:, :, idx[0][:, None, None], idx[1][None, :, None], idx[2][None, None, :]]
                if acc is None:  # offset 0 is in every window
                    acc = v
                    continue
                m = ((i < lens[0])[:, None, None] & (j < lens[1])[None, :, None]
                     & (k < lens[2])[None, None, :])
                acc = _pointwise.where(Tensor._of(m), acc + v, acc)
    for d, n in enumerate(lens):
        shape = [1, 1, 1]
        shape[d] = len(n)
        acc = acc / Tensor._of(n.astype(np.float16).reshape(shape))
    return acc


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over torch's adaptive windows in D, H and W (indices into D*H*W)."""
    _check_rank_3d(_tensor(input), "adaptive_max_pool3d")
    x, was = _batched(_tensor(input), "adaptive_max_pool3d", 5)
    _check_sizes(x, "adaptive_max_pool3d", 3)
    od, oh, ow = _adaptive3d_size(output_size, x, "adaptive_max_pool3d")
    N, C, D, H, W = x.shape
    a, idx_hw = adaptive_max_pool2d(_depth_first(x), (oh, ow), return_indices=True)
    y, idx_d = adaptive_max_pool2d(_shape.reshape(a, (N, C, D, oh * ow)), (od, oh * ow),
                                   return_indices=True)
    out = _unbatch(_shape.reshape(y, (N, C, od, oh, ow)), was)
    if return_indices:
        return out, _unbatch(_flat_3d_indices(idx_hw, idx_d, x.shape, oh, ow), was)
    return out


# ---------------------------------------------------------------------------------------
# power-average pooling: (sum over the window of x^p)^(1/p)
# ---------------------------------------------------------------------------------------
# The window sum is the average pool times the window size; its root is torch's value (a
# negative sum of odd powers is NaN through the root, as torch's), with gradient 0 where
# the sum is 0 (torch's relu mask). p = +-inf: the max of |x| (the min).

def _lp_pool(x, norm_type, kernel, stride, ceil_mode, avg, mx, size):
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return mx(x.abs(), kernel, stride, 0, 1, ceil_mode)
        return -mx(-x.abs(), kernel, stride, 0, 1, ceil_mode)
    s = avg(x.pow(norm_type), kernel, stride, 0, ceil_mode) * size
    # s^(1/p) with torch's value 0 and gradient 0 where s == 0 (the root's derivative is
    # infinite there: masked, never multiplied by 0, so no NaN)
    zero = s.detach() == 0
    return s.masked_fill(zero, 1.0).pow(1.0 / norm_type).masked_fill(zero, 0.0)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, L) or (C, L) windows of `kernel_size`."""
    k = _single(kernel_size)
    return _lp_pool(_tensor(input), norm_type, k, stride, ceil_mode, avg_pool1d, max_pool1d, k)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, H, W) or (C, H, W) windows of `kernel_size`."""
    kh, kw = _pair(kernel_size, "kernel_size")
    return _lp_pool(_tensor(input), norm_type, kernel_size, stride, ceil_mode, avg_pool2d,
                    max_pool2d, kh * kw)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W) windows."""
    kd, kh, kw = _triple(kernel_size, "kernel_size")
    return _lp_pool(_tensor(input), norm_type, kernel_size, stride, ceil_mode, avg_pool3d,
                    max_pool3d, kd * kh * kw)


# ---------------------------------------------------------------------------------------
# max unpooling: each value back at the flat index max_pool returned, zeros elsewhere
# ---------------------------------------------------------------------------------------

def _nuple(v, n, name):
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name} must be an int or {n} ints, got {v}")
    return v


def _unpool_output_size(x, kernel, stride, padding, output_size):
    """torch's `_unpool_output_size`: the default (in - 1) s - 2 p + k, or `output_size`
    (its last len(kernel) entries) within one stride of it."""
    n = len(kernel)
    default = [(x.shape[x.dim() - n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        return tuple(default)
    output_size = [int(v) for v in output_size]
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{lo} and {hi})")
    return tuple(output_size)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n, name):
    x = _tensor(input)
    kernel = _nuple(kernel_size, n, "kernel_size")
    stride = kernel if stride is None else _nuple(stride, n, "stride")
    padding = _nuple(padding, n, "padding")
    if x.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D input, but got input of "
                           f"shape {list(x.shape)}")
    if tuple(indices.shape) != tuple(x.shape):
        raise RuntimeError(f"{name}: Expected shape of indices to be same as that of the "
                           f"input tensor ({list(x.shape)}) but got indices tensor with "
                           f"shape: {list(indices.shape)}")
    out = _unpool_output_size(x, kernel, stride, padding, output_size)
    lead = tuple(x.shape[:x.dim() - n])
    size = int(np.prod(out))
    idx = np.asarray(indices.numpy()).astype(np.int64).reshape(lead + (-1,))
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx.max() if idx.max() >= size else idx.min()
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(o) for o in out)})")
    zeros = Tensor._of(np.zeros(lead + (size,), dtype=x._data.dtype))
    y = zeros.scatter(len(lead), Tensor._of(idx), x.reshape(lead + (-1,)))
    return y.reshape(lead + out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: (N, C, L) values at their `indices` (from
    max_pool1d(return_indices=True)) in an (N, C, L_out) of zeros."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                       "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d (indices into H_out * W_out)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                       "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (indices into D_out * H_out * W_out)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3,
                       "max_unpool3d")


# ---- fractional max pooling ------------------------------------------------------------
def _fractional_starts(sample, n_in, n_out, k, ft):
    """torch's generate_intervals: window starts for each (N, C) sample u in [0, 1):
    int((i + u) * alpha) - int(u * alpha), alpha = (n_in - k) / (n_out - 1), the last
    window ending at the input's end. Arithmetic in the samples' float type."""
    u = sample.astype(ft)[..., None]
    starts = np.empty(sample.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        alpha = ft(n_in - k) / ft(n_out - 1)
        i = np.arange(n_out - 1, dtype=ft)
        starts[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    starts[..., -1] = n_in - k
    return starts


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples, nd):
    """Max over windows of size kernel_size whose starts are pseudo-random increments
    (Graham, 2014): the windows gathered from the flattened planes, then max(dim), so the
    gradient goes to the first maximum of each window as torch's. Indices are flat within
    each plane."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         f"output_ratio")
    x = _tensor(input)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(x.shape)}")
    spatial = tuple(x.shape[-nd:])
    k = _nuple(kernel_size, nd, "kernel_size")
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else \
            (output_ratio,) * nd
        if len(ratio) > nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             f"tuple of Ints.")
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    out = _nuple(output_size, nd, "output_size")
    batched = x.ndim == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    N, C = x.shape[:2]
    for j in range(nd):
        if out[j] + k[j] - 1 > spatial[j]:
            raise RuntimeError(f"{name}(): pool size {k[j]} too large relative to input "
                               f"size {spatial[j]} and output size {out[j]}")
    if _random_samples is None:
        _random_samples = _random.rand(N, C, nd, dtype=x.dtype)
    samples = np.asarray(_random_samples._data if isinstance(_random_samples, Tensor)
                         else _random_samples)
    # torch reads the first N rows (a module's fixed samples may cover a larger batch)
    if samples.ndim != 3 or samples.shape[0] < N or samples.shape[1:] != (C, nd):
        raise RuntimeError(f"{name}(): expected _random_samples of shape {(N, C, nd)}, got "
                           f"{tuple(samples.shape)}")
    samples = samples[:N]
    ft = np.float64 if samples.dtype == np.float64 else np.float32
    # torch's samples run (w, h) in 2-d and (t, h, w) in 3-d
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_fractional_starts(samples[:, :, order[j]], spatial[j], out[j], k[j], ft)
              for j in range(nd)]
    strides = [int(np.prod(spatial[j + 1:], dtype=np.int64)) for j in range(nd)]
    # flat source index of every (output position, window offset): (N, C, *out, *k)
    lin = np.zeros((N, C) + out + k, dtype=np.int64)
    for j in range(nd):
        shape_s = (N, C) + tuple(out[i] if i == j else 1 for i in range(nd)) + (1,) * nd
        shape_o = (1, 1) + (1,) * nd + tuple(k[i] if i == j else 1 for i in range(nd))
        lin = lin + (starts[j].reshape(shape_s) + np.arange(k[j]).reshape(shape_o)) * strides[j]
    Q, K = int(np.prod(out, dtype=np.int64)), int(np.prod(k, dtype=np.int64))
    lin = lin.reshape(N, C, Q, K)
    flat = x.reshape(N, C, int(np.prod(spatial, dtype=np.int64)))
    win = flat.gather(2, Tensor._of(lin.reshape(N, C, Q * K))).reshape(N, C, Q, K)
    vals, pos = win.max(dim=3)
    y = vals.reshape((N, C) + out)
    if not batched:
        y = y.squeeze(0)
    if not return_indices:
        return y
    idx = np.take_along_axis(lin, np.asarray(pos._data)[..., None], 3)[..., 0]
    idx = Tensor._of(idx.reshape((N, C) + out if batched else (C,) + out))
    return y, idx


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-d fractional max pooling of (N, C, H, W) or (C, H, W) input."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-d fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 3)


"""torch.nn.functional's vision functions: `pad` (ops/shape.py: constant,
reflect, replicate, circular), `interpolate` / `upsample*`, `pixel_shuffle` /
`pixel_unshuffle`.

`interpolate`: resize the spatial dims of (N, C, *spatial) input, as torch does.

Modes: nearest, nearest-exact (1-3 spatial dims), linear (3-D input), bilinear (4-D),
trilinear (5-D); `size=` or `scale_factor=`, `align_corners`, `recompute_scale_factor`.
Each spatial axis is resized separately (the linear modes are separable), as a gather
along that axis (index_select, whose backward is the scatter-add) and, for the linear
modes, a weighted sum of the two neighbours. Source coordinates follow ATen:
    nearest:        src = min(floor(dst * scale), in - 1)          (float32 arithmetic)
    nearest-exact:  src = min(floor((dst + 0.5) * scale), in - 1)
    linear:         align_corners: src = dst * (in - 1) / (out - 1)
                    otherwise:     src = max((dst + 0.5) * scale - 0.5, 0)
with scale = 1 / scale_factor when a scale factor is given (and not recomputed), else
in / out.

`pixel_shuffle` / `pixel_unshuffle` (super_resolution's sub-pixel upscaling) are each a
reshape, a permute and a reshape of the (*, C, H, W) input, so the gradient is those
ops' own: pixel_shuffle moves the r*r channel groups into r x r spatial blocks,
`out[..., c, h*r + i, w*r + j] = in[..., c*r*r + i*r + j, h, w]`, and pixel_unshuffle is
its inverse.
"""
import math

import numpy as np

from ...ops.indexing import index_select
from ...ops.shape import pad  # noqa: F401  (F.pad: one implementation, in ops)
from ..._tensor import Tensor


_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}
_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def _as_tuple(v, n, name):
    if isinstance(v, (list, tuple)):
        if len(v) != n:
            raise ValueError(
                f"Input and {name} must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {n} and {name} {tuple(v)}. Please provide "
                "input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                "(o1, o2, ...,oK) format.")
        return tuple(v)
    return (v,) * n


def _check_mode(mode, ndim, align_corners):
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
        if ndim not in (3, 4, 5):
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                      f"(got {ndim}D) for the modes: {_MODES} (got {mode})")
        return
    if mode in _LINEAR:
        if ndim != _LINEAR[mode]:
            raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs "
                                      f"{_LINEAR[mode]}D input")
        return
    if mode == "bicubic":
        if ndim != 4:
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors "
                                      f"supported (got {ndim}D) for the modes: {_MODES} "
                                      f"(got {mode})")
        return
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                              f"(got {ndim}D) for the modes: {_MODES} (got {mode})")


def _out_sizes(x, size, scale_factor, recompute):
    n = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    spatial = tuple(x.shape[2:])
    if size is not None:
        return tuple(int(s) for s in _as_tuple(size, n, "output size")), (None,) * n
    scales = tuple(float(s) for s in _as_tuple(scale_factor, n, "scale_factor"))
    out = tuple(int(math.floor(float(i) * s)) for i, s in zip(spatial, scales))
    return out, ((None,) * n if recompute else scales)


def _nearest_index(n_in, n_out, scale, exact):
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor(((dst + np.float32(0.5)) if exact else dst) * s).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _linear_weights(n_in, n_out, scale, align_corners, dtype):
    """(i0, i1, lambda1) per output position, the arithmetic in the input's dtype."""
    ft = np.float64 if dtype == np.float64 else np.float32
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = np.arange(n_out, dtype=ft) * s
    else:
        s = ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)
        src = np.maximum((np.arange(n_out, dtype=ft) + ft(0.5)) * s - ft(0.5), ft(0))
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (src - i0).astype(dtype)


def _cubic_weights(t, A=-0.75):
    """The four weights of cubic convolution (Keys, A = -0.75 as torch) at fraction t:
    for the neighbours at offsets -1, 0, 1, 2."""
    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _bicubic_axis(x, axis, n_out, scale, align_corners):
    """Cubic convolution along one axis: out = sum_k w_k(t) in[clamp(floor(src) - 1 + k)]
    with torch's source coordinate (not clamped at 0, unlike linear), in the input's
    float precision (float32 for float32/float16 inputs, as ATen's opmath)."""
    n_in = x.shape[axis]
    ft = np.float64 if x.dtype == np.float64 else np.float32
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = np.arange(n_out, dtype=ft) * s
    else:
        s = ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)
        src = (np.arange(n_out, dtype=ft) + ft(0.5)) * s - ft(0.5)
    i0 = np.floor(src).astype(np.int64)
    t = (src - i0).astype(ft)
    out = None
    for k, w in enumerate(_cubic_weights(t)):
        idx = np.clip(i0 - 1 + k, 0, n_in - 1)
        term = index_select(x, axis, Tensor._of(idx)) * \
            Tensor._of(w.astype(x._data.dtype).reshape(_bshape(x.ndim, axis, n_out)))
        out = term if out is None else out + term
    return out


def _bshape(ndim, axis, n):
    shape = [1] * ndim
    shape[axis] = n
    return tuple(shape)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, *spatial) input to `size` or by `scale_factor` (see module doc)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): input must be a Tensor, not {type(input).__name__}")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by tapegrad")
    _check_mode(mode, input.ndim, align_corners)
    sizes, scales = _out_sizes(input, size, scale_factor, recompute_scale_factor)
    for o in sizes:
        if o <= 0:
            raise RuntimeError(f"interpolate: output size should be greater than 0, got "
                               f"{sizes} (input shape {tuple(input.shape)})")
    if mode == "area":  # torch: the adaptive average pool to the (integer) output size
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[input.ndim - 3]
        return pool(input, sizes)
    x = input
    # ATen computes bicubic in float32 (its opmath) and rounds to the input's dtype at the
    # end; integer results are rounded to the nearest and saturated
    low = mode == "bicubic" and input._data.dtype not in (np.float32, np.float64)
    if low:
        x = x.float()
    # last axis first: for bilinear this is torch's order (width weights inside)
    for k in reversed(range(len(sizes))):
        axis, n_in, n_out = 2 + k, x.shape[2 + k], sizes[k]
        if mode in ("nearest", "nearest-exact"):
            if n_in == n_out:
                continue
            idx = _nearest_index(n_in, n_out, scales[k], mode == "nearest-exact")
            x = index_select(x, axis, Tensor._of(idx))
            continue
        if mode == "bicubic":
            x = _bicubic_axis(x, axis, n_out, scales[k], bool(align_corners))
            if low and input._data.dtype.kind in "iu" and not align_corners:
                # ATen's uint8 kernel (align_corners=False) rounds after each pass
                x = _round_to(x, input._data.dtype).float()
            continue
        i0, i1, l1 = _linear_weights(n_in, n_out, scales[k], bool(align_corners), x.dtype)
        w1 = Tensor._of(l1.reshape(_bshape(x.ndim, axis, n_out)))
        w0 = Tensor._of((1 - l1).reshape(_bshape(x.ndim, axis, n_out)))
        x = (index_select(x, axis, Tensor._of(i0)) * w0
             + index_select(x, axis, Tensor._of(i1)) * w1)
    return _round_to(x, input._data.dtype) if low else x


def _round_to(x, dtype):
    """float32 x in `dtype`: integers rounded to the nearest and saturated."""
    if dtype.kind in "iub":
        info = np.iinfo(dtype)
        x = x.round().clamp(float(info.min), float(info.max))
    return x.to(Tensor._of(np.zeros((), dtype)).dtype)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate (torch keeps it)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _check(input, factor, name, what):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")



def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r) with r = upscale_factor."""
    r = int(upscale_factor)
    _check(input, r, "pixel_shuffle", "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but "
                           f"input.size(-3)={c} is not divisible by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    # (..., C, i, j, H, W) -> (..., C, H, i, W, j)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)



def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W) with r = downscale_factor."""
    r = int(downscale_factor)
    _check(input, r, "pixel_unshuffle", "downscale_factor")
    *batch, c, h, w = input.shape
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    # (..., C, H, i, W, j) -> (..., C, i, j, H, W)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, C, *) -> the channels regrouped: channel g * (C / groups) + i goes to
    i * groups + g (ShuffleNet's shuffle)."""
    x = input
    if x.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(x.shape)}")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    C = x.shape[1]
    if C % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {C} "
                           f"channels and {groups} groups.")
    rest = tuple(x.shape[2:])
    y = x.reshape((x.shape[0], groups, C // groups) + rest).transpose(1, 2)
    return y.reshape((x.shape[0], C) + rest)

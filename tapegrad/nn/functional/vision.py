"""torch.nn.functional's vision functions: `pad` (ops/shape.py: constant,
reflect, replicate, circular), `interpolate` / `upsample*`, `pixel_shuffle` /
`pixel_unshuffle`, `grid_sample` (torch.grid_sampler*) and `affine_grid` (at the end).

`interpolate`: resize the spatial dims of (N, C, *spatial) input, as torch does.

Modes: nearest, nearest-exact (1-3 spatial dims), linear (3-D input), bilinear (4-D),
trilinear (5-D), bicubic (4-D: cubic convolution with A = -0.75 over the 4 neighbours
floor(src) - 1 .. floor(src) + 2, clamped to the edge), area (the adaptive average pool to
the output size); `size=` or `scale_factor=`, `align_corners`, `recompute_scale_factor`.
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
import warnings

import numpy as np

from ... import dtypes as _dt
from ...core import tape as _tape
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
        term = index_select(x, axis, _const(idx)) * \
            _const(w.astype(x._data.dtype).reshape(_bshape(x.ndim, axis, n_out)))
        out = term if out is None else out + term
    return out


def _const(a):
    """An index or weight array made from the sizes alone, as a tensor: a constant of a
    tg.compile capture (`tape.const`: a replay reuses it)."""
    return Tensor._of(_tape.const(a))


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
    kind = input._data.dtype.kind
    if kind in "biu" and mode not in ("nearest", "nearest-exact", "area") and not (
            input._data.dtype == np.uint8 and mode in ("bilinear", "bicubic")):
        # torch's CPU kernels interpolate integers only for uint8 images (bilinear, bicubic)
        kernel = "compute_indices_weights_" + ("cubic" if mode == "bicubic" else "linear")
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dt.torch_name(input._data.dtype)}'")
    if mode == "area":  # torch: the adaptive average pool to the (integer) output size
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[input.ndim - 3]
        return pool(input, sizes)
    if mode in ("linear", "bilinear", "trilinear") and input._data.dtype == np.float16:
        # torch's float16 kernels compute in float32 and round once; linear and trilinear
        # (its generic N-d kernel) store their weights in float16 first, bilinear not
        weights = np.float16 if mode != "bilinear" else np.float32
        return _resize(input.float(), sizes, scales, mode, align_corners, weights).half()
    # ATen computes bicubic (and uint8 bilinear) in float32 and rounds to the input's
    # dtype at the end; integer results are rounded to the nearest and saturated
    if (mode == "bicubic" and input._data.dtype not in (np.float32, np.float64)) or (
            mode == "bilinear" and kind == "u"):
        x = _resize(input.float(), sizes, scales, mode, align_corners, np.float32,
                    input._data.dtype)
        return _round_to(x, input._data.dtype)
    return _resize(input, sizes, scales, mode, align_corners, input._data.dtype)


def _resize(x, sizes, scales, mode, align_corners, weights, low=None):
    """interpolate's resizing, axis by axis; the linear weights rounded to `weights`;
    `low`: the integer dtype a float32 bicubic pass is rounded to (ATen's uint8 kernel)."""
    # last axis first: for bilinear this is torch's order (width weights inside)
    for k in reversed(range(len(sizes))):
        axis, n_in, n_out = 2 + k, x.shape[2 + k], sizes[k]
        if mode in ("nearest", "nearest-exact"):
            if n_in == n_out:
                continue
            idx = _nearest_index(n_in, n_out, scales[k], mode == "nearest-exact")
            x = index_select(x, axis, _const(idx))
            continue
        if mode == "bicubic":
            x = _bicubic_axis(x, axis, n_out, scales[k], bool(align_corners))
            if low is not None and np.dtype(low).kind in "iu":
                # ATen's uint8 kernel rounds and saturates after each (separable) pass
                x = _round_to(x, low).float()
            continue
        i0, i1, l1 = _linear_weights(n_in, n_out, scales[k], bool(align_corners), weights)
        w0 = (1 - l1.astype(np.float64)).astype(weights).astype(x._data.dtype)
        w1 = _const(l1.astype(x._data.dtype).reshape(_bshape(x.ndim, axis, n_out)))
        w0 = _const(w0.reshape(_bshape(x.ndim, axis, n_out)))
        x = (index_select(x, axis, _const(i0)) * w0
             + index_select(x, axis, _const(i1)) * w1)
    return x


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


# ---- grid_sample, affine_grid ----------------------------------------------------------
_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _grid_unnormalize(coord, size, align_corners):
    """[-1, 1] -> pixel coordinates: -1 is the first pixel's centre (align_corners) or its
    outer edge."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _grid_reflect(x, twice_low, twice_high):
    """torch's reflect_coordinates: x mirrored into [twice_low / 2, twice_high / 2]; the
    fold count is a constant, so the gradient flips sign in mirrored folds as torch's."""
    if twice_low == twice_high:
        return x * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    d = (x - lo).abs()
    flips = np.floor(np.asarray(d._data) / span)
    extra = d - Tensor._of(flips * span)
    even = Tensor._of(np.asarray(flips % 2 == 0))
    return (extra + lo).where(even, span - extra + lo)


def _grid_pad_coords(x, size, padding, align_corners):
    """compute_coordinates: border clips, reflection mirrors then clips."""
    if padding == 1:
        return x.clamp(0, size - 1)
    if padding == 2:
        x = _grid_reflect(x, 0, 2 * (size - 1)) if align_corners else \
            _grid_reflect(x, -1, 2 * size - 1)
        return x.clamp(0, size - 1)
    return x


def _grid_pad_int(i, size, padding, align_corners):
    """The same on integer positions (bicubic's neighbours), as arrays."""
    if padding == 0:
        return i
    x = i.astype(np.float64)
    if padding == 2:
        lo, hi = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if lo == hi:
            x = np.zeros_like(x)
        else:
            lo2, span = lo / 2, (hi - lo) / 2
            d = np.abs(x - lo2)
            flips = np.floor(d / span)
            extra = np.fmod(d, span)
            x = np.where(flips % 2 == 0, extra + lo2, span - extra + lo2)
    return np.clip(x, 0, size - 1).astype(np.int64)


def _cubic_coeffs(t, A=-0.75):
    """torch's get_cubic_upsample_coefficients on a tensor t: offsets -1, 0, 1, 2."""
    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: (N, C, *in) sampled at grid (N, *out, d) -> (N, C, *out).
    Modes 0 bilinear, 1 nearest, 2 bicubic (2-d only); padding 0 zeros, 1 border,
    2 reflection. Composed from differentiable ops (gathers from the flattened input and
    weights computed from the grid), so the input gradient is the scatter-add of the
    weights and the grid gradient the weights' derivative, as torch's."""
    nd = input.ndim - 2
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same "
                           f"number of dimensions, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, "
                           f"but input has {input.dtype} and grid has {grid.dtype}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch "
                           f"size, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if interpolation_mode == 2 and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    N, C = input.shape[:2]
    sizes = tuple(input.shape[2:])  # (D,) H, W
    out_sp = tuple(grid.shape[1:-1])
    Q = int(np.prod(out_sp, dtype=np.int64))
    flat = input.reshape(N, C, -1)
    g = grid.reshape(N, Q, nd)
    # coordinate k of the grid indexes spatial dim nd - 1 - k (x is the width)
    coords = [_grid_unnormalize(g[:, :, nd - 1 - j], sizes[j], align_corners)
              for j in range(nd)]
    strides = [int(np.prod(sizes[j + 1:], dtype=np.int64)) for j in range(nd)]

    def take(idx_per_dim, weight):
        """sum over nothing: input at the integer positions (constant arrays, (N, Q)) times
        weight (N, Q) tensor, zero where out of bounds."""
        inb = np.ones((N, Q), dtype=bool)
        lin = np.zeros((N, Q), dtype=np.int64)
        for j, i in enumerate(idx_per_dim):
            inb &= (i >= 0) & (i < sizes[j])
            lin += np.clip(i, 0, sizes[j] - 1) * strides[j]
        vals = flat.gather(2, Tensor._of(np.ascontiguousarray(
            np.broadcast_to(lin[:, None, :], (N, C, Q)))))
        w = weight * Tensor._of(inb.astype(input._data.dtype))
        return vals * w.unsqueeze(1)

    if interpolation_mode == 1:
        cs = [_grid_pad_coords(c, sizes[j], padding_mode, align_corners)
              for j, c in enumerate(coords)]
        idx = [np.rint(np.asarray(c._data)).astype(np.int64) for c in cs]
        out = take(idx, Tensor._of(np.ones((N, Q), dtype=input._data.dtype)))
        if grid.requires_grad:  # torch's grid gradient is zero here (not absent)
            out = out + (g.sum() * 0)
    elif interpolation_mode == 0:
        cs = [_grid_pad_coords(c, sizes[j], padding_mode, align_corners)
              for j, c in enumerate(coords)]
        lo = [np.floor(np.asarray(c._data)).astype(np.int64) for c in cs]
        # weight of the lower/upper neighbour along each dim
        wts = [((Tensor._of(lo[j].astype(input._data.dtype)) + 1) - cs[j],
                cs[j] - Tensor._of(lo[j].astype(input._data.dtype))) for j in range(nd)]
        out = None
        for corner in np.ndindex(*(2,) * nd):
            w = None
            for j, b in enumerate(corner):
                w = wts[j][b] if w is None else w * wts[j][b]
            term = take([lo[j] + b for j, b in enumerate(corner)], w)
            out = term if out is None else out + term
    else:
        lo = [np.floor(np.asarray(c._data)).astype(np.int64) for c in coords]
        co = [_cubic_coeffs(coords[j] - Tensor._of(lo[j].astype(input._data.dtype)))
              for j in range(nd)]
        out = None
        for a in range(4):
            for b in range(4):
                iy = _grid_pad_int(lo[0] - 1 + a, sizes[0], padding_mode, align_corners)
                ix = _grid_pad_int(lo[1] - 1 + b, sizes[1], padding_mode, align_corners)
                term = take([iy, ix], co[0][a] * co[1][b])
                out = term if out is None else out + term
    return out.reshape((N, C) + out_sp)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != 4:
        raise RuntimeError(f"grid_sampler_2d(): expected 4D input, got {input.ndim}D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != 5:
        raise RuntimeError(f"grid_sampler_3d(): expected 5D input, got {input.ndim}D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def _default_align_corners(align_corners):
    """grid_sample's and affine_grid's align_corners: None is False, with torch's warning."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True "
                      "if the old behavior is desired. See the documentation of grid_sample "
                      "for details.")
        return False
    return align_corners


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample input (N, C, H, W) / (N, C, D, H, W) at the normalized [-1, 1] locations of
    grid (N, H_out, W_out, 2) / (N, D_out, H_out, W_out, 3): torch.grid_sampler."""
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _default_align_corners(align_corners)
    return grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                        bool(align_corners))


def _affine_base(n, align_corners, dtype):
    """torch's linspace_from_neg_one: n points over [-1, 1] (pixel centres when not
    align_corners); 0 for a single point."""
    if n <= 1:
        return np.zeros(max(n, 0), dtype=dtype)
    v = np.linspace(-1, 1, n, dtype=dtype)
    return v if align_corners else v * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps theta (N, 2, 3) for size (N, C, H, W) ->
    (N, H, W, 2), or theta (N, 3, 4) for (N, C, D, H, W) -> (N, D, H, W, 3): the base
    grid of normalized (x, y[, z], 1) coordinates times theta^T."""
    align_corners = _default_align_corners(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for "
                             f"size {size}. Got {tuple(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for "
                             f"size {size}. Got {tuple(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an issue for standard "
                      "upsampling, but may cause issues in some cases.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    dt = theta._data.dtype
    axes = [_affine_base(n, align_corners, dt) for n in reversed(spatial)]  # x, y[, z]
    mesh = list(np.meshgrid(*axes[::-1], indexing="ij"))[::-1]  # each of shape spatial
    base = np.stack(mesh + [np.ones(spatial, dtype=dt)], -1).reshape(-1, len(spatial) + 1)
    out = Tensor._of(base) @ theta.transpose(1, 2)  # (N, P, d)
    return out.reshape((size[0],) + tuple(spatial) + (len(spatial),))

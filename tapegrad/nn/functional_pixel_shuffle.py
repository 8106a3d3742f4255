"""F.pixel_shuffle / F.pixel_unshuffle (super_resolution's sub-pixel upscaling).

Each is a reshape, a permute and a reshape of the (*, C, H, W) input, so the gradient
is those ops' own (no rule of its own): pixel_shuffle moves the r*r channel groups into
r x r spatial blocks, `out[..., c, h*r + i, w*r + j] = in[..., c*r*r + i*r + j, h, w]`,
and pixel_unshuffle is its inverse."""
__all__ = ["pixel_shuffle", "pixel_unshuffle"]


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

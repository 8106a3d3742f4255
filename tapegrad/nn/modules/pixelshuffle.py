"""torch.nn.modules.pixelshuffle: `nn.PixelShuffle` / `nn.PixelUnshuffle` over
F.pixel_shuffle / F.pixel_unshuffle."""
from ..functional.vision import pixel_shuffle, pixel_unshuffle
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): `PixelShuffle(upscale_factor=r)`."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W): `PixelUnshuffle(downscale_factor=r)`."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"

"""torch.nn.modules.pixelshuffle: PixelShuffle, PixelUnshuffle (re-exported from
tapegrad.nn)."""
from ..pixelshuffle import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]

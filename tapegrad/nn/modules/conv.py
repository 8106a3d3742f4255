"""torch.nn.modules.conv: convolutions (re-exported from tapegrad.nn)."""
from ..conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

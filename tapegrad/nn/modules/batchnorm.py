"""torch.nn.modules.batchnorm: batch norms (re-exported from tapegrad.nn)."""
from ..normalization import BatchNorm1d
from ..norm2d import BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]

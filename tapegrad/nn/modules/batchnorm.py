"""torch.nn.modules.batchnorm: batch norms (re-exported from tapegrad.nn)."""
from ..normalization import BatchNorm1d
from ..norm2d import BatchNorm2d
from ..sync_batchnorm import SyncBatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "SyncBatchNorm"]

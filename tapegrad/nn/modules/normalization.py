"""torch.nn.modules.normalization: LayerNorm, GroupNorm, RMSNorm (re-exported from
tapegrad.nn)."""
from ..groupnorm import GroupNorm
from ..normalization import LayerNorm
from ..rmsnorm import RMSNorm

__all__ = ["GroupNorm", "LayerNorm", "RMSNorm"]

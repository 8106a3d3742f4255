"""torch.nn.modules.normalization: LayerNorm, GroupNorm (re-exported from tapegrad.nn)."""
from ..groupnorm import GroupNorm
from ..normalization import LayerNorm

__all__ = ["GroupNorm", "LayerNorm"]

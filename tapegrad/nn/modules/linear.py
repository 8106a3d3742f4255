"""torch.nn.modules.linear: Identity, Linear (re-exported from tapegrad.nn)."""
from ..linear import Identity, Linear

__all__ = ["Identity", "Linear"]

"""torch.nn.modules.flatten: Flatten, Unflatten (re-exported from tapegrad.nn)."""
from ..flatten import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]

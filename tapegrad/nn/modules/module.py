"""torch.nn.modules.module: the Module base class (re-exported from tapegrad.nn)."""
from ..module import Module

__all__ = ["Module"]

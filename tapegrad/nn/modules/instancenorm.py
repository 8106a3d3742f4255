"""torch.nn.modules.instancenorm: InstanceNorm1d/2d (re-exported from tapegrad.nn)."""
from ..instancenorm import InstanceNorm1d, InstanceNorm2d

__all__ = ["InstanceNorm1d", "InstanceNorm2d"]

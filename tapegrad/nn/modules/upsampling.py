"""torch.nn.modules.upsampling: Upsample (re-exported from tapegrad.nn)."""
from ..upsample import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]

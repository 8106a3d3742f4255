"""torch.nn.modules.pooling: pooling layers (re-exported from tapegrad.nn)."""
from ..adaptive_max_pool import AdaptiveMaxPool1d, AdaptiveMaxPool2d
from ..pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
                       MaxPool2d)

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d"]

"""torch.nn.modules.loss: the loss modules and their bases (re-exported from tapegrad.nn)."""
from ..loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                    MSELoss, NLLLoss, SmoothL1Loss)
from ..loss import _Loss, _WeightedLoss  # noqa: F401  torch's bases, importable by name
from ..loss2 import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,
                     MarginRankingLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                     PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
           "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss"]

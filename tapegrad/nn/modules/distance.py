"""torch.nn.modules.distance: CosineSimilarity, PairwiseDistance (re-exported from
tapegrad.nn)."""
from ..distance import CosineSimilarity, PairwiseDistance

__all__ = ["CosineSimilarity", "PairwiseDistance"]

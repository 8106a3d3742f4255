"""torch.nn.functional's distance functions: `pairwise_distance` and `cosine_similarity`.
Their one implementation is an op (torch has them at the top level too: `torch.cosine_similarity`),
so this section names them from there."""
from ...ops.linalg import cosine_similarity, pairwise_distance  # noqa: F401

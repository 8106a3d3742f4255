"""torch.nn.functional's distance functions: `pairwise_distance` and `cosine_similarity`
(their one implementation is an op: torch has them at the top level too,
`torch.cosine_similarity`, so this section names them from there) and `pdist`."""
import numpy as np

from ...ops.linalg import cosine_similarity, pairwise_distance  # noqa: F401
from ..._tensor import Tensor


def pdist(input, p=2):
    """The p-norm distances between every pair of rows i < j of (N, M) input, in the
    row-major order of the upper triangle: (N (N - 1) / 2,)."""
    x = input
    if x.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(x.shape[0], 1)
    d = (x.index_select(0, Tensor._of(i.astype(np.int64)))
         - x.index_select(0, Tensor._of(j.astype(np.int64))))
    return d.norm(p, dim=-1)

"""torch.functional: the module torch's Python-level tensor functions are defined in
(`torch.split is torch.functional.split`). Programs import it by name (introyt's
modelsyt tutorial: `import torch.functional as F`), so it exists and holds the same
functions as the top level; the ones tapegrad does not have yet are absent here too.
"""
from .ops import linalg as _linalg, shape as _shape, sorting as _sorting
from .ops.public import EXPORTS as _EXPORTS

# the same objects as the top level (tg.einsum takes out=: its declared form)
broadcast_tensors, meshgrid, split = _shape.broadcast_tensors, _shape.meshgrid, _shape.split
einsum, unique, norm = _EXPORTS["einsum"], _sorting.unique, _linalg.norm

__all__ = ["broadcast_tensors", "einsum", "meshgrid", "norm", "split", "unique"]

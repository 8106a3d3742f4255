"""torch.functional: the module torch's Python-level tensor functions are defined in
(`torch.split is torch.functional.split`). Programs import it by name (introyt's
modelsyt tutorial: `import torch.functional as F`), so it exists and holds the same
functions as the top level; the ones tapegrad does not have yet are absent here too.
"""
from .ops.shape import broadcast_tensors
from .ops.shape import meshgrid
from .out_functions import einsum  # with out=, as the top level
from .ops.sorting import unique
from .ops.linalg import norm
from .ops.shape import split

__all__ = ["broadcast_tensors", "einsum", "meshgrid", "norm", "split", "unique"]

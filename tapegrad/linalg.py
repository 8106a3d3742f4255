"""tapegrad.linalg: torch.linalg's norms (norm, vector_norm, matrix_norm, svdvals)."""
from .ops.linalg_functions import linalg_norm as norm
from .ops.linalg_functions import matrix_norm, svdvals, vector_norm

__all__ = ["norm", "vector_norm", "matrix_norm", "svdvals"]

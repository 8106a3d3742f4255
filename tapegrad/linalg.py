"""tapegrad.linalg: torch.linalg's norms (norm, vector_norm, matrix_norm, svdvals), cross,
det, slogdet, inv, solve, svd, qr, eigh, eigvalsh, cholesky, pinv and LinAlgError."""
from .ops.linalg import cholesky, eigvalsh, pinv
from .ops.linalg import linalg_eigh as eigh
from .ops.linalg import linalg_qr as qr
from .ops.linalg import linalg_svd as svd
from .ops.linalg import linalg_norm as norm
from .ops.linalg import matrix_norm, svdvals, vector_norm
from .ops.rules.linalg_solve import LinAlgError
from .ops.linalg import linalg_cross as cross
from .ops.linalg import linalg_det as det
from .ops.linalg import linalg_inv as inv
from .ops.linalg import linalg_slogdet as slogdet
from .ops.linalg import solve

__all__ = ["norm", "vector_norm", "matrix_norm", "svdvals", "cross", "det", "slogdet", "inv",
           "solve", "svd", "qr", "eigh", "eigvalsh", "cholesky", "pinv", "LinAlgError"]

"""tapegrad.linalg: torch.linalg's norms (norm, vector_norm, matrix_norm, svdvals), cross,
det, slogdet, inv, solve, svd, qr, eigh, eigvalsh, cholesky, pinv and LinAlgError."""
from .ops.linalg_decomp_functions import cholesky, eigvalsh, pinv
from .ops.linalg_decomp_functions import linalg_eigh as eigh
from .ops.linalg_decomp_functions import linalg_qr as qr
from .ops.linalg_decomp_functions import linalg_svd as svd
from .ops.linalg_functions import linalg_norm as norm
from .ops.linalg_functions import matrix_norm, svdvals, vector_norm
from .ops.rules.linalg_solve import LinAlgError
from .ops.linalg_solve_functions import linalg_cross as cross
from .ops.linalg_solve_functions import linalg_det as det
from .ops.linalg_solve_functions import linalg_inv as inv
from .ops.linalg_solve_functions import linalg_slogdet as slogdet
from .ops.linalg_solve_functions import solve

__all__ = ["norm", "vector_norm", "matrix_norm", "svdvals", "cross", "det", "slogdet", "inv",
           "solve", "svd", "qr", "eigh", "eigvalsh", "cholesky", "pinv", "LinAlgError"]

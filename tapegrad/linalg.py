"""tapegrad.linalg: torch.linalg's norms (norm, vector_norm, matrix_norm, svdvals), cross,
det, slogdet, inv, solve, svd, qr, eigh, eigvalsh, cholesky, pinv, the matrix functions
(matrix_power, multi_dot, vecdot, vander, diagonal, matrix_rank, cond, matrix_exp,
tensorinv, tensorsolve), the solvers (solve_triangular, lu_solve, lstsq, the _ex forms),
the LU and LDL factorizations (lu, lu_factor(_ex), ldl_factor(_ex), ldl_solve),
householder_product, matmul and LinAlgError."""
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
from .ops.products import matmul  # torch.linalg.matmul is torch.matmul
from .ops.linalg import (cholesky_ex, cond, inv_ex, lstsq, lu_factor, lu_factor_ex, matrix_exp,
                         matrix_rank, multi_dot, solve_ex, solve_triangular, tensorinv,
                         tensorsolve, vander, vecdot)
from .ops.linalg import householder_product, ldl_factor, ldl_factor_ex, ldl_solve
from .ops.linalg import linalg_diagonal as diagonal
from .ops.linalg import linalg_lu as lu
from .ops.linalg import linalg_lu_solve as lu_solve
from .ops.linalg import linalg_matrix_power as matrix_power

__all__ = ["norm", "vector_norm", "matrix_norm", "svdvals", "cross", "det", "slogdet", "inv",
           "solve", "svd", "qr", "eigh", "eigvalsh", "cholesky", "pinv", "LinAlgError",
           "cholesky_ex", "cond", "diagonal", "householder_product", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_power", "matrix_rank", "multi_dot", "solve_ex",
           "solve_triangular", "tensorinv", "tensorsolve", "vander", "vecdot"]

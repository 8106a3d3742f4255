"""torch's matrix decompositions with its names, arguments, return types and errors:
linalg.svd / svd (V, not Vh), linalg.qr, linalg.eigh / eigvalsh, linalg.cholesky,
linalg.pinv (a composite of svd or eigh). The table entries are in linalg_decomp.py: the first factor's entry
computes the decomposition and saves the others, which the other entries hand out.
"""
import numpy as np

from ..core.record import apply, apply_saved
from ..core.tensor_base import like
from . import functions as F
from .rules import linalg_decomp as LD
from . import shape_functions as SF
from .linalg_solve_functions import _tname, check_matrices
from .return_types import structseq

linalg_svd_result = structseq("linalg_svd", ["U", "S", "Vh"])
svd_result = structseq("svd", ["U", "S", "V"])
linalg_qr_result = structseq("linalg_qr", ["Q", "R"])
linalg_eigh_result = structseq("linalg_eigh", ["eigenvalues", "eigenvectors"])


# ---- SVD ----------------------------------------------------------------------------------
def _svd(t, full_matrices):
    s, saved = apply_saved(LD.svd_S, t, full_matrices=bool(full_matrices))
    kw = {"u": saved["u"], "s": s._data, "vh": saved["vh"], "full_matrices": bool(full_matrices)}
    return apply(LD.svd_U, t, **kw), s, apply(LD.svd_Vh, t, **kw)


def linalg_svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh; S decreasing. The singular vectors are defined up
    to sign: functions of them that do not depend on it have torch's gradients."""
    t = check_matrices("linalg.svd", A, square=False, half='"linalg_svd_cpu"')
    return linalg_svd_result(*_svd(t, full_matrices))


def svd(input, some=True, compute_uv=True):
    """torch.svd / Tensor.svd: (U, S, V), V = Vh^T; some=False gives the full U and V;
    compute_uv=False gives zero U and V (no gradient)."""
    t = F._tensor(input, "svd")
    if t.ndim < 2:
        raise RuntimeError("linalg.svd: input should have at least 2 dimensions, but has "
                           f"{t.ndim} dimensions instead")
    t = check_matrices("linalg.svd", t, square=False, half='"linalg_svd_cpu"')
    m, n = t.shape[-2], t.shape[-1]
    if not compute_uv:
        s = apply(LD.svd_S, t, full_matrices=False)
        lead = tuple(t.shape[:-2])
        return svd_result(like(t, np.zeros(lead + (m, m), t.dtype)), s,
                          like(t, np.zeros(lead + (n, n), t.dtype)))
    u, s, vh = _svd(t, not some)
    return svd_result(u, s, F.transpose(vh, -2, -1))


# ---- QR -----------------------------------------------------------------------------------
def linalg_qr(A, mode="reduced"):
    """(Q, R) with A = Q R, R upper triangular; mode 'reduced', 'complete' or 'r' (Q
    empty). Differentiable for 'reduced', and for 'complete' when rows <= columns."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    t = check_matrices("linalg.qr", A, square=False, half='"geqrf_cpu"')
    q, saved = apply_saved(LD.qr_Q, t, mode=mode)
    r = apply(LD.qr_R, t, q=q._data, r=saved["r"], mode=mode)
    if mode == "r":  # R only (Q was computed for R's entry, whose rule refuses by name)
        q = like(t, np.zeros((0,), t.dtype))
    return linalg_qr_result(q, r)


# ---- eigh ---------------------------------------------------------------------------------
def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("L", "l")


def linalg_eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors) of the symmetric matrices A, read from the
    lower (UPLO='L') or upper triangle. The gradient is torch's: A taken as symmetric."""
    lower = _uplo(UPLO)
    t = check_matrices("linalg.eigh", A, half='"linalg_eigh_cpu"')
    w, saved = apply_saved(LD.eigh_L, t, lower=lower)
    q = apply(LD.eigh_Q, t, w=w._data, q=saved["q"], lower=lower)
    return linalg_eigh_result(w, q)


def eigvalsh(A, UPLO="L"):
    lower = _uplo(UPLO)
    t = check_matrices("linalg.eigh", A, half='"linalg_eigh_cpu"')
    return apply(LD.eigh_L, t, lower=lower)


# ---- Cholesky -----------------------------------------------------------------------------
def cholesky(A, *, upper=False):
    """L (lower, A = L L^T) or, with upper=True, U = L^T; LinAlgError with torch's words
    for a matrix that is not positive definite."""
    t = check_matrices("linalg.cholesky", A, half='"cholesky_cpu"')
    return apply(LD.cholesky, t, upper=bool(upper))


# ---- pseudo-inverse ---------------------------------------------------------------------
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """torch.linalg.pinv: V diag(1/S) U^T over the singular values above
    max(atol, rtol * S.max()) (rtol defaults to eps * max(m, n), or to 0 when only a
    positive atol is given). A composite of the svd entries: for a full-rank A with
    distinct singular values its gradient is torch's (pinv_backward); where the tolerance
    drops singular values torch's differs (its formula assumes the full pseudo-inverse)."""
    t = F._tensor(A, "linalg.pinv")
    if t.ndim < 2 or t.dtype.kind != "f" or t.dtype == np.float16:
        raise RuntimeError(f"linalg.pinv({_tname(t.dtype)}{{{list(t.shape)}}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")
    m, n = t.shape[-2], t.shape[-1]
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else np.finfo(t.dtype).eps * max(m, n)
    # hermitian=True: torch computes with eigh; for a symmetric A the SVD gives the same
    # pinv, and its gradient is torch's (pinv_backward, the general-matrix formula)
    left, s, right = _svd(t, False)
    tol = F.amax(s.detach(), -1, keepdim=True) * float(rtol) if s.shape[-1] else s.detach()
    if atol is not None:
        tol = F.clamp_min(tol, float(atol))
    keep = s > tol
    # 1/s only where kept: the masked-out branch never divides by 0 (no 0 * inf = nan)
    inv_s = F.where(keep, 1.0 / F.where(keep, s, 1.0), 0.0)
    # pinv = Vh^T diag(1/s) U^T
    return F.matmul(F.transpose(right, -2, -1) * SF.unsqueeze(inv_s, -2),
                    F.transpose(left, -2, -1))

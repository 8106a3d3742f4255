"""Table entries for the LU factorization and the matrix exponential.

lu_factor(A): the compact LU of A = P L U with partial pivoting (LAPACK getrf, as torch:
  L unit lower (m, k) below the diagonal, U upper (k, n) on and above it, k = min(m, n));
  the pivots (1-based int32, torch's) and getrf's info are saved, not differentiated.
  Rule (torch's linalg_lu_backward, with gL = tril(g, -1), gU = triu(g)), square A:
    dA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T
  wide A = P L [U1 U2]: U2 = L^-1 P^T A2, so dA2 = P L^-T gU2 and gL -= L^-T gU2 U2^T;
  tall P^T A = [L1; L2] U: L2 = A2 U^-1, so dA2 = P gL2 U^-T and gU -= L2^T gL2 U^-T;
  then the square rule on the leading k x k blocks. Forward mode (torch's linalg_lu_jvp):
    X = L1^-1 (P^T dA)_1 U1^-1, dL1 = L1 tril(X, -1), dU1 = triu(X) U1, and the blocks
    dU2 = L^-1 ((P^T dA)_2 - dL U2) (wide) or dL2 = ((P^T dA)_2 - L2 dU) U^-1 (tall).
  The triangular systems are solved by the solve_triangular entry (differentiable again).
matrix_exp(A): scipy.linalg.expm; rule the Frechet derivative at A^T applied to g,
  read off the upper-right block of expm([[A^T, g], [0, A^T]]) (Mathias 1996): the rule
  is the entry itself, so every order is covered; forward mode the same block with
  [[A, dA], [0, A]].
"""
import numpy as np

from ...core.record import apply
from ._within_rule import within_rule
from .linalg_decomp import _narrow
from .linalg_solve import solve_triangular
from ..registry import defop
from .shape import cat, tril, triu


def _mT(xp, a):
    return xp.swapaxes(a, -1, -2)


# ---- LU -------------------------------------------------------------------------------
def _lu_forward(x):
    """(LU, {"pivots": 1-based int32 (..., k), "info": int32 (...)}) by LAPACK getrf."""
    m, n = x.shape[-2:]
    k = min(m, n)
    lead = x.shape[:-2]
    lu = np.array(x, copy=True)
    pivots = np.zeros(lead + (k,), np.int32)
    info = np.zeros(lead, np.int32)
    if k and lu.size:
        from scipy.linalg import get_lapack_funcs
        getrf, = get_lapack_funcs(("getrf",), (lu,))
        for i in np.ndindex(*lead):
            f, p, inf = getrf(lu[i])
            lu[i], pivots[i], info[i] = f, p[:k] + 1, max(int(inf), 0)
    return lu, {"pivots": pivots, "info": info}


def permutation(pivots, m, dtype):
    """P of A = P L U (..., m, m) from LAPACK's 1-based row swaps: row i was swapped with
    row pivots[i] at step i, so P^T A = A[perm] and P = I[:, perm]."""
    lead = pivots.shape[:-1]
    out = np.zeros(lead + (m, m), dtype)
    for i in np.ndindex(*lead):
        perm = np.arange(m)
        for j, p in enumerate(pivots[i] - 1):
            perm[[j, p]] = perm[[p, j]]
        out[i + (perm, np.arange(m))] = 1
    return out


def _tri(xp, a, b, upper, unit=False):
    """A^-1 B for a triangular A (the solve_triangular entry: recorded under create_graph)."""
    return within_rule(xp, solve_triangular, a, b, upper=upper, unitriangular=unit)


def _solve_right(xp, u, b):
    """B U^-T for an upper triangular U: (U^-1 B^T)^T."""
    return _mT(xp, _tri(xp, u, _mT(xp, b), True))


def _lu_vjp(xp, g, ans, x, pivots=None, info=None):
    m, n = x.shape[-2:]
    k = min(m, n)
    dt = _raw(x).dtype
    lu = ans if xp is np else apply(lu_factor, x)  # recorded: second order through L, U
    eye = np.eye(m, k, dtype=dt)
    L = _narrow(xp, within_rule(xp, tril, lu, k=-1), lu.ndim - 1, 0, k) + eye
    U = _narrow(xp, within_rule(xp, triu, lu, k=0), lu.ndim - 2, 0, k)
    gL = _narrow(xp, within_rule(xp, tril, g, k=-1), g.ndim - 1, 0, k)
    gU = _narrow(xp, within_rule(xp, triu, g, k=0), g.ndim - 2, 0, k)
    L1, U1 = _narrow(xp, L, L.ndim - 2, 0, k), _narrow(xp, U, U.ndim - 1, 0, k)
    rest = None
    if m < n:
        U2, gU2 = _narrow(xp, U, U.ndim - 1, k, n - k), _narrow(xp, gU, gU.ndim - 1, k, n - k)
        rest = _tri(xp, _mT(xp, L1), gU2, True, True)  # L^-T gU2
        gL = gL - xp.matmul(rest, _mT(xp, U2))
        gU = _narrow(xp, gU, gU.ndim - 1, 0, k)
    elif m > n:
        L2, gL2 = _narrow(xp, L, L.ndim - 2, k, m - k), _narrow(xp, gL, gL.ndim - 2, k, m - k)
        rest = _solve_right(xp, U1, gL2)  # gL2 U^-T
        gU = gU - xp.matmul(_mT(xp, L2), rest)
        gL = _narrow(xp, gL, gL.ndim - 2, 0, k)
    phi = (within_rule(xp, tril, xp.matmul(_mT(xp, L1), gL), k=-1)
           + within_rule(xp, triu, xp.matmul(gU, _mT(xp, U1)), k=0))
    core = _solve_right(xp, U1, _tri(xp, _mT(xp, L1), phi, True, True))
    if rest is not None:
        core = within_rule(xp, cat, core, rest, axis=core.ndim - (1 if m < n else 2))
    return xp.matmul(permutation(_raw(pivots), m, dt), core)


def _lu_jvp(xp, t, ans, x, pivots=None, info=None):
    """dLU = dL + dU: on the leading k x k blocks X = L1^-1 (P^T dA)_1 U1^-1, dL1 = L1
    tril(X, -1), dU1 = triu(X) U1; the rest of a wide U: dU2 = L^-1 ((P^T dA)_2 - dL U2);
    of a tall L: dL2 = ((P^T dA)_2 - L2 dU) U^-1."""
    m, n = x.shape[-2:]
    k = min(m, n)
    dt = _raw(x).dtype
    P = permutation(_raw(pivots), m, dt)
    dA = xp.matmul(np.swapaxes(P, -1, -2), t[0])  # P^T dA
    L = _narrow(xp, within_rule(xp, tril, ans, k=-1), ans.ndim - 1, 0, k) + np.eye(m, k, dtype=dt)
    U = _narrow(xp, within_rule(xp, triu, ans, k=0), ans.ndim - 2, 0, k)
    L1, U1 = _narrow(xp, L, L.ndim - 2, 0, k), _narrow(xp, U, U.ndim - 1, 0, k)
    dA1 = _narrow(xp, _narrow(xp, dA, dA.ndim - 2, 0, k), dA.ndim - 1, 0, k)
    # X = L1^-1 dA1 U1^-1 = (U1^-T (L1^-1 dA1)^T)^T
    X = _mT(xp, _tri(xp, _mT(xp, U1), _mT(xp, _tri(xp, L1, dA1, False, True)), False))
    dL1 = xp.matmul(L1, within_rule(xp, tril, X, k=-1))
    dU1 = xp.matmul(within_rule(xp, triu, X, k=0), U1)
    if m < n:  # dU2 = L^-1 (dA2 - dL U2)
        U2 = _narrow(xp, U, U.ndim - 1, k, n - k)
        dA2 = _narrow(xp, dA, dA.ndim - 1, k, n - k)
        dU2 = _tri(xp, L1, dA2 - xp.matmul(dL1, U2), False, True)
        return within_rule(xp, cat, dL1 + dU1, dU2, axis=dU1.ndim - 1)
    if m > n:  # dL2 = (dA2 - L2 dU) U^-1
        L2 = _narrow(xp, L, L.ndim - 2, k, m - k)
        dA2 = _narrow(xp, dA, dA.ndim - 2, k, m - k)
        dL2 = _mT(xp, _tri(xp, _mT(xp, U1), _mT(xp, dA2 - xp.matmul(L2, dU1)), False))
        return within_rule(xp, cat, dL1 + dU1, dL2, axis=dL1.ndim - 2)
    return dL1 + dU1


def _raw(a):
    return a.detach().numpy() if hasattr(a, "detach") else a


lu_factor = defop("lu_factor", _lu_forward, extra=True, vjp=[_lu_vjp], jvp=_lu_jvp,
                  reads=["ans x"],
                  text="dA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T (square A)",
                  hint="LU's derivative divides by U's diagonal: infinite for a singular A",
                  node="LinalgLuFactorExBackward0")


# ---- matrix exponential ---------------------------------------------------------------
def _expm_forward(x):
    if x.size == 0:
        return x.copy()
    from scipy.linalg import expm
    if x.dtype != np.float64:  # in float64, then rounded: closer to torch's float32 than
        return expm(x.astype(np.float64)).astype(x.dtype)  # scipy's float32 Pade
    return expm(x)


def _expm_vjp(xp, g, ans, x):
    n = x.shape[-1]
    at = _mT(xp, x)
    zero = np.zeros(x.shape, dtype=_raw(x).dtype)
    top = within_rule(xp, cat, at, g, axis=x.ndim - 1)
    bottom = within_rule(xp, cat, zero, at, axis=x.ndim - 1)
    big = within_rule(xp, matrix_exp, within_rule(xp, cat, top, bottom, axis=x.ndim - 2))
    upper = _narrow(xp, big, big.ndim - 2, 0, n)
    return _narrow(xp, upper, upper.ndim - 1, n, n)


def _expm_jvp(xp, t, ans, x):
    """The Frechet derivative at A in the direction dA: expm([[A, dA], [0, A]])[:n, n:]."""
    n = x.shape[-1]
    zero = np.zeros(x.shape, dtype=_raw(x).dtype)
    top = within_rule(xp, cat, x, t[0], axis=x.ndim - 1)
    bottom = within_rule(xp, cat, zero, x, axis=x.ndim - 1)
    big = within_rule(xp, matrix_exp, within_rule(xp, cat, top, bottom, axis=x.ndim - 2))
    upper = _narrow(xp, big, big.ndim - 2, 0, n)
    return _narrow(xp, upper, upper.ndim - 1, n, n)


matrix_exp = defop("matrix_exp", _expm_forward, vjp=[_expm_vjp], jvp=_expm_jvp, reads=["x"],
                   text="dA = expm([[A^T, g], [0, A^T]])[:n, n:]  (the Frechet derivative)",
                   hint="the matrix exponential is smooth: its derivative is finite wherever "
                        "expm(A) is",
                   node="LinalgMatrixExpBackward0")

"""Table entries for matrix decompositions: SVD, symmetric eigendecomposition, QR and
Cholesky, with PyTorch's backward formulas (FunctionsManual.cpp: svd_backward,
linalg_eig_backward, linalg_qr_backward, cholesky_backward).

A decomposition has several outputs; each output is its own single-output entry, so
every output keeps the ordinary Node machinery (one gradient, forward mode, `ans` as
a tensor under create_graph). The first entry computes the factorization and saves
the other factors (`extra`); the others take those arrays as arguments and return
one of them (tg.compile sees them as saved slots). The formulas are linear in the
incoming gradients (gU, gS, gVh), so the per-output rules summed by the engine are
torch's joint formula.

Under create_graph a rule needs the factors as functions of A, not constants:
`_factors` re-applies the entries to A (recorded), so second derivatives go through
them, as torch's do through its saved outputs.

svd(A) = U diag(S) Vh, k = min(m, n):
  gS:  U diag(gS) Vh
  gU:  U [skew(U^T gU) S / E] Vh  (+ (I - U U^T) gU S^-1 Vh when m > n)
  gVh: U [S skew(Vh gVh^T) / E] Vh  (+ U S^-1 gVh (I - Vh^T Vh) when m < n)
  with skew(X) = X - X^T, E_ij = S_j^2 - S_i^2 (1 on the diagonal). With
  full_matrices the columns beyond k are ignored, as torch does.
eigh(A) = Q diag(L) Q^T:  dA = Q (skew(Q^T gQ)/2 / E + diag(gL)) Q^T, E_ij = L_j - L_i
qr(A) = QR (m >= n):  M = R gR^T - gQ^T Q; dA = (gQ + Q copyltu(M)) R^-T
cholesky(A) = L L^T:  P = tril(L^T gL) with a halved diagonal symmetrised;
  dA = L^-T P L^-1
"""
import numpy as np

from ...core.record import apply
from ._within_rule import within_rule
from .linalg_solve import LinAlgError, solve
from ..registry import defop
from .shape import cat, narrow, tril, triu


def _mT(xp, a):
    return xp.swapaxes(a, -1, -2)


def _raw(a):
    return a.detach().numpy() if hasattr(a, "detach") else a


def _eye(n, like):
    return np.eye(n, dtype=_raw(like).dtype)


def _narrow_last(xp, a, k):
    """The first k columns (U of a full SVD: the rest is an arbitrary basis)."""
    return a if a.shape[-1] == k else _narrow(xp, a, a.ndim - 1, 0, k)


def _narrow_rows(xp, a, k):
    return a if a.shape[-2] == k else _narrow(xp, a, a.ndim - 2, 0, k)


def _narrow(xp, a, axis, start, length):
    return within_rule(xp, narrow, a, axis=axis, start=start, length=length)


# ---- SVD ------------------------------------------------------------------------------
def _svd_forward(x, full_matrices=False):
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return s, {"u": u, "vh": vh}


# The factor entries' forward hands out what the first entry computed (a keyword), so
# strict mode's finite differences of one such entry alone are 0: it skips them. Their
# rules are checked where the whole decomposition is differentiated: the op database's
# gradcheck of torch.linalg.svd/eigh/qr (tests/opdb/linalg.py), and strict mode on the
# first entry of each.
_FACTOR_STRICT = ("the forward hands out a factor the decomposition's first entry "
                  "computed: finite differences of this entry alone are 0")


def _factor(name):
    """The forward of the entries that hand out a factor computed by the first one."""
    def forward(x, **kw):
        return kw[name].copy()  # a copy: changing U in place must not change S's saved u
    return forward


def _svd_factors(xp, x, u, s, vh, full_matrices):
    """U, S, Vh narrowed to k = min(m, n): arrays, or recorded functions of x."""
    k = s.shape[-1]
    if xp is not np:
        kw = {"u": u, "s": _raw(s), "vh": vh, "full_matrices": full_matrices}
        u = apply(svd_U, x, **kw)
        s = apply(svd_S, x, full_matrices=full_matrices)
        vh = apply(svd_Vh, x, **kw)
    return _narrow_last(xp, u, k), s, _narrow_rows(xp, vh, k)


def _svd_E(xp, s):
    s2 = s * s
    e = xp.expand_dims(s2, -2) - xp.expand_dims(s2, -1)
    return e + _eye(s.shape[-1], s)  # the diagonal is 0: 1 there (0 / 1 later)


def _svd_S_vjp(xp, g, ans, x, full_matrices=False, u=None, vh=None):
    U, _, Vh = _svd_factors(xp, x, u, ans, vh, full_matrices)
    return xp.matmul(U * xp.expand_dims(g, -2), Vh)


def _svd_U_vjp(xp, g, ans, x, u, s, vh, full_matrices=False):
    U, S, Vh = _svd_factors(xp, x, u, s, vh, full_matrices)
    k = s.shape[-1]
    g = _narrow_last(xp, g, k)
    UtgU = xp.matmul(_mT(xp, U), g)
    inner = (UtgU - _mT(xp, UtgU)) * (xp.expand_dims(S, -2) / _svd_E(xp, S))
    out = xp.matmul(U, inner)
    if U.shape[-2] > Vh.shape[-1]:  # m > n: the part of gU outside U's columns
        gUS = g / xp.expand_dims(S, -2)
        out = out + gUS - xp.matmul(U, xp.matmul(_mT(xp, U), gUS))
    return xp.matmul(out, Vh)


def _svd_Vh_vjp(xp, g, ans, x, u, s, vh, full_matrices=False):
    U, S, Vh = _svd_factors(xp, x, u, s, vh, full_matrices)
    k = s.shape[-1]
    g = _narrow_rows(xp, g, k)
    VhgV = xp.matmul(Vh, _mT(xp, g))
    inner = xp.expand_dims(S, -1) * ((VhgV - _mT(xp, VhgV)) / _svd_E(xp, S))
    out = xp.matmul(inner, Vh)
    if U.shape[-2] < Vh.shape[-1]:  # m < n: the part of gVh outside Vh's rows
        SgVh = g / xp.expand_dims(S, -1)
        out = out + SgVh - xp.matmul(xp.matmul(SgVh, _mT(xp, Vh)), Vh)
    return xp.matmul(U, out)


_SVD_HINT = ("the singular vectors' derivative divides by S_j^2 - S_i^2: infinite for "
             "repeated singular values (and by S for non-square A: zero ones)")
svd_S = defop("svd_S", _svd_forward, extra=True, vjp=[_svd_S_vjp], reads=["x"],
              text="dA = U @ diag(g) @ Vh",
              hint="the singular values' derivative U V^T is finite")
svd_U = defop("svd_U", _factor("u"), vjp=[_svd_U_vjp], reads=["x"],
               strict=_FACTOR_STRICT,
              text="dA = U (skew(U^T g) S / E) Vh (+ (I - U U^T) g S^-1 Vh if m > n)",
              hint=_SVD_HINT)
svd_Vh = defop("svd_Vh", _factor("vh"), vjp=[_svd_Vh_vjp], reads=["x"],
               strict=_FACTOR_STRICT,
               text="dA = U (S skew(Vh g^T) / E) Vh (+ U S^-1 g (I - Vh^T Vh) if m < n)",
               hint=_SVD_HINT)


# ---- eigh -----------------------------------------------------------------------------
def _eigh_forward(x, lower=True):
    w, q = np.linalg.eigh(x, UPLO="L" if lower else "U")
    return w, {"q": q}


def _eigh_factors(xp, x, w, q, lower):
    if xp is np:
        return w, q
    return (apply(eigh_L, x, lower=lower),
            apply(eigh_Q, x, w=_raw(w), q=q, lower=lower))


def _eigh_rule(xp, gL, gQ, L, Q):
    """torch's linalg_eig_backward, hermitian case."""
    if gQ is None:
        return xp.matmul(Q * xp.expand_dims(gL, -2), _mT(xp, Q))
    QtgQ = xp.matmul(_mT(xp, Q), gQ)
    e = xp.expand_dims(L, -2) - xp.expand_dims(L, -1)
    e = e + _eye(L.shape[-1], L)
    inner = 0.5 * (QtgQ - _mT(xp, QtgQ)) / e
    return xp.matmul(Q, xp.matmul(inner, _mT(xp, Q)))


def _eigh_L_vjp(xp, g, ans, x, lower=True, q=None):
    L, Q = _eigh_factors(xp, x, ans, q, lower)
    return _eigh_rule(xp, g, None, L, Q)


def _eigh_Q_vjp(xp, g, ans, x, w, q, lower=True):
    L, Q = _eigh_factors(xp, x, w, q, lower)
    return _eigh_rule(xp, None, g, L, Q)


# eigh reads one triangle of A; its rule (torch's) is the gradient as a symmetric matrix:
# finite differences in the unread triangle are 0 where the rule is not (strict skips it)
eigh_L = defop("eigh_L", _eigh_forward, extra=True, vjp=[_eigh_L_vjp], reads=["x"],
               strict="eigh reads one triangle; its rule is the symmetric gradient",
               text="dA = Q @ diag(g) @ Q^T",
               hint="the eigenvalues' derivative Q Q^T is finite")
eigh_Q = defop("eigh_Q", _factor("q"), vjp=[_eigh_Q_vjp], reads=["x"],
               strict=_FACTOR_STRICT,
               text="dA = Q (skew(Q^T g)/2 / E) Q^T, E_ij = L_j - L_i",
               hint=("the eigenvectors' derivative divides by L_j - L_i: infinite for "
                     "repeated eigenvalues"))


# ---- QR -------------------------------------------------------------------------------
def _qr_forward(x, mode="reduced"):
    # mode 'r' computes Q too: R's rule refuses by name, as torch's does
    q, r = np.linalg.qr(x, mode="reduced" if mode == "r" else mode)
    return q, {"r": r}


def _qr_factors(xp, x, q, r, mode):
    if xp is np:
        return q, r
    return apply(qr_Q, x, mode=mode), apply(qr_R, x, q=_raw(q), r=r, mode=mode)


def _solve_right(xp, a, b):
    """X with X A = B."""
    return _mT(xp, within_rule(xp, solve, _mT(xp, a), _mT(xp, b)))


def _qr_rule(xp, gQ, gR, Q, R):
    """torch's linalg_qr_backward with one of gQ, gR given (it is linear in them)."""
    m, n = Q.shape[-2], R.shape[-1]
    M = xp.matmul(gR, _mT(xp, R)) if gR is not None else -xp.matmul(_mT(xp, Q), gQ)
    eye = _eye(M.shape[-1], M)
    if m >= n:
        # triu(M) + triu(M)^T with M's own diagonal: a symmetric matrix
        up = within_rule(xp, triu, M, k=0)
        sym = up + _mT(xp, up) - M * eye
        out = xp.matmul(Q, sym)
        if gQ is not None:
            out = out + gQ
        return _solve_right(xp, _mT(xp, R), out)
    # wide A: the strictly lower part of -M + M^T, through R's leading square block
    skew = within_rule(xp, tril, _mT(xp, M) - M, k=0)
    out = _solve_right(xp, _mT(xp, _narrow(xp, R, R.ndim - 1, 0, m)), xp.matmul(Q, skew))
    pad = np.zeros(out.shape[:-1] + (n - m,), dtype=_raw(out).dtype)
    out = within_rule(xp, cat, out, pad, axis=out.ndim - 1)
    return out + xp.matmul(Q, gR) if gR is not None else out


def _qr_check(mode, q, r):
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
            "through linalg.qr.")
    if mode == "complete" and q.shape[-2] > r.shape[-1]:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")


def _qr_Q_vjp(xp, g, ans, x, mode="reduced", r=None):
    _qr_check(mode, ans, r)
    Q, R = _qr_factors(xp, x, ans, r, mode)
    return _qr_rule(xp, g, None, Q, R)


def _qr_R_vjp(xp, g, ans, x, q, r, mode="reduced"):
    _qr_check(mode, q, r)
    Q, R = _qr_factors(xp, x, q, r, mode)
    return _qr_rule(xp, None, g, Q, R)


qr_Q = defop("qr_Q", _qr_forward, extra=True, vjp=[_qr_Q_vjp], reads=["x"],
             text="dA = (g + Q copyltu(-(-g^T Q))) R^-T",
             hint="QR's derivative divides by R's diagonal: infinite for a rank-deficient A")
qr_R = defop("qr_R", _factor("r"), vjp=[_qr_R_vjp], reads=["x"],
               strict=_FACTOR_STRICT,
             text="dA = Q copyltu(-(R g^T)) R^-T",
             hint="QR's derivative divides by R's diagonal: infinite for a rank-deficient A")


# ---- Cholesky -------------------------------------------------------------------------
def _cholesky_vjp(xp, g, ans, x, upper=False):
    L = _mT(xp, ans) if upper else ans
    gL = _mT(xp, g) if upper else g
    P = within_rule(xp, tril, xp.matmul(_mT(xp, L), gL), k=0)
    P = 0.5 * (P + _mT(xp, within_rule(xp, tril, P, k=-1)))
    P = within_rule(xp, solve, _mT(xp, L), P)  # L^-T P
    return _solve_right(xp, L, P)  # ... L^-1


def _cholesky_forward(x, upper=False):
    try:
        out = np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        raise _not_positive_definite(x) from None
    return _raw_mT(out) if upper else out


def _not_positive_definite(x):
    """torch's LinAlgError: the first matrix of the batch, and the order of its first
    leading minor that is not positive definite (LAPACK potrf's info)."""
    batch = x.reshape((-1,) + x.shape[-2:])
    for b, m in enumerate(batch):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                where = f"(Batch element {b}): " if x.ndim > 2 else ""
                return LinAlgError(
                    f"linalg.cholesky: {where}The factorization could not be completed "
                    "because the input is not positive-definite (the leading minor of order "
                    f"{k} is not positive-definite).")
    return LinAlgError("linalg.cholesky: the input is not positive-definite.")


def _raw_mT(a):
    return np.swapaxes(a, -1, -2).copy()


cholesky = defop("cholesky", _cholesky_forward, vjp=[_cholesky_vjp], reads=["ans"],
                 strict="cholesky reads one triangle; its rule is the symmetric gradient",
                 text="dA = L^-T sym(tril(L^T g)) L^-1",
                 hint="Cholesky's derivative divides by L's diagonal: infinite near a "
                      "singular A")

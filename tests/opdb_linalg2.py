"""Op-database entries for the cross product, determinants, inverses, solves and
decompositions (ops/rules/linalg_solve.py, ops/rules/linalg_decomp.py): values and gradients
against torch (float64, float32), gradcheck, second order (tests/test_opdb.py), forward
mode (tests/test_forward_mode.py).

The matrices are drawn where the functions are smooth, as torch's own OpInfos draw
them: diagonally dominant (well conditioned, either sign of det) for det/inv/solve;
distinct singular values and eigenvalues for svd/eigh; symmetric positive definite
(A A^T + I, formed inside the call) for cholesky. Singular vectors and eigenvectors
are defined up to sign, and LAPACK's choice may differ between NumPy's and torch's
builds, so those entries compare gauge-invariant functions of them (S; U diag(w) U^T;
U diag(w) Vh; U * U), as torch's tests do.
"""
import numpy as np

from _opinfo import Domain, Sample, op

WIDE_F32 = (2e-4, 2e-5)  # factorizations in float32: LAPACK's rounding differs


def _dominant(rng, shape):
    """Well-conditioned square matrices: small entries plus +-1.5 on the diagonal."""
    n = shape[-1]
    d = rng.choice([-1.5, 1.5], shape[:-1])
    return rng.uniform(-0.5, 0.5, shape) + d[..., None] * np.eye(n)


def _distinct_sv(rng, shape):
    """Matrices with singular values 1, 1.7, 2.4, ... in random orthogonal frames."""
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    out = np.empty(shape)
    for idx in np.ndindex(*shape[:-2]):
        u, _ = np.linalg.qr(rng.standard_normal((m, k)))
        v, _ = np.linalg.qr(rng.standard_normal((n, k)))
        s = 1.0 + 0.7 * rng.permutation(k)
        out[idx] = (u * s) @ v.T
    return out


def _matrices(kind, shapes, **kw):
    def gen(rng, info):
        return [Sample(tuple(kind(rng, s) for s in shape), dict(kw)) for shape in shapes]
    return gen


SQUARE = [((3, 3),), ((1, 1),), ((2, 4, 4),), ((2, 1, 2, 2),)]
DOMINANT = Domain("dominant", -3.0, 3.0, _dominant)


def _w(lib, k, like):
    return lib.arange(1, k + 1, dtype=like.dtype)


def _svd_invariants(lib, a, **kw):
    U, S, Vh = lib.linalg.svd(a, **kw)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    w = _w(lib, k, a)
    return S, (U * w) @ U.mT, (U * w) @ Vh, Vh.mT @ (Vh * w[:, None]), U * U


def _svd_old(lib, a, **kw):
    U, S, V = lib.svd(a, **kw)
    k = S.shape[-1]
    U, V = U[..., :k], V[..., :k]
    return S, (U * _w(lib, k, a)) @ V.mT


def _eigh_invariants(lib, a, **kw):
    L, Q = lib.linalg.eigh(a + a.mT, **kw)
    w = _w(lib, L.shape[-1], a)
    return L, (Q * w) @ Q.mT, Q * Q


def _spd(lib, a):
    return a @ a.mT + 0.5 * lib.eye(a.shape[-1], dtype=a.dtype)


ENTRIES = [
    # ---- cross ----
    op("cross", lambda lib, x, y, **kw: lib.linalg.cross(x, y, **kw),
       lambda rng, info: [Sample((rng.uniform(-2, 2, a), rng.uniform(-2, 2, b)), kw)
                          for a, b, kw in [((3,), (3,), {}), ((4, 3), (4, 3), {}),
                                           ((4, 3), (1, 3), {}), ((2, 1, 3), (1, 5, 3), {}),
                                           ((3, 4), (3, 4), {"dim": 0}),
                                           ((2, 3, 1), (2, 3, 4), {"dim": -2})]]),
    op("cross", lambda lib, x, y: (lib.cross(x, y, dim=1), x.cross(y, dim=-1)),
       _matrices(lambda rng, s: rng.uniform(-2, 2, s), [((2, 3), (2, 3))]),
       variant="torch.cross"),
    # ---- det, slogdet, logdet ----
    op("det", lambda lib, a: lib.linalg.det(a), _matrices(_dominant, SQUARE)),
    op("det", lambda lib, a: (lib.det(a), a.det()), _matrices(_dominant, [((3, 3),)]),
       variant="torch.det"),
    op("logabsdet", lambda lib, a: (lambda r: (r.logabsdet, r.sign * r.logabsdet))(
        lib.linalg.slogdet(a)), _matrices(_dominant, SQUARE)),
    op("logabsdet", lambda lib, a: (lib.slogdet(a)[1], a.slogdet().logabsdet,
                                    lib.logdet(a @ a.mT)),
       _matrices(_dominant, [((3, 3),), ((2, 2, 2),)]), variant="slogdet logdet"),
    # ---- inverse, solve ----
    op("inv", lambda lib, a: lib.linalg.inv(a), _matrices(_dominant, SQUARE),
       f32_tol=WIDE_F32),
    op("inv", lambda lib, a: (lib.inverse(a), a.inverse()), _matrices(_dominant, [((3, 3),)]),
       variant="inverse", f32_tol=WIDE_F32),
    op("solve", lambda lib, a, b, **kw: lib.linalg.solve(a, b, **kw),
       lambda rng, info: [Sample((_dominant(rng, a), rng.uniform(-2, 2, b)), kw)
                          for a, b, kw in [((3, 3), (3,), {}), ((3, 3), (3, 2), {}),
                                           ((2, 3, 3), (2, 3), {}), ((2, 3, 3), (3, 1), {}),
                                           ((2, 1, 3, 3), (4, 3, 2), {}),
                                           ((3, 3), (2, 3), {"left": False}),
                                           ((2, 3, 3), (1, 4, 3), {"left": False}),
                                           ((1, 1), (1, 1), {})]],
       f32_tol=WIDE_F32),
    # ---- svd ----
    op("svd_S", _svd_invariants, _matrices(_distinct_sv, [((4, 3),), ((3, 4),), ((3, 3),),
                                                          ((2, 3, 2),), ((1, 1),)],
                                           full_matrices=False),
       covers=("svd_U", "svd_Vh"), f32_tol=WIDE_F32),
    op("svd_S", _svd_invariants, _matrices(_distinct_sv, [((4, 3),), ((2, 2, 4),)]),
       variant="full_matrices", f32_tol=WIDE_F32),
    op("svd_S", _svd_old, _matrices(_distinct_sv, [((4, 3),), ((2, 3, 4),)]),
       variant="torch.svd", f32_tol=WIDE_F32),
    op("svd_S", lambda lib, a: _svd_old(lib, a, some=False),
       _matrices(_distinct_sv, [((4, 3),)]), variant="torch.svd some=False",
       f32_tol=WIDE_F32),
    op("svd_S", lambda lib, a: (lib.linalg.pinv(a), lib.linalg.pinv(a @ a.mT, hermitian=True)),
       _matrices(_distinct_sv, [((4, 3),), ((3, 4),), ((2, 3, 3),)]), variant="pinv",
       f32_tol=WIDE_F32),
    # ---- eigh ----
    op("eigh_L", _eigh_invariants, _matrices(_dominant, [((3, 3),), ((2, 4, 4),), ((1, 1),)]),
       covers=("eigh_Q",), f32_tol=WIDE_F32),
    op("eigh_L", lambda lib, a: _eigh_invariants(lib, a, UPLO="U"),
       _matrices(_dominant, [((3, 3),)]), variant="UPLO=U", f32_tol=WIDE_F32),
    op("eigh_L", lambda lib, a: lib.linalg.eigvalsh(a + a.mT),
       _matrices(_dominant, [((3, 3),), ((2, 2, 2),)]), variant="eigvalsh",
       f32_tol=WIDE_F32),
    # ---- qr ----
    op("qr_Q", lambda lib, a, **kw: tuple(lib.linalg.qr(a, **kw)),
       _matrices(_distinct_sv, [((4, 3),), ((3, 3),), ((3, 4),), ((2, 3, 2),)]),
       covers=("qr_R",), f32_tol=WIDE_F32),
    op("qr_Q", lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")),
       _matrices(_distinct_sv, [((3, 4),), ((2, 3, 3),)]), variant="complete",
       f32_tol=WIDE_F32),
    # ---- cholesky ----
    op("cholesky", lambda lib, a, **kw: lib.linalg.cholesky(_spd(lib, a), **kw),
       _matrices(_dominant, [((3, 3),), ((2, 4, 4),), ((1, 1),)]), f32_tol=WIDE_F32),
    op("cholesky", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True),
       _matrices(_dominant, [((3, 3),)]), variant="upper", f32_tol=WIDE_F32),
]

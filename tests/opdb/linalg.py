"""Op-database entries: torch.linalg: cross, det, slogdet, inv, solve, svd, eigh, qr, cholesky,
vector_norm, svdvals, renorm, lu_factor (lu, lu_unpack, lu_solve), matrix_exp, solve_triangular
(triangular_solve), cholesky_solve.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import Domain, SEPARATED, Sample, op, unary_samples
from opdb.samples import _matrix_samples, _shapes


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


# renorm: rows of norms on both sides of maxnorm = 1.5
ROWS = Domain("rows", -3.0, 3.0, lambda rng, s: rng.uniform(-1.5, 1.5, s))


# ---- vector norms -----------------------------------------------------------------------
_NORM_SPECS = [(((5,),), {}), (((2, 3, 4),), {}), (((),), {}),
               (((3, 4),), {"dim": 1}), (((3, 4),), {"dim": 0, "keepdim": True}),
               (((2, 3, 4),), {"dim": (0, 2)}), (((2, 3, 4),), {"dim": (-1, 1), "keepdim": True})]


def _norm_samples(ords):
    def gen(rng, info):
        out = []
        for o in ords:
            for (shapes, kw) in _NORM_SPECS:
                out.append(Sample((SEPARATED.sample(rng, shapes[0]),), {"ord": o, **kw}))
        return out
    return gen


def _norm_zero_samples(rng, info):
    z = np.zeros((2, 3))
    z[1] = [0.5, -1.0, 2.0]
    return [Sample((z,), {"ord": o, "dim": 1}, gradcheck=False, note="zero row")
            for o in (2, 1, 3.0, 1.5, np.inf, 0.5)] + \
        [Sample((np.zeros(3),), {"ord": 2}, gradcheck=False, note="zero vector")]


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
        lib.linalg.slogdet(a)), _matrices(_dominant, SQUARE),
       covers=("slogdet_sign",)),
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
    op("renorm", lambda lib, x, **kw: x.renorm(**kw), _shapes(
        (((3, 4),), dict(p=2, dim=0, maxnorm=1.5)), (((3, 4),), dict(p=1, dim=1, maxnorm=1.5)),
        (((2, 3, 2),), dict(p=3, dim=-1, maxnorm=1.5)), (((1, 4),), dict(p=2, dim=0, maxnorm=0.5))),
       domain=ROWS),
    # ---- norms ----
    op("vector_norm", lambda lib, x, **kw: lib.linalg.vector_norm(x, **kw),
       _norm_samples([2, 1, 3, 1.5, 0.5, np.inf, -np.inf, 0]), hyp=None),
    op("vector_norm", lambda lib, x, **kw: lib.linalg.vector_norm(x, **kw), _norm_zero_samples,
       variant="zeros", gradgrad=False),
    op("vector_norm", lambda lib, x: (lib.norm(x), x.norm(), x.norm(1), x.norm(p=3, dim=-1),
                                      lib.norm(x, dim=0, keepdim=True),
                                      x.norm("fro", dim=(0, 1)), lib.linalg.norm(x),
                                      lib.linalg.norm(x, dim=1), lib.linalg.norm(x, 3, dim=1),
                                      lib.linalg.norm(x, "fro"),
                                      lib.linalg.matrix_norm(x),
                                      lib.linalg.norm(x.reshape(-1), np.inf)),
       unary_samples([(3, 4), (2, 2)]), domain=SEPARATED, variant="norm_functions"),
    op("svdvals", lambda lib, x: lib.linalg.svdvals(x),
       lambda rng, info: [Sample((rng.uniform(-1.0, 1.0, s),))
                          for s in [(3, 4), (2, 3, 3), (4, 2)]],
       gradgrad=False),
    op("svdvals", lambda lib, x, **kw: lib.linalg.matrix_norm(x, **kw),
       _matrix_samples(["nuc", 2, -2]), variant="matrix_norm", gradgrad=False),
    op("svdvals", lambda lib, x: (x.norm(p="nuc"), lib.linalg.norm(x, "nuc"),
                                  lib.linalg.norm(x, 2), lib.norm(x, "nuc", dim=(1, 0))),
       unary_samples([(3, 4)]), variant="norm_functions", gradgrad=False),
    # ---- LU ----
    op("lu_factor", lambda lib, a: lib.linalg.lu_factor(a).LU,
       _matrices(_distinct_sv, [((3, 3),), ((3, 5),), ((5, 3),), ((2, 4, 4),), ((1, 1),)]),
       f32_tol=WIDE_F32),
    op("lu_factor", lambda lib, a: tuple(lib.linalg.lu(a))[1:],
       _matrices(_distinct_sv, [((4, 4),), ((2, 3, 4),), ((4, 2),)]), variant="linalg.lu",
       f32_tol=WIDE_F32),
    op("lu_factor", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b),
       lambda rng, info: [Sample((_dominant(rng, a), rng.uniform(-1.0, 1.0, b)))
                          for a, b in [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1))]],
       variant="lu_solve",
       f32_tol=WIDE_F32),
    # ---- matrix exponential ----
    op("matrix_exp", lambda lib, a: lib.matrix_exp(a),
       lambda rng, info: [Sample((rng.uniform(-1.0, 1.0, s),))
                          for s in [(3, 3), (2, 4, 4), (1, 1)]]),
    # ---- triangular solves ----
    op("solve_triangular", lambda lib, a, b, **kw: lib.linalg.solve_triangular(a, b, **kw),
       lambda rng, info: [Sample((_dominant(rng, a), rng.uniform(-1.0, 1.0, b)), kw)
                          for a, b, kw in [((3, 3), (3, 2), dict(upper=True)),
                                           ((3, 3), (3, 2), dict(upper=False)),
                                           ((2, 4, 4), (4, 1), dict(upper=False, unitriangular=True)),
                                           ((3, 3), (2, 3), dict(upper=True, left=False)),
                                           ((1, 1), (1, 1), dict(upper=True))]]),
    op("solve_triangular", lambda lib, b, a: tuple(lib.triangular_solve(b, a, transpose=True)),
       lambda rng, info: [Sample((rng.uniform(-1.0, 1.0, (3, 2)), _dominant(rng, (3, 3))))],
       variant="triangular_solve"),
    op("solve", lambda lib, b, a: lib.cholesky_solve(b, lib.linalg.cholesky(_spd(lib, a))),
       lambda rng, info: [Sample((rng.uniform(-1.0, 1.0, (3, 2)), _dominant(rng, (3, 3))))],
       variant="cholesky_solve", f32_tol=WIDE_F32),
]

"""The LU factorization (linalg.lu / lu_factor / lu_factor_ex, torch.lu, lu_unpack),
cholesky_ex / torch.cholesky and torch.qr against torch: the factors, pivots (1-based
int32) and infos, the named tuples, gradients (square, wide and tall matrices, batches,
0-size batches), gradcheck and gradgradcheck, torch's errors."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg

RNG = np.random.default_rng(1)
SHAPES = [(3, 3), (3, 5), (5, 3), (2, 4, 4), (2, 3, 4, 2), (0, 3, 3), (1, 1), (0, 0)]


def _both(fn_torch, fn_tg, a, tol=1e-10):
    """Values of every output, then the gradient of A for one random cotangent per
    floating output."""
    t, g = torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
    rt, rg = fn_torch(t), fn_tg(g)
    assert len(rt) == len(rg)
    lt = lg = 0
    for x, y in zip(rg, rt):
        assert tuple(x.shape) == tuple(y.shape), (x.shape, y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)
        if y.requires_grad and y.numel():
            w = RNG.standard_normal(tuple(y.shape))
            lt, lg = lt + (y * torch.tensor(w)).sum(), lg + (x * tg.tensor(w)).sum()
    if isinstance(lt, int):
        return
    lt.backward()
    lg.backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=tol * 1e3, atol=tol * 1e3)


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor(shape):
    a = RNG.standard_normal(shape)
    _both(torch.linalg.lu_factor, tg.linalg.lu_factor, a)
    r = tg.linalg.lu_factor(tg.tensor(a))
    assert type(r).__name__ == "linalg_lu_factor" and r.pivots.dtype == tg.int32


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor_ex(shape):
    _both(torch.linalg.lu_factor_ex, tg.linalg.lu_factor_ex, RNG.standard_normal(shape))


@pytest.mark.parametrize("shape", SHAPES)
def test_linalg_lu(shape):
    _both(torch.linalg.lu, tg.linalg.lu, RNG.standard_normal(shape))
    assert type(tg.linalg.lu(tg.ones(2, 2))).__name__ == "linalg_lu"


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4)])
@pytest.mark.parametrize("unpack", [(True, True), (True, False), (False, True)])
def test_lu_unpack(shape, unpack):
    a = RNG.standard_normal(shape)
    _, piv = torch.linalg.lu_factor(torch.tensor(a))
    LU = torch.linalg.lu_factor(torch.tensor(a))[0].numpy()
    pg = tg.tensor(piv.numpy())
    _both(lambda x: torch.lu_unpack(x, piv, *unpack), lambda x: tg.lu_unpack(x, pg, *unpack), LU)


@pytest.mark.parametrize("get_infos", [True, False])
def test_torch_lu(get_infos):
    a = RNG.standard_normal((2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(lambda x: torch.lu(x, get_infos=get_infos),
              lambda x: tg.lu(x, get_infos=get_infos), a)
        _both(lambda x: x.lu(get_infos=get_infos), lambda x: x.lu(get_infos=get_infos), a)
    assert type(tg.lu(tg.tensor(a))) is tuple


def test_lu_float32():
    a = RNG.standard_normal((3, 5, 5)).astype("float32")
    P, L, U = tg.linalg.lu(tg.tensor(a))
    Pt, Lt, Ut = torch.linalg.lu(torch.tensor(a))
    np.testing.assert_array_equal(P.numpy(), Pt.numpy())
    np.testing.assert_allclose(L.numpy(), Lt.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(U.numpy(), Ut.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)])
def test_lu_gradcheck_and_gradgradcheck(shape):
    a = tg.tensor(RNG.standard_normal(shape), requires_grad=True)
    assert tg.autograd.gradcheck(lambda x: tg.linalg.lu_factor(x).LU, (a,))
    assert tg.autograd.gradgradcheck(lambda x: tg.linalg.lu_factor(x).LU, (a,))
    assert tg.autograd.gradgradcheck(lambda x: tuple(tg.linalg.lu(x))[1:], (a,))


def test_lu_of_a_singular_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    rt, rg = torch.linalg.lu_factor_ex(torch.tensor(a)), tg.linalg.lu_factor_ex(tg.tensor(a))
    assert rg.info.tolist() == rt.info.tolist() == 2
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        torch.linalg.lu_factor(torch.tensor(a))
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        tg.linalg.lu_factor(tg.tensor(a))


def test_lu_errors():
    for m in (torch, tg):
        with pytest.raises(RuntimeError):
            m.linalg.lu_factor(m.ones(3))
        with pytest.raises(RuntimeError):
            m.linalg.lu_factor(m.ones(3, 3, dtype=m.int64))
        with pytest.raises(RuntimeError):
            m.lu_unpack(m.ones(3, 3), m.ones(3, dtype=m.int64))


# ---- Cholesky -----------------------------------------------------------------------------
def _spd(shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (0, 0)])
@pytest.mark.parametrize("upper", [True, False])
def test_cholesky_ex(shape, upper):
    _both(lambda x: torch.linalg.cholesky_ex(x, upper=upper),
          lambda x: tg.linalg.cholesky_ex(x, upper=upper), _spd(shape))


def test_cholesky_ex_info():
    a = np.stack([_spd((3, 3)), -np.eye(3), np.diag([1.0, 1.0, -1.0])])
    rt, rg = torch.linalg.cholesky_ex(torch.tensor(a)), tg.linalg.cholesky_ex(tg.tensor(a))
    assert rg.info.tolist() == rt.info.tolist() == [0, 1, 3]
    np.testing.assert_allclose(rg.L[0].numpy(), rt.L[0].numpy())
    with pytest.raises(tg.linalg.LinAlgError):
        tg.linalg.cholesky_ex(tg.tensor(a), check_errors=True)


@pytest.mark.parametrize("upper", [True, False])
def test_torch_cholesky(upper):
    a = _spd((2, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(lambda x: (torch.cholesky(x, upper),), lambda x: (tg.cholesky(x, upper),), a)
        _both(lambda x: (x.cholesky(upper),), lambda x: (x.cholesky(upper),), a)


# ---- QR ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4, 3), (0, 3, 2)])
@pytest.mark.parametrize("some", [True, False])
def test_torch_qr(shape, some):
    a = RNG.standard_normal(shape)
    if not some and shape[-2] > shape[-1]:  # not differentiable (both refuse): values only
        a = tg.tensor(a)
        for x, y in zip(tg.qr(a, some), torch.qr(torch.tensor(a.numpy()), some)):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-9, atol=1e-9)
        return
    _both(lambda x: torch.qr(x, some), lambda x: tg.qr(x, some), a, tol=1e-9)
    _both(lambda x: x.qr(some), lambda x: x.qr(some), a, tol=1e-9)
    r = tg.qr(tg.tensor(a))
    assert type(r).__name__ == "qr" and r._fields == ("Q", "R")


@pytest.mark.parametrize("name,call", [
    ("cholesky", lambda m: m.cholesky(m.eye(2))),
    ("qr", lambda m: m.qr(m.eye(2))),
    ("lu", lambda m: m.lu(m.eye(2))),
    ("triangular_solve", lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2))),
    ("lu_solve", lambda m: m.lu_solve(m.ones(2, 1), m.eye(2), m.tensor([1, 2], dtype=m.int32))),
])
def test_older_functions_warn_as_torch(name, call):
    from tapegrad.ops import linalg as ops_linalg
    ops_linalg._deprecation_warned.discard(name)  # torch warns once per process
    with pytest.warns(UserWarning, match=f"torch.{name} is deprecated"):
        call(tg)


# ---- the Householder representation ---------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (2, 6, 3), (0, 3, 2), (3, 0)])
def test_geqrf(shape):
    a = RNG.standard_normal(shape)
    rt, rg = torch.geqrf(torch.tensor(a)), tg.geqrf(tg.tensor(a))
    assert type(rg).__name__ == "geqrf" and rg._fields == ("a", "tau")
    for x, y in zip(rg, rt):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((4, 4), 2), ((2, 6, 3), 3), ((3, 3), 0)])
def test_householder_product(shape, k):
    a, tau = RNG.standard_normal(shape), RNG.standard_normal(shape[:-2] + (k,))
    t = (torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True))
    g = (tg.tensor(a, requires_grad=True), tg.tensor(tau, requires_grad=True))
    rt, rg = torch.linalg.householder_product(*t), tg.linalg.householder_product(*g)
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-10, atol=1e-10)
    w = RNG.standard_normal(tuple(rt.shape))
    gt = torch.autograd.grad((rt * torch.tensor(w)).sum(), t, allow_unused=True)
    gg = tg.autograd.grad((rg * tg.tensor(w)).sum(), g, allow_unused=True)
    for x, y in zip(gg, gt):
        if y is None or x is None:
            assert (x is None or not np.any(x.numpy())) and (y is None or not y.any())
        else:
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr(left, transpose):
    a, tau = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 3))
    c = RNG.standard_normal((2, 5, 4) if left else (2, 4, 5))
    ts = [torch.tensor(x, requires_grad=True) for x in (a, tau, c)]
    gs = [tg.tensor(x, requires_grad=True) for x in (a, tau, c)]
    rt, rg = torch.ormqr(*ts, left, transpose), tg.ormqr(*gs, left, transpose)
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-10, atol=1e-10)
    w = RNG.standard_normal(tuple(rt.shape))
    gt = torch.autograd.grad((rt * torch.tensor(w)).sum(), ts)
    gg = tg.autograd.grad((rg * tg.tensor(w)).sum(), gs)
    for x, y in zip(gg, gt):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-8, atol=1e-8)
    assert tg.autograd.gradgradcheck(lambda *x: tg.ormqr(*x, left, transpose), tuple(gs))


# ---- LDL -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 4), (0, 3, 3), (0, 0)])
@pytest.mark.parametrize("symmetric", [True, False])
def test_ldl_factor(shape, symmetric):
    a = RNG.standard_normal(shape)
    if symmetric:
        a = a + np.swapaxes(a, -1, -2)
    rt, rg = torch.linalg.ldl_factor_ex(torch.tensor(a)), tg.linalg.ldl_factor_ex(tg.tensor(a))
    assert type(rg).__name__ == "linalg_ldl_factor_ex" and rg._fields == ("LD", "pivots", "info")
    for x, y in zip(rg, rt):
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-10)
    r2 = tg.linalg.ldl_factor(tg.tensor(a))
    np.testing.assert_array_equal(r2.LD.numpy(), rg.LD.numpy())


# ---- randomized low-rank SVD / PCA ---------------------------------------------------------------
def _invariants(usv):
    """What does not depend on the singular vectors' signs: U V^T and S."""
    U, S, V = usv
    return U @ V.mT, S


@pytest.mark.parametrize("shapes", [((5, 2), (4, 2)), ((3, 2), (6, 2)), ((2, 5, 3), (2, 4, 3))])
@pytest.mark.parametrize("pca", [False, True])
def test_lowrank_of_a_low_rank_matrix(shapes, pca):
    """rank(A) <= q: the randomized result is exact, whatever the sketch."""
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    q = shapes[0][-1]  # the rank of A (centering multiplies by I - 11^T/m: no higher)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ga, gb = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    if pca:
        rt, rg = torch.pca_lowrank(ta @ tb.mT, q=q), tg.pca_lowrank(ga @ gb.mT, q=q)
    else:
        rt, rg = torch.svd_lowrank(ta @ tb.mT, q=q), tg.svd_lowrank(ga @ gb.mT, q=q)
    assert type(rg) is tuple and len(rg) == 3
    (pt, st), (pg, sg) = _invariants(rt), _invariants(rg)
    np.testing.assert_allclose(sg.detach().numpy(), st.detach().numpy(), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(pg.detach().numpy(), pt.detach().numpy(), rtol=1e-8, atol=1e-8)
    w1, w2 = RNG.standard_normal(tuple(pt.shape)), RNG.standard_normal(tuple(st.shape))
    gt = torch.autograd.grad((pt * torch.tensor(w1)).sum() + (st * torch.tensor(w2)).sum(), (ta, tb))
    gg = tg.autograd.grad((pg * tg.tensor(w1)).sum() + (sg * tg.tensor(w2)).sum(), (ga, gb))
    for x, y in zip(gg, gt):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6, atol=1e-6)


def test_pca_lowrank_checks_q():
    for m in (torch, tg):
        with pytest.raises(ValueError):
            m.pca_lowrank(m.ones(3, 2), q=3)


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 4, 4), (0, 3, 3)])
def test_lu_forward_mode(shape):
    a, v = RNG.standard_normal(shape), RNG.standard_normal(shape)
    _, tt = torch.func.jvp(lambda x: torch.linalg.lu_factor(x).LU, (torch.tensor(a),),
                           (torch.tensor(v),))
    _, tj = tg.func.jvp(lambda x: tg.linalg.lu_factor(x).LU, (tg.tensor(a),), (tg.tensor(v),))
    assert tuple(tj.shape) == tuple(tt.shape)
    np.testing.assert_allclose(tj.numpy(), tt.numpy(), rtol=1e-10, atol=1e-10)

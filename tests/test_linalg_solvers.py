"""torch.linalg's solvers against torch: solve_triangular / triangular_solve, cholesky_solve /
cholesky_inverse, lu_solve (both interfaces), lstsq (every driver's outputs), solve_ex /
inv_ex, tensorsolve / tensorinv. Values and gradients (float64 tight, float32), batches
that broadcast, 0-size batches, gradcheck and gradgradcheck, torch's errors."""
import numpy as np
import pytest
import torch

import tapegrad as tg

RNG = np.random.default_rng(0)


def _pair(a, grad=True):
    return (torch.tensor(a, requires_grad=grad), tg.tensor(a, requires_grad=grad))


def _outs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def check(fn_torch, fn_tg, arrays, tol=1e-10, grad=True):
    """Both libraries on the same arrays: every output's values, dtype and shape, then
    the gradients of every input for one random cotangent per floating output."""
    ts, gs = zip(*[_pair(a, grad) for a in arrays])
    rt, rg = _outs(fn_torch(*ts)), _outs(fn_tg(*gs))
    assert len(rt) == len(rg)
    for x, y in zip(rg, rt):
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)
    if not grad:
        return
    lt = lg = 0
    for x, y in zip(rg, rt):
        if y.requires_grad and y.numel():
            w = RNG.standard_normal(tuple(y.shape)).astype(np.asarray(y.detach()).dtype)
            lt = lt + (y * torch.tensor(w)).sum()
            lg = lg + (x * tg.tensor(w)).sum()
    if isinstance(lt, int):
        return
    gt = torch.autograd.grad(lt, ts, allow_unused=True)
    gg = tg.autograd.grad(lg, gs, allow_unused=True)
    for a, b in zip(gg, gt):
        if b is None:
            assert a is None or not np.any(a.numpy())
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol * 100, atol=tol * 100)


def _tri(shape, upper, dtype="float64"):
    a = RNG.standard_normal(shape)
    a = a + 4 * np.eye(shape[-1])  # well conditioned
    return a.astype(dtype)


# ---- solve_triangular / triangular_solve ------------------------------------------------
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 2)), ((2, 4, 4), (4, 1)), ((4, 4), (2, 4, 3)),
                                    ((0, 3, 3), (0, 3, 2)), ((1, 1), (1, 1))])
def test_solve_triangular(upper, left, unit, shapes):
    sa, sb = shapes
    if not left:
        sb = sb[:-2] + (sb[-1], sb[-2])
    a, b = _tri(sa, upper), RNG.standard_normal(sb)
    kw = dict(upper=upper, left=left, unitriangular=unit)
    check(lambda x, y: torch.linalg.solve_triangular(x, y, **kw),
          lambda x, y: tg.linalg.solve_triangular(x, y, **kw), [a, b])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_solve_triangular_float32(dtype):
    a, b = _tri((3, 4, 4), True, dtype), RNG.standard_normal((3, 4, 2)).astype(dtype)
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=True),
          lambda x, y: tg.linalg.solve_triangular(x, y, upper=True), [a, b],
          tol=1e-5 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve(upper, transpose, unit):
    a, b = _tri((2, 4, 4), upper), RNG.standard_normal((2, 4, 3))
    kw = dict(upper=upper, transpose=transpose, unitriangular=unit)
    check(lambda y, x: torch.triangular_solve(y, x, **kw),
          lambda y, x: tg.triangular_solve(y, x, **kw), [b, a])
    r = tg.tensor(b).triangular_solve(tg.tensor(a), **kw)
    assert type(r).__name__ == "triangular_solve" and r._fields == ("solution", "cloned_coefficient")


def test_solve_triangular_gradgradcheck():
    a = tg.tensor(_tri((3, 3), False), requires_grad=True)
    b = tg.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    f = lambda x, y: tg.linalg.solve_triangular(x, y, upper=False)  # noqa: E731
    assert tg.autograd.gradcheck(f, (a, b))
    assert tg.autograd.gradgradcheck(f, (a, b))


# ---- Cholesky solvers -------------------------------------------------------------------
def _chol(shape, upper):
    a = RNG.standard_normal(shape)
    spd = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    L = np.linalg.cholesky(spd)
    return np.swapaxes(L, -1, -2).copy() if upper else L


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((4, 4), (3, 4, 2)),
                                    ((0, 3, 3), (0, 3, 2))])
def test_cholesky_solve(upper, shapes):
    L, b = _chol(shapes[0], upper), RNG.standard_normal(shapes[1])
    check(lambda y, x: torch.cholesky_solve(y, x, upper),
          lambda y, x: tg.cholesky_solve(y, x, upper), [b, L])
    check(lambda y, x: y.cholesky_solve(x, upper),
          lambda y, x: y.cholesky_solve(x, upper), [b, L])


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (1, 1)])
def test_cholesky_inverse(upper, shape):
    L = _chol(shape, upper)
    check(lambda x: torch.cholesky_inverse(x, upper), lambda x: tg.cholesky_inverse(x, upper), [L])
    check(lambda x: x.cholesky_inverse(upper), lambda x: x.cholesky_inverse(upper), [L])


def test_cholesky_solve_gradgradcheck():
    L = tg.tensor(_chol((3, 3), False), requires_grad=True)
    b = tg.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert tg.autograd.gradcheck(tg.cholesky_solve, (b, L))
    assert tg.autograd.gradgradcheck(tg.cholesky_solve, (b, L))
    assert tg.autograd.gradgradcheck(tg.cholesky_inverse, (L,))


# ---- lu_solve -----------------------------------------------------------------------------
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 4)), ((2, 4, 4), (2, 4, 1)), ((0, 3, 3), (0, 3, 2))])
def test_linalg_lu_solve(left, adjoint, shapes):
    a = RNG.standard_normal(shapes[0])
    b = RNG.standard_normal(shapes[1])
    if not left:
        b = np.swapaxes(b, -1, -2).copy()
    LU, piv = torch.linalg.lu_factor(torch.tensor(a))
    kw = dict(left=left, adjoint=adjoint)
    pg = tg.tensor(piv.numpy())
    check(lambda x, y: torch.linalg.lu_solve(x, piv, y, **kw),
          lambda x, y: tg.linalg.lu_solve(x, pg, y, **kw), [LU.numpy(), b])


def test_lu_solve_older_interface_and_gradgradcheck():
    a, b = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    LU, piv = torch.linalg.lu_factor(torch.tensor(a))
    pg = tg.tensor(piv.numpy())
    check(lambda y, x: torch.lu_solve(y, x, piv), lambda y, x: tg.lu_solve(y, x, pg), [b, LU.numpy()])
    check(lambda y, x: y.lu_solve(x, piv), lambda y, x: y.lu_solve(x, pg), [b, LU.numpy()])
    lu = tg.tensor(LU.numpy(), requires_grad=True)
    bb = tg.tensor(b, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda x, y: tg.linalg.lu_solve(x, pg, y), (lu, bb))


# ---- lstsq ----------------------------------------------------------------------------------
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((4, 3), (4, 2)), ((3, 3), (3, 1)), ((2, 3), (2, 2)),
                                    ((5, 3), (5,)), ((2, 5, 3), (2, 5)),
                                    ((2, 5, 3), (1, 5, 2)), ((0, 4, 3), (0, 4, 2))])
def test_lstsq(driver, shapes):
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    check(lambda x, y: torch.linalg.lstsq(x, y, driver=driver),
          lambda x, y: tg.linalg.lstsq(x, y, driver=driver), [a, b], tol=1e-9)


def test_lstsq_result_type_and_gradgradcheck():
    a = tg.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    b = tg.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    r = tg.linalg.lstsq(a, b, driver="gelsd")
    assert type(r).__name__ == "linalg_lstsq"
    assert r._fields == ("solution", "residuals", "rank", "singular_values")
    assert int(r.rank) == 3 and r.rank.dtype == tg.int64
    assert tg.autograd.gradcheck(lambda x, y: tg.linalg.lstsq(x, y).solution, (a, b))
    assert tg.autograd.gradgradcheck(lambda x, y: tg.linalg.lstsq(x, y).solution, (a, b))


def test_lstsq_float32():
    a = RNG.standard_normal((3, 6, 4)).astype("float32")
    b = RNG.standard_normal((3, 6, 2)).astype("float32")
    check(lambda x, y: torch.linalg.lstsq(x, y).solution,
          lambda x, y: tg.linalg.lstsq(x, y).solution, [a, b], tol=1e-4)


# ---- the _ex forms ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (0, 0)])
def test_inv_ex(shape):
    a = RNG.standard_normal(shape)
    check(torch.linalg.inv_ex, tg.linalg.inv_ex, [a])


@pytest.mark.parametrize("shapes", [((3, 3), (3,)), ((2, 4, 4), (2, 4, 3)), ((0, 2, 2), (0, 2))])
@pytest.mark.parametrize("left", [True, False])
def test_solve_ex(shapes, left):
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    if not left and len(shapes[1]) == len(shapes[0]) - 1:  # a vector B: left=True only
        for m in (torch, tg):
            with pytest.raises(RuntimeError):
                m.linalg.solve_ex(m.tensor(a), m.tensor(b), left=False)
        return
    if not left:
        b = np.swapaxes(b, -1, -2).copy()
    check(lambda x, y: torch.linalg.solve_ex(x, y, left=left),
          lambda x, y: tg.linalg.solve_ex(x, y, left=left), [a, b])


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32")])
def test_solve_triangular_computes_in_As_dtype(dtypes):
    a, b = _tri((3, 3), True, dtypes[0]), RNG.standard_normal((3, 2)).astype(dtypes[1])
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=True),
          lambda x, y: tg.linalg.solve_triangular(x, y, upper=True), [a, b], tol=1e-5)


def test_ex_forms_report_singular_matrices():
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    rt, rg = torch.linalg.inv_ex(torch.tensor(a)), tg.linalg.inv_ex(tg.tensor(a))
    assert rg.info.tolist() == rt.info.tolist() and rg.info.dtype == tg.int32
    np.testing.assert_allclose(rg.inverse[1].numpy(), rt.inverse[1].numpy())
    rt, rg = (torch.linalg.solve_ex(torch.tensor(a), torch.ones(2, 2, dtype=torch.float64)),
              tg.linalg.solve_ex(tg.tensor(a), tg.ones(2, 2, dtype=tg.float64)))
    assert rg.info.tolist() == rt.info.tolist()
    for fn, tf in ((tg.linalg.inv_ex, torch.linalg.inv_ex),):
        with pytest.raises(torch.linalg.LinAlgError):
            tf(torch.tensor(a), check_errors=True)
        with pytest.raises(tg.linalg.LinAlgError):
            fn(tg.tensor(a), check_errors=True)


# ---- tensorsolve / tensorinv -------------------------------------------------------------------
@pytest.mark.parametrize("shape,ind", [((4, 6, 8, 3), 2), ((6, 2, 3), 1), ((24, 2, 3, 4), 1)])
def test_tensorinv(shape, ind):
    a = RNG.standard_normal(shape)
    check(lambda x: torch.linalg.tensorinv(x, ind), lambda x: tg.linalg.tensorinv(x, ind), [a], tol=1e-8)


@pytest.mark.parametrize("shapes,dims", [(((2, 3, 6), (2, 3)), None), (((2, 3, 6), (2, 3)), (0, 2)),
                                         (((3, 4, 4, 3), (3, 4)), None)])
def test_tensorsolve(shapes, dims):
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    check(lambda x, y: torch.linalg.tensorsolve(x, y, dims),
          lambda x, y: tg.linalg.tensorsolve(x, y, dims), [a, b], tol=1e-8)


# ---- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m, a, b: m.linalg.solve_triangular(a, b[0], upper=True),         # B 1-D
    lambda m, a, b: m.linalg.solve_triangular(a, b.T, upper=True),          # shapes
    lambda m, a, b: m.cholesky_solve(b, a[0]),                               # L 1-D
    lambda m, a, b: m.linalg.lstsq(a, b, driver="nope"),
    lambda m, a, b: m.linalg.tensorinv(a, 0),
    lambda m, a, b: m.linalg.tensorinv(b, 1),
    lambda m, a, b: m.linalg.lu_solve(a, m.ones(3, dtype=m.int64), b),      # pivots' dtype
])
def test_errors_are_torchs(call):
    a, b = np.eye(3) * 2, np.ones((3, 2))
    with pytest.raises(Exception) as et:
        call(torch, torch.tensor(a), torch.tensor(b))
    with pytest.raises(Exception) as eg:
        call(tg, tg.tensor(a), tg.tensor(b))
    assert type(eg.value) is type(et.value) or isinstance(eg.value, type(et.value)), \
        (eg.value, et.value)


# ---- ldl_solve ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [((5, 5), (5, 2)), ((2, 4, 4), (4, 3)), ((2, 4, 4), (2, 4, 1)),
                                    ((0, 3, 3), (3, 2))])
def test_ldl_solve(shapes):
    a = RNG.standard_normal(shapes[0])
    a = a + np.swapaxes(a, -1, -2)
    b = RNG.standard_normal(shapes[1])
    LD, piv = torch.linalg.ldl_factor(torch.tensor(a))
    rt = torch.linalg.ldl_solve(LD, piv, torch.tensor(b))
    rg = tg.linalg.ldl_solve(tg.tensor(LD.numpy()), tg.tensor(piv.numpy()), tg.tensor(b))
    assert tuple(rg.shape) == tuple(rt.shape)
    np.testing.assert_allclose(rg.numpy(), rt.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_forward_mode(upper, unit):
    a, b = _tri((2, 4, 4), upper), RNG.standard_normal((2, 4, 3))
    va, vb = RNG.standard_normal(a.shape), RNG.standard_normal(b.shape)
    kw = dict(upper=upper, unitriangular=unit)
    _, tt = torch.func.jvp(lambda x, y: torch.linalg.solve_triangular(x, y, **kw),
                           (torch.tensor(a), torch.tensor(b)), (torch.tensor(va), torch.tensor(vb)))
    _, tj = tg.func.jvp(lambda x, y: tg.linalg.solve_triangular(x, y, **kw),
                        (tg.tensor(a), tg.tensor(b)), (tg.tensor(va), tg.tensor(vb)))
    np.testing.assert_allclose(tj.numpy(), tt.numpy(), rtol=1e-9, atol=1e-9)


def test_out_forms():
    L = tg.tensor(_chol((3, 3), False))
    b = tg.tensor(RNG.standard_normal((3, 2)))
    out = tg.empty(0, dtype=tg.float64)
    assert tg.cholesky_solve(b, L, out=out) is out
    np.testing.assert_allclose(out.numpy(), tg.cholesky_solve(b, L).numpy())
    out = tg.empty(3, 3, dtype=tg.float64)
    assert tg.cholesky_inverse(L, out=out) is out
    assert tg.matrix_power(L, 3, out=out) is out
    np.testing.assert_allclose(out.numpy(), (L @ L @ L).numpy(), rtol=1e-12)


def test_triangular_solve_broadcasts_the_coefficient():
    a, b = _tri((2, 1, 3, 3), True), RNG.standard_normal((4, 3, 2))
    check(lambda y, x: torch.triangular_solve(y, x), lambda y, x: tg.triangular_solve(y, x), [b, a])


@pytest.mark.parametrize("call", [
    lambda m, h: m.linalg.solve_ex(h, h),
    lambda m, h: m.linalg.solve_triangular(h, h, upper=True),
    lambda m, h: m.linalg.ldl_factor(h),
    lambda m, h: m.linalg.householder_product(h, h[0]),
    lambda m, h: m.ormqr(h, h[0], h),
    lambda m, h: m.linalg.cond(h),
])
def test_half_is_refused_as_torch(call):
    with pytest.raises(Exception) as et:
        call(torch, torch.eye(3, dtype=torch.float16))
    with pytest.raises(Exception) as eg:
        call(tg, tg.eye(3, dtype=tg.float16))
    assert type(eg.value) is type(et.value), (eg.value, et.value)

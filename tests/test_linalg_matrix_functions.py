"""torch.linalg's matrix functions against torch: matrix_power (every sign of n),
multi_dot (chain order, vector ends), vecdot, vander, diagonal, matrix_rank (atol/rtol,
hermitian), cond (every norm), matrix_exp and pinverse. Values and gradients (float64
tight, float32), batches and 0-size batches, gradcheck and gradgradcheck, torch's errors."""
import numpy as np
import pytest
import torch

import tapegrad as tg

RNG = np.random.default_rng(2)


def check(fn_torch, fn_tg, arrays, tol=1e-10, grad=True):
    """Values, shape and dtype of the result, then the gradients of every input for one
    random cotangent."""
    ts = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    gs = [tg.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    rt, rg = fn_torch(*ts), fn_tg(*gs)
    assert tuple(rg.shape) == tuple(rt.shape)
    assert str(rg.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=tol, atol=tol)
    if not (grad and rt.requires_grad and rt.numel()):
        return
    w = RNG.standard_normal(tuple(rt.shape)).astype(rt.detach().numpy().dtype)
    gt = torch.autograd.grad((rt * torch.tensor(w)).sum(), ts, allow_unused=True)
    gg = tg.autograd.grad((rg * tg.tensor(w)).sum(), gs, allow_unused=True)
    for a, b in zip(gg, gt):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol * 100, atol=tol * 100)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5, 6])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (1, 1)])
def test_matrix_power(n, shape):
    a = RNG.standard_normal(shape) + 2 * np.eye(shape[-1])
    check(lambda x: torch.linalg.matrix_power(x, n), lambda x: tg.linalg.matrix_power(x, n), [a])
    check(lambda x: x.matrix_power(n), lambda x: x.matrix_power(n), [a])


def test_matrix_power_gradgradcheck_and_errors():
    a = tg.tensor(RNG.standard_normal((3, 3)) + 2 * np.eye(3), requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda x: tg.linalg.matrix_power(x, -2), (a,))
    for m in (torch, tg):
        with pytest.raises(RuntimeError):
            m.linalg.matrix_power(m.ones(2, 3), 2)


@pytest.mark.parametrize("shapes", [[(3,), (3, 4)], [(2, 3), (3,)], [(3,), (3,)],
                                    [(2, 3), (3, 4), (4, 5)], [(5, 4), (4, 0), (0, 2)],
                                    [(2, 4), (4, 3), (3, 5), (5, 3), (3, 2)],
                                    [(10, 2), (2, 10), (10, 3)], [(4,), (4, 6), (6, 2), (2,)]])
def test_multi_dot(shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    check(lambda *a: torch.linalg.multi_dot(a), lambda *a: tg.linalg.multi_dot(a), arrays)


def test_multi_dot_integers_and_errors():
    arrays = [RNG.integers(-5, 5, s) for s in [(2, 3), (3, 4), (4, 2)]]
    check(lambda *a: torch.linalg.multi_dot(a), lambda *a: tg.linalg.multi_dot(a), arrays,
          grad=False)
    for m in (torch, tg):
        with pytest.raises(RuntimeError):
            m.linalg.multi_dot([m.ones(3, 3)])
        with pytest.raises(RuntimeError):
            m.linalg.multi_dot([m.ones(3, 3), m.ones(2, 3, 3), m.ones(3, 3)])
        with pytest.raises(RuntimeError):
            m.linalg.multi_dot([m.ones(3, 3), m.ones(2, 3)])


@pytest.mark.parametrize("shapes,dim", [([(3,), (3,)], -1), ([(2, 3), (2, 3)], 0),
                                        ([(4, 1, 3), (2, 3)], -1), ([(0, 3), (0, 3)], 1)])
def test_vecdot(shapes, dim):
    arrays = [RNG.standard_normal(s) for s in shapes]
    check(lambda x, y: torch.linalg.vecdot(x, y, dim=dim),
          lambda x, y: tg.linalg.vecdot(x, y, dim=dim), arrays)


@pytest.mark.parametrize("shape,N", [((), 2), ((1,), 2), ((5,), None), ((5,), 3),
                                     ((2, 4), 6), ((0, 3), None)])
def test_vander(shape, N):
    a = RNG.standard_normal(shape)
    a.flat[:1] = 0.0  # a zero: the cumulative product has no 0 * inf
    check(lambda x: torch.linalg.vander(x, N=N), lambda x: tg.linalg.vander(x, N=N), [a])


def test_vander_integers_and_errors():
    a = np.array([2, -3, 4])
    check(lambda x: torch.linalg.vander(x), lambda x: tg.linalg.vander(x), [a], grad=False)
    for m in (torch, tg):
        with pytest.raises(RuntimeError):
            m.linalg.vander(m.ones(3), N=1)


@pytest.mark.parametrize("kw", [{}, {"offset": 1}, {"offset": -2, "dim1": 0, "dim2": 2}])
def test_linalg_diagonal(kw):
    a = RNG.standard_normal((3, 4, 5))
    check(lambda x: torch.linalg.diagonal(x, **kw), lambda x: tg.linalg.diagonal(x, **kw), [a])


@pytest.mark.parametrize("kw", [{}, {"rtol": 0.5}, {"atol": 1.0}, {"atol": 1.0, "rtol": 0.3},
                                {"hermitian": True}, {"hermitian": True, "atol": 2.0}])
@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 4), (0, 3, 3), (0, 0)])
def test_matrix_rank(kw, shape):
    a = RNG.standard_normal(shape)
    a = a @ np.swapaxes(a, -1, -2) if kw.get("hermitian") else a
    if shape[-1]:
        a[..., 0] = a[..., 1]  # rank deficient
        if kw.get("hermitian"):
            a[..., 0, :] = a[..., 1, :]
    check(lambda x: torch.linalg.matrix_rank(x, **kw), lambda x: tg.linalg.matrix_rank(x, **kw),
          [a], grad=False)


def test_matrix_rank_tensor_tolerances():
    a = RNG.standard_normal((3, 4, 4))
    atol = np.array([0.1, 1.0, 3.0])
    rtol = np.array([0.0, 0.5, 0.0])
    check(lambda x, t, r: torch.linalg.matrix_rank(x, atol=t, rtol=r),
          lambda x, t, r: tg.linalg.matrix_rank(x, atol=t, rtol=r), [a, atol, rtol], grad=False)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_cond(p, shape):
    a = RNG.standard_normal(shape)
    # torch's backward of the norm-of-inverse forms fails (its inv_ex output is modified
    # in place): values only there
    grad = p in (None, 2, -2, "nuc")
    check(lambda x: torch.linalg.cond(x, p), lambda x: tg.linalg.cond(x, p), [a], tol=1e-9,
          grad=grad)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (1, 1), (0, 0)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matrix_exp(shape, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    tol = 1e-10 if dtype == "float64" else 1e-5
    check(torch.matrix_exp, tg.matrix_exp, [a], tol=tol)
    check(torch.linalg.matrix_exp, tg.linalg.matrix_exp, [a], tol=tol)
    check(lambda x: x.matrix_exp(), lambda x: x.matrix_exp(), [a], tol=tol)


def test_matrix_exp_gradgradcheck():
    a = tg.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    assert tg.autograd.gradcheck(tg.matrix_exp, (a,))
    assert tg.autograd.gradgradcheck(tg.matrix_exp, (a,))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 4, 3), (0, 2, 2)])
def test_pinverse(shape):
    a = RNG.standard_normal(shape)
    check(torch.pinverse, tg.pinverse, [a], tol=1e-9)
    check(lambda x: x.pinverse(), lambda x: x.pinverse(), [a], tol=1e-9)


def test_matrix_power_of_integers():
    a = RNG.integers(-3, 3, (2, 3, 3))
    for n in (0, 1, 3):
        check(lambda x: torch.linalg.matrix_power(x, n), lambda x: tg.linalg.matrix_power(x, n),
              [a], grad=False)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.matrix_power(m.ones(3), 2),
    lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),
    lambda m: m.linalg.matrix_power(m.ones(2, 2, dtype=m.int64), -1),
    lambda m: m.linalg.vecdot(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.linalg.vecdot(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.linalg.vander(m.ones(2, dtype=m.float16)),
    lambda m: m.linalg.vander(m.ones(2, dtype=m.bool)),
    lambda m: m.linalg.cond(m.ones(3)),
    lambda m: m.linalg.cond(m.eye(3), 3),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 4), m.ones(2, 3)),
    lambda m: m.matrix_exp(m.ones(2, 3)),
    lambda m: m.matrix_exp(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.svd_lowrank(m.ones(3)),
])
def test_errors_are_torchs(call):
    with pytest.raises(Exception) as et:
        call(torch)
    with pytest.raises(Exception) as eg:
        call(tg)
    assert type(eg.value).__name__ == type(et.value).__name__, (eg.value, et.value)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_matrix_exp_forward_mode(shape):
    a, v = RNG.standard_normal(shape), RNG.standard_normal(shape)
    _, tt = torch.func.jvp(torch.matrix_exp, (torch.tensor(a),), (torch.tensor(v),))
    _, tj = tg.func.jvp(tg.matrix_exp, (tg.tensor(a),), (tg.tensor(v),))
    np.testing.assert_allclose(tj.numpy(), tt.numpy(), rtol=1e-10, atol=1e-10)


_EMPTY = [np.zeros((0, 0)), np.zeros((2, 0, 0))]
_SINGULAR = [np.ones((2, 3, 3)), np.stack([np.ones((3, 3)), 2 * np.eye(3)])]


# smax / smin (p None, 2, -2) of a singular matrix is LAPACK's rounding noise (1e48 or
# inf): only the norm-of-inverse forms are compared on singular matrices
@pytest.mark.parametrize("p,a", [(p, a) for p in (None, -2, "fro", 1, float("inf")) for a in _EMPTY]
                         + [(p, a) for p in ("fro", 1, float("inf")) for a in _SINGULAR])
def test_cond_of_empty_and_singular_matrices(p, a):
    """0 for empty matrices, inf for a singular one (the norm-of-inverse forms), as torch."""
    check(lambda x: torch.linalg.cond(x, p), lambda x: tg.linalg.cond(x, p), [a], grad=False)


def test_linalg_matmul_is_matmul():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 2))
    check(torch.linalg.matmul, tg.linalg.matmul, [a, b])

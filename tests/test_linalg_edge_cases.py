"""torch.linalg's cross, det, slogdet, inv, solve, svd, qr, eigh, cholesky, pinv (and torch.cross,
det, slogdet, logdet, inverse, svd): error cases, warnings, return types and the cases
the op database does not reach (singular matrices, gauge of singular vectors, modes),
each against torch. Values and gradients of ordinary inputs: tests/opdb/linalg.py."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import error_of

rng = np.random.default_rng(0)


def _both(fn, *arrays, dtypes=None):
    """fn(lib, *tensors) in both libraries: (tapegrad's error, torch's error)."""
    def args(lib):
        out = []
        for i, a in enumerate(arrays):
            dt = None if dtypes is None else dtypes[i]
            out.append(lib.tensor(a) if dt is None else lib.tensor(a, dtype=getattr(lib, dt)))
        return out
    return error_of(lambda: fn(tg, *args(tg))), error_of(lambda: fn(torch, *args(torch)))


def _same_error(fn, *arrays, dtypes=None):
    ours, theirs = _both(fn, *arrays, dtypes=dtypes)
    assert theirs is not None, "torch raised nothing"
    assert ours is not None, f"tapegrad raised nothing; torch: {theirs}"
    assert ours[0] == theirs[0].lstrip("_"), (ours, theirs)  # torch's _LinAlgError
    if theirs[1].startswith("The size of tensor a"):
        # tapegrad's broadcast errors start with torch's sentence, then name op and shapes
        assert ours[1].startswith(theirs[1]), (ours, theirs)
    else:
        assert ours[1] == theirs[1]


F32 = np.float32
ERRORS = [
    # cross
    (lambda lib, a, b: lib.linalg.cross(a, b), [np.ones((4, 3), F32), np.ones(3, F32)]),
    (lambda lib, a, b: lib.linalg.cross(a, b), [np.ones((4, 3), F32), np.ones((4, 2), F32)]),
    (lambda lib, a, b: lib.linalg.cross(a, b, dim=0), [np.ones((4, 3), F32),
                                                        np.ones((4, 3), F32)]),
    (lambda lib, a, b: lib.linalg.cross(a, b, dim=5), [np.ones((3, 4), F32),
                                                        np.ones((3, 4), F32)]),
    (lambda lib, a, b: lib.linalg.cross(a, b), [np.ones((4, 3), F32), np.ones((4, 3))]),
    (lambda lib, a, b: lib.linalg.cross(a, b), [np.ones((2, 3), F32), np.ones((4, 3), F32)]),
    (lambda lib, a, b: lib.linalg.cross(a, b), [np.ones(3, bool), np.ones(3, bool)]),
    (lambda lib, a, b: lib.cross(a, b, dim=1), [np.ones((4, 2), F32), np.ones((4, 2), F32)]),
    # det, slogdet, logdet
    (lambda lib, a: lib.linalg.det(a), [np.ones((3, 4), F32)]),
    (lambda lib, a: lib.linalg.det(a), [np.ones(3, F32)]),
    (lambda lib, a: lib.det(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.det(a), [np.ones((2, 2), np.float16)]),
    (lambda lib, a: lib.linalg.slogdet(a), [np.ones((3, 4), F32)]),
    (lambda lib, a: lib.linalg.slogdet(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.slogdet(a), [np.ones((2, 2), np.float16)]),
    (lambda lib, a: lib.logdet(a), [np.ones((3, 4), F32)]),
    # inv
    (lambda lib, a: lib.linalg.inv(a), [np.ones((3, 4), F32)]),
    (lambda lib, a: lib.linalg.inv(a), [np.zeros((3, 3), F32)]),
    (lambda lib, a: lib.linalg.inv(a), [np.zeros((2, 3, 3), F32)]),
    (lambda lib, a: lib.linalg.inv(a), [np.array([[1.0, 2.0], [2.0, 4.0]])]),
    (lambda lib, a: lib.inverse(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.inv(a), [np.ones((2, 2), np.float16)]),
    # solve
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(3, dtype=F32), np.ones(4, F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b, left=False), [np.eye(3, dtype=F32),
                                                            np.ones((2, 4), F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b, left=False), [np.eye(3, dtype=F32),
                                                            np.ones(3, F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.ones((2, 3, 3), F32), np.ones((5, 3), F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.ones((3, 4), F32), np.ones(3, F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.zeros((3, 3), F32), np.ones(3, F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.zeros((2, 3, 3), F32), np.ones((2, 3), F32)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(3, dtype=F32), np.ones(3)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(2, dtype=np.int64),
                                                np.ones(2, np.int64)]),
    (lambda lib, a, b: lib.linalg.solve(a, b), [np.ones((4, 3, 3), F32),
                                                np.ones((2, 3, 1), F32)]),
    # svd, qr, eigh, cholesky
    (lambda lib, a: lib.linalg.svd(a), [np.ones(3, F32)]),
    (lambda lib, a: lib.linalg.svd(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.svd(a), [np.ones((2, 2), np.float16)]),
    (lambda lib, a: lib.svd(a), [np.ones(3, F32)]),
    (lambda lib, a: lib.linalg.qr(a), [np.ones(3, F32)]),
    (lambda lib, a: lib.linalg.qr(a, mode="foo"), [np.ones((3, 3), F32)]),
    (lambda lib, a: lib.linalg.qr(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.eigh(a), [np.ones((3, 4), F32)]),
    (lambda lib, a: lib.linalg.eigh(a, UPLO="X"), [np.eye(3, dtype=F32)]),
    (lambda lib, a: lib.linalg.eigvalsh(a), [np.ones((3, 4), F32)]),
    (lambda lib, a: lib.linalg.cholesky(a), [np.ones((3, 4), F32)]),
    (lambda lib, a: lib.linalg.cholesky(a), [-np.eye(3, dtype=F32)]),
    (lambda lib, a: lib.linalg.cholesky(a), [np.broadcast_to(-np.eye(3, dtype=F32), (2, 3, 3))]),
    (lambda lib, a: lib.linalg.cholesky(a), [np.diag([1.0, 2.0, -1.0])]),
    (lambda lib, a: lib.linalg.cholesky(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.pinv(a), [np.ones((2, 2), np.int64)]),
    (lambda lib, a: lib.linalg.pinv(a), [np.ones(3, F32)]),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    fn, arrays = ERRORS[k]
    _same_error(fn, *arrays)


def test_linalg_error_class():
    assert issubclass(tg.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tg.linalg.LinAlgError):
        tg.linalg.inv(tg.zeros(2, 2))


def test_cross_default_dim_warns_once_and_picks_first_dim_of_size_3():
    from tapegrad.ops import linalg as _linalg
    _linalg._cross_warned.clear()
    a, b = rng.standard_normal((3, 3, 4)), rng.standard_normal((3, 3, 4))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = tg.cross(tg.tensor(a), tg.tensor(b))
        tg.tensor(a).cross(tg.tensor(b))
    msgs = [str(w.message) for w in seen if issubclass(w.category, UserWarning)]
    assert len(msgs) == 1 and msgs[0].startswith(
        "Using torch.cross without specifying the dim arg is deprecated.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    _same_error(lambda lib, x, y: lib.cross(x, y), np.ones((4, 2)), np.ones((4, 2)))


def test_int_cross_keeps_dtype():
    a, b = np.array([[1, 2, 3]]), np.array([[4, 5, 6]])
    out, ref = tg.linalg.cross(tg.tensor(a), tg.tensor(b)), torch.linalg.cross(
        torch.tensor(a), torch.tensor(b))
    assert out.dtype == tg.int64 and out.tolist() == ref.tolist()


def test_singular_det_gradient_is_the_cofactor_matrix():
    """At a singular A, det's derivative is the cofactor matrix; torch's second-order
    path (create_graph=True) gives it. (torch's plain backward gives 0 there.)"""
    for a in [np.array([[1.0, 2.0], [2.0, 4.0]]), np.diag([1.0, 1.0, 0.0]),
              np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])]:
        x = tg.tensor(a, requires_grad=True)
        tg.linalg.det(x).backward()
        t = torch.tensor(a, requires_grad=True)
        ref, = torch.autograd.grad(torch.linalg.det(t), t, create_graph=True)
        np.testing.assert_allclose(x.grad.numpy(), ref.detach().numpy(), atol=1e-12)


def test_slogdet_and_logdet_of_singular_and_negative():
    for a in [np.zeros((2, 2)), -np.eye(3), np.diag([2.0, -1.0, -3.0])]:
        s, l = tg.linalg.slogdet(tg.tensor(a))
        ts, tl = torch.linalg.slogdet(torch.tensor(a))
        assert s.tolist() == ts.tolist() and l.tolist() == tl.tolist()
        np.testing.assert_array_equal(tg.logdet(tg.tensor(a)).numpy(),
                                      torch.logdet(torch.tensor(a)).numpy())


def test_return_types_and_fields():
    a = rng.standard_normal((3, 3))
    a = a + a.T
    for name, fields in [("linalg.svd", ("U", "S", "Vh")), ("svd", ("U", "S", "V")),
                         ("linalg.qr", ("Q", "R")), ("linalg.eigh", ("eigenvalues",
                                                                     "eigenvectors")),
                         ("linalg.slogdet", ("sign", "logabsdet")),
                         ("slogdet", ("sign", "logabsdet"))]:
        fn = tg
        for part in name.split("."):
            fn = getattr(fn, part)
        r = fn(tg.tensor(a))
        assert type(r).__name__ == name.replace(".", "_") and r._fields == fields
        assert type(r).__module__ == "tapegrad.return_types"
        assert getattr(tg.return_types, type(r).__name__) is type(r)


def test_tensor_methods():
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    x, t = tg.tensor(a), torch.tensor(a)
    for m in ("det", "logdet", "inverse"):
        np.testing.assert_allclose(getattr(x, m)().numpy(), getattr(t, m)().numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(x.slogdet().logabsdet.numpy(), t.slogdet().logabsdet.numpy())
    np.testing.assert_allclose(x.svd().S.numpy(), t.svd().S.numpy(), rtol=1e-12)


def test_svd_gauge_invariant_reconstruction_and_modes():
    for shape in [(4, 3), (3, 4), (2, 3, 5)]:
        a = rng.standard_normal(shape)
        for full in (True, False):
            U, S, Vh = tg.linalg.svd(tg.tensor(a), full_matrices=full)
            tU, tS, tVh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
            assert U.shape == tuple(tU.shape) and Vh.shape == tuple(tVh.shape)
            k = S.shape[-1]
            rec = (U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]
            np.testing.assert_allclose(rec.numpy(), a, atol=1e-12)
            np.testing.assert_allclose(S.numpy(), tS.numpy(), rtol=1e-12)
            # the columns agree up to sign: |<u_i, tu_i>| = 1
            dots = np.abs(np.sum(U.numpy()[..., :k] * tU.numpy()[..., :k], axis=-2))
            np.testing.assert_allclose(dots, 1.0, atol=1e-10)
        U, S, V = tg.svd(tg.tensor(a), some=False)
        assert V.shape == tuple(torch.svd(torch.tensor(a), some=False).V.shape)
        U, S, V = tg.svd(tg.tensor(a, requires_grad=True), compute_uv=False)
        tU, tS, tV = torch.svd(torch.tensor(a), compute_uv=False)
        assert U.shape == tuple(tU.shape) and V.shape == tuple(tV.shape)
        assert not U.requires_grad and float(U.abs().sum()) == 0 and S.requires_grad


def test_svd_full_matrices_gradient_ignores_the_extra_columns():
    """torch drops the gradient of U's columns (Vh's rows) beyond min(m, n)."""
    a = rng.standard_normal((4, 3))
    x, t = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    U, _, _ = tg.linalg.svd(x)
    tU, _, _ = torch.linalg.svd(t)
    (U[:, 3:] ** 2).sum().backward()
    (tU[:, 3:] ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-12)
    assert float(x.grad.abs().sum()) == 0


def test_qr_modes_and_backward_errors():
    a = rng.standard_normal((5, 3))
    for mode in ("reduced", "complete", "r"):
        Q, R = tg.linalg.qr(tg.tensor(a), mode=mode)
        tQ, tR = torch.linalg.qr(torch.tensor(a), mode=mode)
        assert Q.shape == tuple(tQ.shape)
        np.testing.assert_allclose(R.numpy(), tR.numpy(), atol=1e-12)
    for mode, out in [("complete", 0), ("r", 1)]:
        def run(lib):
            x = lib.tensor(a, requires_grad=True)
            lib.linalg.qr(x, mode=mode)[out].sum().backward()
        ours, theirs = error_of(lambda: run(tg)), error_of(lambda: run(torch))
        assert ours == theirs


def test_eigh_reads_one_triangle():
    a = rng.standard_normal((2, 4, 4))
    for uplo in ("L", "U"):
        w = tg.linalg.eigvalsh(tg.tensor(a), UPLO=uplo)
        tw = torch.linalg.eigvalsh(torch.tensor(a), UPLO=uplo)
        np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-12)


def test_solve_vector_and_batch_shapes():
    for sa, sb, left in [((2, 3, 3), (2, 3), True), ((2, 2, 2), (2, 2), True),
                         ((3, 3), (4, 1, 3, 2), True), ((3, 3), (2, 3, 3), False)]:
        a = rng.standard_normal(sa) + 3 * np.eye(sa[-1])
        b = rng.standard_normal(sb)
        out = tg.linalg.solve(tg.tensor(a), tg.tensor(b), left=left)
        ref = torch.linalg.solve(torch.tensor(a), torch.tensor(b), left=left)
        assert out.shape == tuple(ref.shape)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10)


def test_tutorial_snippet_tensors_deeper():
    """pytorch/tutorials introyt/tensors_deeper: the linear-algebra lines."""
    v1 = tg.tensor([1., 0., 0.])
    v2 = tg.tensor([0., 1., 0.])
    m1 = tg.rand(2, 2)
    m2 = tg.tensor([[3., 0.], [0., 3.]])
    assert tg.linalg.cross(v2, v1).tolist() == [0., 0., -1.]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tg.cross(v2, v1).tolist() == [0., 0., -1.]
    m3 = tg.linalg.matmul(m1, m2) if hasattr(tg.linalg, "matmul") else tg.matmul(m1, m2)
    np.testing.assert_allclose(m3.numpy(), 3 * m1.numpy(), rtol=1e-6)
    U, S, V = tg.svd(m3)
    np.testing.assert_allclose((U * S) @ V.T, m3.numpy(), atol=1e-5)
    d = tg.det(m2)
    assert abs(float(d) - 9.0) < 1e-6


def test_pinv_values_with_tolerances():
    for a, kw in [(np.array([[1.0, 2.0], [2.0, 4.0]]), {}), (rng.standard_normal((3, 3)),
                                                              {"atol": 0.5}),
                  (rng.standard_normal((2, 3, 4)), {"rtol": 0.3}), (np.zeros((2, 3)), {})]:
        np.testing.assert_allclose(tg.linalg.pinv(tg.tensor(a), **kw).numpy(),
                                   torch.linalg.pinv(torch.tensor(a), **kw).numpy(),
                                   atol=1e-12)


# ---- matrix norms of empty matrices: 0 for the largest-of orders, torch's error for the
# smallest-of ones ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 4)])
@pytest.mark.parametrize("ord", [float("inf"), -float("inf"), 1, -1, 2, -2, "fro", "nuc"])
def test_matrix_norm_empty(shape, ord):
    def run(L):
        x = L.zeros(shape, dtype=L.float64, requires_grad=True)
        try:
            y = L.linalg.matrix_norm(x, ord)
        except (RuntimeError, IndexError) as e:
            return type(e).__name__
        if y.requires_grad:  # (torch's 0 of the largest-of orders has no history)
            y.sum().backward()
        return tuple(y.shape), y.tolist(), y.requires_grad, x.grad is None
    assert run(tg) == run(torch)


# ---- slogdet's sign requires grad as torch's (a zero gradient) --------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_slogdet_sign_in_the_graph(shape):
    a = np.random.default_rng(5).standard_normal(shape)
    res = []
    for L in (torch, tg):
        x = L.tensor(a, requires_grad=True)
        s, la = L.linalg.slogdet(x)
        (s * la * 3 + s).sum().backward()  # the sign as a factor: only la's gradient counts
        res.append((s.requires_grad, s.detach().numpy(), x.grad.numpy()))
    assert res[0][0] == res[1][0] is True
    np.testing.assert_allclose(res[1][1], res[0][1])
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-10)
    with tg.no_grad():
        assert tg.linalg.slogdet(tg.tensor(a, requires_grad=True))[0].requires_grad is False

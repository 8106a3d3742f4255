"""The dense stand-in for torch's sparse COO tensors (tapegrad/sparse.py) against torch
2.13: `to_sparse()`, `is_sparse`, `indices()`, `values()`, `_nnz()`, `to_dense()`,
`sparse_coo_tensor`, `torch.sparse.mm` / `spmm`, values and gradients (a GCN layer)."""
import numpy as np
import pytest
import torch

import tapegrad as tg

SHAPES = [(5,), (3, 4), (2, 3, 4), (0, 3), (1, 1)]


def _dense(shape, seed, dtype=np.float64):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape) * (r.random(shape) < 0.4)
    return a.astype(dtype)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_to_sparse_api(shape, dtype):
    a = _dense(shape, 0, dtype)
    ts, gs = torch.tensor(a).to_sparse(), tg.tensor(a).to_sparse()
    assert gs.is_sparse and not tg.tensor(a).is_sparse
    assert gs._nnz() == ts._nnz()
    np.testing.assert_array_equal(gs.indices().numpy(), ts.indices().numpy())
    assert gs.indices().dtype == tg.int64
    np.testing.assert_array_equal(gs.values().numpy(), ts.values().numpy())
    np.testing.assert_array_equal(gs.to_dense().numpy(), ts.to_dense().numpy())
    assert not gs.to_dense().is_sparse
    assert (gs.sparse_dim(), gs.dense_dim()) == (ts.sparse_dim(), ts.dense_dim())
    assert gs.coalesce().is_coalesced()


@pytest.mark.parametrize("shape,sparse_dim", [((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4), 2)])
def test_hybrid_to_sparse(shape, sparse_dim):
    a = _dense(shape, 4)
    a[0] = 0  # an all-zero block
    ts, gs = torch.tensor(a).to_sparse(sparse_dim), tg.tensor(a).to_sparse(sparse_dim)
    assert (gs.sparse_dim(), gs.dense_dim(), gs._nnz()) == \
        (ts.sparse_dim(), ts.dense_dim(), ts._nnz())
    np.testing.assert_array_equal(gs.indices().numpy(), ts.indices().numpy())
    np.testing.assert_array_equal(gs.values().numpy(), ts.values().numpy())
    np.testing.assert_array_equal(gs.to_dense().numpy(), ts.to_dense().numpy())


def test_sparse_coo_tensor_sums_repeated_indices():
    idx, val = [[0, 1, 1, 0], [2, 0, 2, 2]], [3., 4., 5., 1.]
    t = torch.sparse_coo_tensor(idx, val, (2, 3), check_invariants=False)
    g = tg.sparse_coo_tensor(idx, val, (2, 3))
    assert g.is_sparse
    np.testing.assert_array_equal(g.to_dense().numpy(), t.to_dense().numpy())
    np.testing.assert_array_equal(
        tg.sparse_coo_tensor(idx, val).to_dense().numpy(),
        torch.sparse_coo_tensor(idx, val, check_invariants=False).to_dense().numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gcn_layer_values_and_gradients(dtype):
    """A graph convolution: A_sparse @ (X @ W), its gradients with respect to X and W,
    and to the values of the dense matrix made sparse."""
    n, f, h = 6, 4, 3
    adj = _dense((n, n), 1, dtype) + np.eye(n, dtype=dtype)
    x, w = _dense((n, f), 2, dtype), np.random.default_rng(3).standard_normal((f, h)).astype(dtype)
    res = {}
    for lib in (torch, tg):
        A = lib.tensor(adj, requires_grad=True)
        X, W = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        As = A.to_sparse()
        out = lib.sparse.mm(As, X @ W)
        out2 = lib.spmm(As, X)
        assert not out.is_sparse
        (out.tanh().sum() + out2.pow(2).sum()).backward()
        res[lib] = [out.detach().numpy(), out2.detach().numpy(), X.grad.numpy(),
                    W.grad.numpy(), A.grad.numpy()]
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
    for a, b in zip(res[tg], res[torch]):
        np.testing.assert_allclose(a, b, **tol)


def test_values_are_differentiable():
    a = np.array([[1.0, 0.0], [0.0, 2.0]])
    grads = []
    for lib in (torch, tg):
        t = lib.tensor(a, requires_grad=True)
        (t.to_sparse().values() * lib.tensor([3.0, 5.0])).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])

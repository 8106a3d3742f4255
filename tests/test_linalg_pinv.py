"""linalg.pinv against torch: hermitian=True reads only the lower triangle (torch's eigh);
the gradient is torch's pinv_backward formula, at rank-deficient matrices too (values and
gradients, float64 tight and float32, batches)."""
import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (5, 5)])
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pinv_hermitian(shape, symmetric, dtype):
    a = np.random.default_rng(0).standard_normal(shape)
    if symmetric:
        a = a + np.swapaxes(a, -1, -2)
    a = a.astype(dtype)
    t, g = torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
    rt, rg = torch.linalg.pinv(t, hermitian=True), tg.linalg.pinv(g, hermitian=True)
    tol = 1e-10 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    (rt * torch.tensor(w)).sum().backward()
    (rg * tg.tensor(w)).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_pinv_hermitian_needs_square():
    with pytest.raises(RuntimeError):
        torch.linalg.pinv(torch.ones(2, 3), hermitian=True)
    with pytest.raises(RuntimeError):
        tg.linalg.pinv(tg.ones(2, 3), hermitian=True)


@pytest.mark.parametrize("m,n,rank", [(4, 4, 2), (5, 3, 2), (3, 5, 1), (4, 4, 4), (6, 2, 2),
                                      (2, 3, 0)])
@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_gradient_rank_deficient(m, n, rank, hermitian):
    if hermitian and m != n:
        return test_pinv_hermitian_needs_square()
    rng = np.random.default_rng(m * 10 + n + rank)
    a = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))
    if hermitian:
        a = a @ a.T
    t, g = torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
    rt = torch.linalg.pinv(t, hermitian=hermitian)
    rg = tg.linalg.pinv(g, hermitian=hermitian)
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-9, atol=1e-9)
    w = rng.standard_normal((n, m))
    gt, = torch.autograd.grad((rt * torch.tensor(w)).sum(), t)
    gg, = tg.autograd.grad((rg * tg.tensor(w)).sum(), g)
    assert np.isfinite(gg.numpy()).all()
    np.testing.assert_allclose(gg.numpy(), gt.numpy(), rtol=1e-8, atol=1e-8)

"""linalg.pinv(hermitian=True) against torch: only the lower triangle is read (torch's
eigh), values and gradients (float64 tight, float32), batches and rank-deficient tolerance."""
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
    if symmetric:  # torch's gradient is its general formula at A
        w = np.random.default_rng(1).standard_normal(shape).astype(dtype)
        (rt * torch.tensor(w)).sum().backward()
        (rg * tg.tensor(w)).sum().backward()
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_pinv_hermitian_needs_square():
    with pytest.raises(RuntimeError):
        torch.linalg.pinv(torch.ones(2, 3), hermitian=True)
    with pytest.raises(RuntimeError):
        tg.linalg.pinv(tg.ones(2, 3), hermitian=True)

"""Reduction edges against torch: var_mean / std_mean with the legacy positional
`unbiased` (a reduction over all elements, gradients included); diff with n=0 returns
the input (prepend / append ignored)."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _pair(shape, seed, dtype="float64"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True))


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("shape", [(2, 3), (5,), (3, 1, 4), ()])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_stat_mean_positional_unbiased(name, unbiased, shape, dtype):
    t, g = _pair(shape, 1, dtype)
    rt, rg = getattr(torch, name)(t, unbiased), getattr(tg, name)(g, unbiased)
    tol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(rg, rt):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(2).standard_normal(2)
    (rt[0] * w[0] + rt[1] * w[1]).backward()
    (rg[0] * w[0] + rg[1] * w[1]).backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("kw", [{}, {"prepend": [[9.0, 8.0, 7.0]]}, {"append": [[1.0, 2.0, 3.0]],
                                                                  "prepend": [[0.5, 0.5, 0.5]]}])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_diff_n(kw, n):
    t, g = _pair((4, 3), 3)
    kt = {k: torch.tensor(v, dtype=torch.float64) for k, v in kw.items()}
    kg = {k: tg.tensor(v, dtype=tg.float64) for k, v in kw.items()}
    rt, rg = torch.diff(t, n=n, dim=0, **kt), tg.diff(g, n=n, dim=0, **kg)
    assert tuple(rg.shape) == tuple(rt.shape)
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-12)
    w = np.random.default_rng(4).standard_normal(tuple(rt.shape))
    (rt * torch.tensor(w)).sum().backward()
    (rg * tg.tensor(w)).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12)

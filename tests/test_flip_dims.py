"""flip's `dims` keyword (torch.flip(x, dims=...), x.flip(dims=...)) against torch."""
import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (-1,), [2, 0], ()])
def test_dims_keyword_values_and_grad(dims):
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    t = torch.tensor(a, requires_grad=True)
    g = tg.tensor(a, requires_grad=True)
    want, got = torch.flip(t, dims=dims), tg.flip(g, dims=dims)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(g.flip(dims=dims).detach().numpy(), want.detach().numpy())
    w = np.random.default_rng(1).standard_normal(a.shape)
    (want * torch.tensor(w)).sum().backward()
    (got * tg.tensor(w)).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())


def test_positional_forms_still_work():
    a = np.arange(6.).reshape(2, 3)
    for args in [(0,), (0, 1), ((0, 1),), ([1],)]:
        np.testing.assert_array_equal(tg.tensor(a).flip(*args).numpy(),
                                      torch.tensor(a).flip(*args).numpy())


def test_duplicate_dims_refused_like_torch():
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        torch.flip(torch.zeros(2, 3), dims=(0, 0))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        tg.flip(tg.zeros(2, 3), dims=(0, 0))

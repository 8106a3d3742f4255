"""Shape-op edges against torch: movedim refuses repeated dims; F.pad 'circular' with
negative (cropping) widths crops first and wraps what remains (values and gradients);
F.dropout(inplace=True) writes into its input."""
import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.mark.parametrize("src,dst", [((0, 1), (1, 1)), ((0, 0), (1, 2)), ((0, -3), (1, 2)),
                                     ((0, 1), (2, -1))])
def test_movedim_repeated(src, dst):
    with pytest.raises(RuntimeError) as et:
        torch.movedim(torch.zeros(2, 3, 4), src, dst)
    with pytest.raises(RuntimeError) as eg:
        tg.movedim(tg.zeros(2, 3, 4), src, dst)
    assert str(et.value) in str(eg.value)


@pytest.mark.parametrize("pad", [(-1, 1, -2, 1), (1, -1, 1, -2), (-1, -1, 2, 0), (2, -1, 0, 0),
                                 (-2, 2, -1, 1), (1, 1, 1, 1), (0, -2, -1, 0), (-1, 0, 0, 0)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pad_circular_negative(pad, dtype):
    a = np.random.default_rng(0).standard_normal((2, 2, 4, 5)).astype(dtype)
    t, g = torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
    rt = torch.nn.functional.pad(t, pad, "circular")
    rg = tg.nn.functional.pad(g, pad, "circular")
    assert tuple(rg.shape) == tuple(rt.shape)
    np.testing.assert_array_equal(rg.detach().numpy(), rt.detach().numpy())
    w = np.random.default_rng(1).standard_normal(tuple(rt.shape)).astype(dtype)
    (rt * torch.tensor(w)).sum().backward()
    (rg * tg.tensor(w)).sum().backward()
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("p", [1.0, 0.0])
def test_dropout_inplace_writes_input(p):
    for L in (torch, tg):
        x = L.ones(3, 4)
        r = L.nn.functional.dropout(x, p=p, inplace=True)
        assert r is x
        assert x.tolist() == ([[0.0] * 4] * 3 if p == 1.0 else [[1.0] * 4] * 3)


def test_dropout_inplace_mask_rule():
    x = tg.ones(2000)
    tg.nn.functional.dropout(x, p=0.5, inplace=True)
    vals = set(x.tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2


def test_dropout_inplace_gradient():
    a = tg.ones(50, requires_grad=True)
    h = a * 1
    tg.nn.functional.dropout(h, p=0.5, inplace=True)
    (h * tg.arange(50.0)).sum().backward()
    kept = h.detach().numpy() != 0
    np.testing.assert_allclose(a.grad.numpy(), np.where(kept, 2.0 * np.arange(50.0), 0.0))


@pytest.mark.parametrize("split", [3, [2, 5], (1, 1, 9), "t0d", "t1d"])
@pytest.mark.parametrize("dim", [0, -1])
def test_tensor_split_tensor_arguments(split, dim):
    a = np.random.default_rng(2).standard_normal((7, 7))
    t, g = torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)

    def arg(L):
        if split == "t0d":
            return L.tensor(3)
        if split == "t1d":
            return L.tensor([1, 4])
        return split
    pt, pg = torch.tensor_split(t, arg(torch), dim), tg.tensor_split(g, arg(tg), dim)
    assert [tuple(p.shape) for p in pg] == [tuple(p.shape) for p in pt]
    for x, y in zip(pg, pt):
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())
    sum((p * (i + 1)).sum() for i, p in enumerate(pt)).backward()
    sum((p * (i + 1)).sum() for i, p in enumerate(pg)).backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())

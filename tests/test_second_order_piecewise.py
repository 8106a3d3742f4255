"""Second order of piecewise ops: a gradient penalty (WGAN-GP style) through their
constant first gradient gives zeros as torch, instead of "does not require grad"; where
torch's own first gradient is a constant (clamp with numbers, max, a product with a
constant) both libraries raise. Differential vs torch."""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn.functional as F

TF = torch.nn.functional
X = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
T8 = [0, 1, 2, 3, 0, 1, 2, 3]


def _penalty(m, FF, f, x0):
    """x.grad after (||d out.sum()/dx||**2).backward(), or the exception type name."""
    x = m.tensor(x0, dtype=m.float64, requires_grad=True)
    out = f(m, FF, x)
    try:
        g, = m.autograd.grad(out.sum(), x, create_graph=True)
        (g.norm() ** 2 + (g * x).sum()).backward()
    except RuntimeError as e:
        assert "does not require grad" in str(e)
        return "raises"
    return x.grad if m is tg else x.grad.to_dense() if x.grad.layout != torch.strided else x.grad


PENALTY = {
    "abs": lambda m, F, x: x.abs() * 1.5,
    "relu": lambda m, F, x: F.relu(x),
    "leaky_relu": lambda m, F, x: F.leaky_relu(x, 0.2),
    "hardtanh": lambda m, F, x: F.hardtanh(x * 2),
    "relu6": lambda m, F, x: F.relu6(x * 4),
    "max_pool2d": lambda m, F, x: F.max_pool2d(x, 2),
    "max_pool1d": lambda m, F, x: F.max_pool1d(x.reshape(2, 12, 4), 2),
    "avg_pool2d": lambda m, F, x: F.avg_pool2d(x, 2),
    "l1_loss": lambda m, F, x: F.l1_loss(x, x.detach() * 0 + 0.1),
    "smooth_l1_loss": lambda m, F, x: F.smooth_l1_loss(x, x.detach() * 0),
    "huber_loss": lambda m, F, x: F.huber_loss(x, x.detach() * 0),
    "vector_norm_1": lambda m, F, x: m.linalg.vector_norm(x, 1),
    # torch's first gradient is a constant here: both raise
    "clamp_numbers": lambda m, F, x: x.clamp(-0.5, 0.5),
    "max_dim": lambda m, F, x: x.max(dim=1)[0],
    "amax": lambda m, F, x: x.amax(1),
    "max": lambda m, F, x: x.max(),
    "mul_constant": lambda m, F, x: x * 2,
    "sum": lambda m, F, x: x.sum(),
}


@pytest.mark.parametrize("name", sorted(PENALTY))
def test_gradient_penalty_like_torch(name):
    f = PENALTY[name]
    got, exp = _penalty(tg, F, f, X), _penalty(torch, TF, f, X)
    if isinstance(exp, str):
        assert got == exp
        return
    assert not isinstance(got, str), f"{name}: tapegrad raised where torch gives {exp}"
    np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-12, atol=1e-12)


def test_penalty_mixed_with_smooth_part_like_torch():
    # relu inside a smooth function: the second derivative flows through the smooth part
    res = []
    for m, FF in ((tg, F), (torch, TF)):
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        w = m.tensor(X[0, 0], dtype=m.float64, requires_grad=True)
        out = (FF.relu(x @ w) ** 2).sum() + FF.hardtanh(x).abs().sum()
        g, = m.autograd.grad(out, x, create_graph=True)
        (g.norm() ** 2).backward()
        res.append((x.grad.numpy(), w.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)


def test_hardtanh_is_its_own_node():
    x = tg.tensor([-2., -1., 0., 1., 2.], requires_grad=True)
    y = F.hardtanh(x)
    assert type(y.grad_fn).__name__ == "HardtanhBackward0" or "Hardtanh" in repr(y.grad_fn)
    y.sum().backward()
    assert x.grad.tolist() == [0., 0., 1., 0., 0.]  # 0 at the bounds, as torch

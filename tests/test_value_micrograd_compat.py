"""micrograd compatibility: micrograd's own test_engine.py sanity checks, run against
tg.Value unchanged (only the import differs), and micrograd's nn module driven by tg.Value.

The two tests below are micrograd's `test/test_engine.py` (MIT, Andrej Karpathy) with
`from micrograd.engine import Value` replaced by tapegrad's Value.
"""
import random

import pytest
import torch

from tapegrad import Value


def test_sanity_check():

    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xmg, ymg = x, y

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    # forward pass went well
    assert ymg.data == ypt.data.item()
    # backward pass went well
    assert xmg.grad == xpt.grad.item()


def test_more_ops():

    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    amg, bmg, gmg = a, b, g

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    tol = 1e-6
    # forward pass went well
    assert abs(gmg.data - gpt.data.item()) < tol
    # backward pass went well
    assert abs(amg.grad - apt.grad.item()) < tol
    assert abs(bmg.grad - bpt.grad.item()) < tol


def test_micrograd_nn_runs_on_tg_value(monkeypatch):
    """micrograd's own nn.py (Neuron/Layer/MLP), with its Value swapped for tg.Value,
    gives the same loss and parameter gradients as with micrograd's Value."""
    import micrograd.nn as mg_nn  # micrograd is in the `test` extra
    from micrograd.engine import Value as MGValue

    def run(V):
        monkeypatch.setattr(mg_nn, "Value", V)
        random.seed(3)
        model = mg_nn.MLP(3, [4, 4, 1])
        xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
        ys = [1.0, -1.0, -1.0, 1.0]
        losses = []
        for _ in range(5):
            preds = [model(x) for x in xs]
            loss = sum((p - y) ** 2 for p, y in zip(preds, ys))
            model.zero_grad()
            loss.backward()
            for p in model.parameters():
                p.data += -0.01 * p.grad
            losses.append(loss.data)
        return losses, [p.grad for p in model.parameters()]

    ours, theirs = run(Value), run(MGValue)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-12)
    assert ours[1] == pytest.approx(theirs[1], rel=1e-9, abs=1e-12)
    assert ours[0][-1] < ours[0][0]

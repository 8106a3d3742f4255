"""Worked example 1: u = x**2, y = 2*u at x = 3 gives 9, 18 and dy/dx = 12."""
import torch

import tapegrad as tg


def test_reuse_two_step():
    x = tg.tensor(3.0, requires_grad=True)
    u = x ** 2
    y = 2 * u
    assert u.item() == 9.0 and y.item() == 18.0
    y.backward()
    assert x.grad.item() == 12.0
    tx = torch.tensor(3.0, requires_grad=True)
    (2 * tx ** 2).backward()
    assert tx.grad.item() == x.grad.item()


def test_one_backward_gives_every_input():
    a = tg.tensor(2.0, requires_grad=True)
    b = tg.tensor(5.0, requires_grad=True)
    c = tg.tensor(-1.0, requires_grad=True)
    y = a * b + b * c + c * a
    y.backward()
    assert (a.grad.item(), b.grad.item(), c.grad.item()) == (4.0, 1.0, 7.0)

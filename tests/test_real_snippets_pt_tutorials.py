"""Programs in the style of the official pytorch/tutorials scripts (the 60-minute blitz,
"Learn the Basics", the introyt series, the examples_* polynomial fits), run with torch
and with tapegrad; what they print must agree (tests/_snippets.py). Data sets are small
deterministic arrays instead of downloads. Written for these tests, not copied.
"""
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
from _snippets import assert_same_output


# ------------------------------------------ introyt/tensors_deeper: "More Math with Tensors"
def test_tensors_deeper_math_sample():
    def program(torch, print):
        angles = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
        sines = torch.sin(angles)
        inverses = torch.asin(sines)
        print(angles, sines, inverses)
        b = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
        print(torch.sin_(b), b)
        x = torch.tensor([[-0.5, 0.25], [0.9, 0.0]])
        for f in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh",
                  "arcsin", "arccos", "arctan", "arcsinh", "arctanh"):
            print(f, getattr(torch, f)(x), getattr(x, f)())
        print(torch.acosh(x + 2), torch.arccosh(x + 2))
        print(torch.atan2(x, x.t() + 0.5), x.arctan2(torch.ones(2)))
        print(torch.atan2(torch.tensor([1, -1]), torch.tensor([0, 2])))  # ints give float
        print(torch.asin(torch.tensor([0, 1])), torch.tan(torch.tensor([True])))
        y = x.clone()
        print(y.tan_(), y.atan_(), y.sinh_(), y.asinh_(), y.atan2_(torch.ones(2)))
        out = torch.empty(2, 2)
        print(torch.atan(x, out=out) is out, out)

    assert_same_output(program)


def test_tensors_deeper_broadcasting_errors():
    """torch's sentence, word for word; tapegrad adds the op and the shapes after it."""
    cases = [(lambda lib: lib.ones(4, 3, 2) * lib.rand(4, 3)),
             (lambda lib: lib.ones(4, 3, 2) * lib.rand(2, 3)),
             (lambda lib: lib.ones(4, 3, 2) * lib.rand((0,))),
             (lambda lib: lib.ones(2, 3) + lib.ones(3, 2)),
             (lambda lib: lib.ones(5, 1, 3) - lib.ones(2, 4, 3)),
             (lambda lib: lib.ones(3) / lib.ones(2, 2))]
    for f in cases:
        with pytest.raises(RuntimeError) as want:
            f(torch)
        with pytest.raises(RuntimeError) as got:
            f(tg)
        assert str(got.value).startswith(str(want.value) + " ("), (str(got.value), str(want.value))


@pytest.mark.parametrize("name,lo,hi", [
    ("tan", -1.2, 1.2), ("asin", -0.9, 0.9), ("acos", -0.9, 0.9), ("atan", -3, 3),
    ("sinh", -3, 3), ("cosh", -3, 3), ("asinh", -3, 3), ("acosh", 1.2, 4), ("atanh", -0.9, 0.9)])
def test_trig_values_and_gradients_match_torch(name, lo, hi):
    v = np.linspace(lo, hi, 7)
    x, xt = tg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    y, yt = getattr(tg, name)(x), getattr(torch, name)(xt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    (g,), (gt,) = (tg.autograd.grad(y.sum(), x, create_graph=True),
                   torch.autograd.grad(yt.sum(), xt, create_graph=True))
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-12)
    g.sum().backward()
    gt.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)  # second order


def test_atan2_gradients_match_torch():
    a, b = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[2.0, 1.0], [-1.5, 0.25]])
    ys, xs = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    yt, xt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (tg.atan2(ys, xs) * tg.tensor(b)).sum().backward()
    (torch.atan2(yt, xt) * torch.tensor(b)).sum().backward()
    np.testing.assert_allclose(ys.grad.numpy(), yt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_trig_errors_match_torch():
    def program(torch, print):
        for f in [lambda: torch.atan2(torch.tensor([1.0]), 2),
                  lambda: torch.tensor([1, 2]).asin_()]:
            try:
                f()
            except (TypeError, RuntimeError) as e:
                print(type(e).__name__, e)

    assert_same_output(program)


# ------------------------------------- basics/transforms_tutorial: the one-hot Lambda
def test_transforms_one_hot_target_transform():
    def program(torch, print):
        def target_transform(y):
            return torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)

        for label in (0, 3, 9):
            print(target_transform(label))
        print(torch.zeros(10, dtype=torch.float).scatter_(dim=0, index=torch.tensor(4), value=1))
        batch = torch.stack([target_transform(y) for y in [1, 2, 2, 7]])
        print(batch, batch.argmax(1))

    assert_same_output(program)


def test_zero_dim_index_scatter_gather():
    def program(torch, print):
        print(torch.zeros(10).scatter(0, torch.tensor(3), 2.0))
        print(torch.zeros(10).scatter(0, torch.tensor(3), torch.tensor(5.)))
        print(torch.zeros(10).scatter(0, torch.tensor(3), torch.tensor([5., 6.])))
        print(torch.zeros(10).scatter(0, torch.tensor(3), 2.0, reduce="add"))
        print(torch.zeros(10).scatter_add(0, torch.tensor(3), torch.tensor(5.)))
        print(torch.arange(10.).gather(0, torch.tensor(3)))
        x = torch.arange(5., requires_grad=True)
        y = x.gather(0, torch.tensor(2))
        y.backward()
        print(y.shape, y.item(), x.grad)
        s = torch.tensor(4., requires_grad=True)
        z = torch.zeros(5).scatter(0, torch.tensor(1), s)
        (z * torch.arange(5.)).sum().backward()
        print(z.detach(), s.grad)
        s = torch.tensor(4., requires_grad=True)
        z = torch.zeros(5).scatter_add(0, torch.tensor(2), s)
        (z * torch.arange(5.)).sum().backward()
        print(z.detach(), s.grad)
        for f in [lambda: torch.zeros(2, 3).scatter(0, torch.tensor(1), 2.0),
                  lambda: torch.zeros(10).scatter_(0, torch.tensor(10), value=1)]:
            try:
                f()
            except RuntimeError as e:
                print("RuntimeError", e)

    assert_same_output(program)

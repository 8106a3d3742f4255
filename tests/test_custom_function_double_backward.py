"""Custom autograd Functions that save outputs or return intermediates, under create_graph,
against torch: double backward, gradgradcheck, hessians, float32; and a training step with
them leaves no reference cycles. The same class bodies run on both libraries (`L` is
tapegrad or torch).
"""
import gc
import weakref

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.utils.checkpoint import checkpoint as tg_checkpoint

from _custom_functions import functions
from _helpers import assert_close


LIBS = (tg, torch)


# ---- custom Functions under create_graph --------------------------------------------
def _inputs(L):
    x = L.tensor([[0.3, -0.7, 1.1], [0.5, 0.2, -1.3]], dtype=L.float64, requires_grad=True)
    y = L.tensor([0.9, -0.4, 0.6], dtype=L.float64, requires_grad=True)
    return x, y


@pytest.mark.parametrize("name", ["Exp", "Cube", "SinCos", "ExpInplace"])
def test_function_double_backward_matches_torch(name):
    got = {}
    for L in LIBS:
        f = functions(L)[name]
        x, y = _inputs(L)
        out = f(x, y)
        v = L.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=L.float64)
        gx, gy = L.autograd.grad((out * v).sum(), (x, y), create_graph=True)
        assert gx.requires_grad and gy.requires_grad and gx.grad_fn is not None
        hx, hy = L.autograd.grad((gx * gx).sum() + (gy * x).sum(), (x, y))
        got[L] = (out, gx, gy, hx, hy)
    for a, b in zip(got[tg], got[torch]):
        assert_close(a, b)


@pytest.mark.parametrize("name", ["Exp", "Cube", "SinCos", "ExpInplace"])
def test_function_gradgradcheck(name):
    for L in LIBS:
        f = functions(L)[name]
        assert L.autograd.gradcheck(f, _inputs(L))
        assert L.autograd.gradgradcheck(f, _inputs(L))


def test_function_hessian_matches_torch():
    got = {}
    for L in LIBS:
        f = functions(L)["Cube"]
        x = L.tensor([0.3, -0.7, 1.1], dtype=L.float64)
        got[L] = L.autograd.functional.hessian(lambda x: f(x, x.flip(0)).sum(), x)
    assert_close(got[tg], got[torch])


def test_function_float32_double_backward():
    got = {}
    for L in LIBS:
        x = L.tensor([0.3, -0.7, 1.1], requires_grad=True)
        (g,) = L.autograd.grad(functions(L)["Exp"](x, x).sum(), x, create_graph=True)
        (h,) = L.autograd.grad(g.sum(), x)
        assert g.dtype == L.float32 and h.dtype == L.float32
        got[L] = (g, h)
    for a, b in zip(got[tg], got[torch]):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


# ---- no reference cycles ----------------------------------------------------------------
def test_training_step_leaves_no_reference_cycles():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 1))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].weight.register_hook(lambda g: g * 1.0)
    fns = functions(tg)
    refs = []

    def step(double):
        x = tg.randn(5, 4)
        h = model[0](x)
        h.retain_grad()
        h.register_hook(lambda g: g)
        h = fns["Cube"](fns["Exp"](h, 0.1), 0.0) + fns["SinCos"](h, h)
        h = tg_checkpoint(lambda t: model[2](model[1](t)), h, use_reentrant=False)
        refs.append(weakref.ref(h))
        loss = h.pow(2).mean()
        opt.zero_grad()
        if double:
            (g,) = tg.autograd.grad(loss, model[0].weight, create_graph=True)
            g.pow(2).sum().backward()
        else:
            loss.backward()
        opt.step()

    gc.collect()
    gc.disable()
    try:
        for double in (False, True, False):
            step(double)
            assert gc.collect() == 0
            assert refs[-1]() is None  # freed by reference counting alone
    finally:
        gc.enable()
        handle.remove()

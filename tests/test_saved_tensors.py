"""Saved tensors against torch: a saved input or output changed in place after a retained
backward raises torch's version error (an unsaved one does not); saved tensors are freed
after backward (kept with retain_graph), checkpoint's too. The same programs run on both
libraries (`L` is tapegrad or torch).
"""
import weakref

import pytest
import torch
from torch.utils.checkpoint import checkpoint as torch_checkpoint

import tapegrad as tg
from tapegrad.utils.checkpoint import checkpoint as tg_checkpoint

from _custom_functions import functions
from _helpers import assert_close


LIBS = (tg, torch)


# ---- in-place change after a retained backward ----------------------------------------
def _saving_function(L):
    class MyFunction(L.autograd.Function):
        @staticmethod
        def forward(ctx, w):
            ctx.save_for_backward(w)
            return w * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return 2 * g * w

    return MyFunction


def test_saved_input_changed_after_retained_backward_raises():
    grads = {}
    for L in LIBS:
        w = L.tensor([1., 2., 3.], requires_grad=True)
        y = _saving_function(L).apply(w).sum()
        y.backward(retain_graph=True)
        with L.no_grad():
            w.mul_(10)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        grads[L] = w.grad
    assert_close(grads[tg], grads[torch])  # the failed pass accumulated nothing


def test_saved_output_changed_after_retained_backward_raises():
    for L in LIBS:
        x = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
        y = functions(L)["Exp"](x, 1.0)
        s = (y * 3).sum()
        s.backward(retain_graph=True)
        with L.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.backward()


def test_unsaved_input_changed_in_place_second_backward_matches_torch():
    """A Function that saves nothing does not care: both passes accumulate (torch too)."""

    grads = {}
    for L in LIBS:
        class Twice(L.autograd.Function):
            @staticmethod
            def forward(ctx, w):
                return w * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        w = L.tensor([1., 2.], requires_grad=True)
        y = Twice.apply(w).sum()
        y.backward(retain_graph=True)
        with L.no_grad():
            w.mul_(10)
        y.backward()
        grads[L] = w.grad
    assert_close(grads[tg], grads[torch])


# ---- saved tensors freed after backward ---------------------------------------------
def _weak_saver(L, refs):
    class Save(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            t = x * 3
            ctx.save_for_backward(t, x)
            refs.append(weakref.ref(t))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            t, x = ctx.saved_tensors
            return g * t

    return Save


@pytest.mark.parametrize("how", ["backward", "grad"])
@pytest.mark.parametrize("retain", [False, True])
def test_function_saved_tensors_freed_after_backward(how, retain):
    alive = {}
    for L in LIBS:
        refs = []
        x = L.tensor([1., 2.], requires_grad=True)
        out = _weak_saver(L, refs).apply(x)
        assert refs[0]() is not None
        if how == "backward":
            out.sum().backward(retain_graph=retain)
        else:
            L.autograd.grad(out.sum(), x, retain_graph=retain)
        after = refs[0]() is not None
        del out
        alive[L] = (after, refs[0]() is not None)
    assert alive[tg] == alive[torch] == (retain, False)


def test_checkpoint_saved_input_freed_after_backward():
    alive = {}
    for L, cp in ((tg, tg_checkpoint), (torch, torch_checkpoint)):
        x = L.tensor([0.1, 0.2, 0.3], requires_grad=True)
        h = x * 2
        ref = weakref.ref(h)
        y = cp(lambda a: a.sin() * a, h, use_reentrant=False)
        del h
        before = ref() is not None
        y.sum().backward()
        alive[L] = (before, ref() is not None)
    assert alive[tg] == alive[torch] == (True, False)

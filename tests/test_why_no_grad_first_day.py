"""why_no_grad and `.grad` on the mistakes of a first day: a dict of tensors, a call
before any backward, and `w = w - lr * w.grad` outside no_grad (torch warns when the
non-leaf's .grad is read; the advice is an in-place update, not retain_grad())."""
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import why_no_grad


def _non_leaf_grad_warnings(lib):
    w = lib.ones(3, requires_grad=True)
    (w * w).sum().backward()
    w = w - 0.1 * w.grad                      # the mistake: w is now a non-leaf
    (w * w).sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = w.grad
    return g, [(w_.category, str(w_.message)) for w_ in caught], w


def test_reading_grad_of_a_non_leaf_warns_with_torchs_text():
    g, got, _ = _non_leaf_grad_warnings(tg)
    rg, want, _ = _non_leaf_grad_warnings(torch)
    assert g is None and rg is None
    assert len(got) == len(want) == 1 and got[0][0] is want[0][0] is UserWarning
    # torch appends where in its C++ source it was triggered
    assert want[0][1].startswith(got[0][1] + " (Triggered internally at ")
    assert got[0][1].startswith("The .grad attribute of a Tensor that is not a leaf Tensor "
                                "is being accessed...".rstrip("."))


@pytest.mark.parametrize("lib", [tg, torch])
def test_no_warning_for_leaves_retained_non_leaves_and_grads_that_exist(lib):
    w = lib.ones(3, requires_grad=True)
    h = w * 2
    h.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert w.grad is None and h.grad is None
        h.sum().backward()
        assert w.grad is not None and h.grad is not None
        assert lib.ones(2).grad is None


def test_why_no_grad_after_the_update_mistake_does_not_suggest_retain_grad():
    _, _, w = _non_leaf_grad_warnings(tg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # asking why must not warn itself
        report = why_no_grad({"w": w})
    assert list(report) == ["w"]
    assert "retain_grad" not in report["w"]
    assert "with tg.no_grad(): w -= lr * w.grad" in report["w"]
    # an intermediate result of a model keeps the retain_grad advice
    x, W = tg.ones(3, requires_grad=True), tg.ones(2, 3, requires_grad=True)
    h = W @ x
    h.sum().backward()
    assert "retain_grad()" in why_no_grad({"h": h})["h"]


def test_why_no_grad_takes_a_dict():
    a, b = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    (a * 2).sum().backward()
    report = why_no_grad({"a": a, "b": b})
    assert list(report) == ["b"] and report.total == 2


def test_why_no_grad_before_any_backward_says_so():
    # a fresh process: no backward has run in it
    prog = textwrap.dedent("""
        import tapegrad as tg
        t = tg.ones(2, requires_grad=True)
        print(tg.autograd.why_no_grad({'w': t})['w'])
        (t * t).sum().backward()
        u = tg.ones(2, requires_grad=True)
        print(tg.autograd.why_no_grad({'u': u})['u'])
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                         timeout=120, cwd=root, env=dict(os.environ, PYTHONPATH=root))
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first.startswith("no backward has run yet"), first
    assert second.startswith("never reached from the loss"), second

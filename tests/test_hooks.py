"""Tensor hooks vs PyTorch: register_hook (leaf and non-leaf, replacement gradients,
order, removal), retain_grad (runs after the hooks), post-accumulate-grad hooks, and
hooks under autograd.grad / create_graph / retain_graph / backward(inputs=...)."""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _helpers import to_numpy


def _np(t):
    return None if t is None else to_numpy(t)


def _same(a, b, rtol=1e-10, atol=1e-12):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    if isinstance(a, (int, float, str, bool)):
        assert a == b, (a, b)
        return
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3))
W = rng.standard_normal((3,))


def _run(scenario):
    """Run scenario(L, log) on both libraries and compare what it returns and logs."""
    results = []
    for L in (tg, torch):
        log = []
        out = scenario(L, log)
        results.append((out, log))
    (o1, l1), (o2, l2) = results
    _same(o1, o2)
    _same(l1, l2)
    return results


def _leaves(L):
    return L.tensor(X, requires_grad=True), L.tensor(W, requires_grad=True)


def test_leaf_hook_replaces_gradient():
    def s(L, log):
        x, w = _leaves(L)
        x.register_hook(lambda g: log.append(g.clone()) or g * 2)
        x.register_hook(lambda g: log.append(g.clone()))  # sees the doubled gradient
        ((x * w).sum() ** 2).backward()
        return [x.grad, w.grad]
    _run(s)


def test_nonleaf_hook_replacement_flows_upstream():
    def s(L, log):
        x, w = _leaves(L)
        h = x * w
        h.register_hook(lambda g: log.append(g.clone()) or g + 1)
        y = h.exp()
        y.register_hook(lambda g: log.append(g.clone()))
        (y * 3).sum().backward()
        return [x.grad, w.grad]
    _run(s)


def test_hook_runs_once_with_total_gradient():
    def s(L, log):
        x, w = _leaves(L)
        h = x * 2
        h.register_hook(lambda g: log.append(g.clone()))
        x.register_hook(lambda g: log.append(g.clone()))
        (h * h + h * w).sum().backward()
        return [x.grad]
    _run(s)


def test_remove_handle():
    def s(L, log):
        x, w = _leaves(L)
        h1 = x.register_hook(lambda g: g * 100)
        h = x * w
        h2 = h.register_hook(lambda g: g * 10)
        h1.remove()
        h2.remove()
        h2.remove()  # twice is fine
        h.sum().backward()
        return [x.grad, w.grad]
    _run(s)


def test_retain_grad_sees_hooked_gradient_regardless_of_order():
    def s(L, log):
        x, w = _leaves(L)
        a = x * w
        a.retain_grad()
        a.register_hook(lambda g: g * 3)  # registered after retain_grad, still applied first
        b = x + 1
        b.register_hook(lambda g: g * 5)
        b.retain_grad()
        (a * b).sum().backward()
        return [a.grad, b.grad, x.grad, a.retains_grad, b.retains_grad, x.retains_grad]
    _run(s)


def test_retain_grad_accumulates_over_backwards_and_on_leaf_is_noop():
    def s(L, log):
        x, w = _leaves(L)
        a = x * w
        a.retain_grad()
        a.retain_grad()  # twice: still one hook
        y = (a ** 2).sum()
        y.backward(retain_graph=True)
        y.backward()
        x.retain_grad()
        return [a.grad, x.grad]
    _run(s)


def test_post_accumulate_grad_hook():
    def s(L, log):
        x, w = _leaves(L)
        x.register_post_accumulate_grad_hook(lambda t: log.append(t.grad.clone()))
        x.register_hook(lambda g: g * 2)
        y = (x * w).sum()
        y.backward(retain_graph=True)
        y.backward()
        return [x.grad]
    _run(s)


def test_post_accumulate_hook_can_update_in_place():
    # the optimizer-in-backward pattern: step and clear inside the hook
    def s(L, log):
        x, w = _leaves(L)

        def step(p):
            with L.no_grad():
                p.sub_(p.grad * 0.1)
            p.grad = None
        x.register_post_accumulate_grad_hook(step)
        (x * w).sum().backward()
        return [x, x.grad]
    _run(s)


def test_hook_errors_match_torch():
    def err(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return None

    for fn in (lambda L: L.ones(2).register_hook(lambda g: g),
               lambda L: (L.ones(2, requires_grad=True) * 2)
               .register_post_accumulate_grad_hook(lambda t: None),
               lambda L: L.ones(2).register_post_accumulate_grad_hook(lambda t: None),
               lambda L: L.ones(2).retain_grad()):
        ours, theirs = err(lambda: fn(tg)), err(lambda: fn(torch))
        assert ours is not None and ours == theirs, (ours, theirs)


def test_hook_changing_shape_raises():
    for L in (tg, torch):
        x, w = _leaves(L)
        h = x * w
        h.register_hook(lambda g: g.sum(0))
        with pytest.raises(RuntimeError, match="hook"):
            h.sum().backward()


def test_hooks_under_autograd_grad():
    def s(L, log):
        x, w = _leaves(L)
        h = x * w
        h.register_hook(lambda g: log.append(g.clone()) or g * 2)
        x.register_hook(lambda g: log.append(g.clone()) or g * 3)
        gx, gw = L.autograd.grad(h.exp().sum(), (x, w))
        return [gx, gw, x.grad]
    _run(s)


def test_hooks_with_create_graph():
    def s(L, log):
        x, w = _leaves(L)
        h = x * w
        h.register_hook(lambda g: log.append(g.requires_grad) or g * h)
        (gx,) = L.autograd.grad((h ** 2).sum(), x, create_graph=True)
        (ggx,) = L.autograd.grad(gx.sum(), x)
        return [gx, ggx]
    _run(s)


def test_backward_create_graph_gives_leaf_grad_a_grad_fn():
    def s(L, log):
        x, w = _leaves(L)
        ((x * w).exp().sum()).backward(create_graph=True)
        log.append(x.grad.requires_grad)
        log.append(x.grad.grad_fn is not None)
        (gg,) = L.autograd.grad(x.grad.sum(), w)
        return [x.grad, gg]
    _run(s)


def test_hook_on_root_and_backward_inputs():
    def s(L, log):
        x, w = _leaves(L)
        y = (x * w).sum()
        y.register_hook(lambda g: log.append(g.clone()) or g * 4)
        w.register_hook(lambda g: log.append(g.clone()))
        y.backward(inputs=[w])
        return [x.grad, w.grad]
    _run(s)


def test_handle_context_manager_and_hook_on_intermediate_in_place():
    def s(L, log):
        x, w = _leaves(L)
        h = x * 1
        with h.register_hook(lambda g: log.append(g.clone()) or g * 7):
            pass  # removed on exit
        h.mul_(w)  # the history moves; hooks registered earlier stay with the old value
        h.sum().backward()
        return [x.grad]
    _run(s)


def test_hook_changing_dtype_raises():
    for L in (tg, torch):
        x = L.ones(2, 3, requires_grad=True)
        h = x * 2
        h.register_hook(lambda g: g.double())
        with pytest.raises(RuntimeError, match="has changed the type of value"):
            h.sum().backward()

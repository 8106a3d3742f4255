"""The engine's fast paths (issue 15) behave as the general paths and as PyTorch do.

`loss.backward()` takes a shortcut (one scalar root, the implicit seed); one- and
two-input nodes skip the rule loop; the cyclic GC is paused during the walk. Each test
would fail if a shortcut changed what the user sees: gradients, errors, the in-place
version check, the GC's state afterwards. Also the general path's roots: several roots
with one node (a split's pieces, [y, y]) as in PyTorch.
"""
import gc

import numpy as np
import pytest
import torch

import tapegrad as tg


def _both(fn, *arrays):
    """fn on tapegrad and torch tensors made from `arrays` (requiring grad): their grads."""
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn(tg, *ours).backward()
    fn(torch, *theirs).backward()
    def grads(ts):
        return [None if t.grad is None else t.grad.numpy() for t in ts]
    return grads(ours), grads(theirs)


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape)


@pytest.mark.parametrize("name,fn,n", [
    ("unary", lambda m, x: x.tanh().sum(), 1),
    ("binary, both require grad", lambda m, x, y: (x * y / (y + 1)).sum(), 2),
    ("binary, one constant", lambda m, x: (2.0 / x - x / 3.0).sum(), 1),
    ("three inputs", lambda m, x, y, z: m.where(x > 1, y, z).sum(), 3),
    ("shared subexpression", lambda m, x: ((x * x).exp() * (x * x)).sum(), 1),
])
def test_gradients_match_torch(name, fn, n):
    ours, theirs = _both(fn, *[_arr(3, 4, seed=k) for k in range(n)])
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None), name  # where's condition input gets none
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)


def _error(lib, fn):
    with pytest.raises(Exception) as e:
        fn(lib)
    return e.type, str(e.value)


def test_fast_path_errors_as_torch():
    # no grad: torch's message, word for word
    t_ours, m_ours = _error(tg, lambda m: m.tensor(1.0).backward())
    t_theirs, m_theirs = _error(torch, lambda m: m.tensor(1.0).backward())
    assert t_ours is t_theirs is RuntimeError
    assert m_ours == m_theirs
    # non-scalar root without a gradient: a RuntimeError in both
    t_ours, m_ours = _error(tg, lambda m: (m.ones(3, requires_grad=True) * 2).backward())
    t_theirs, _ = _error(torch, lambda m: (m.ones(3, requires_grad=True) * 2).backward())
    assert t_ours is t_theirs is RuntimeError
    assert "grad can be implicitly created only for scalar outputs" in m_ours


def test_fast_path_retain_graph_and_second_backward():
    x = tg.tensor(_arr(3), requires_grad=True)
    tx = torch.tensor(_arr(3), requires_grad=True)
    y, ty = (x * x).sum(), (tx * tx).sum()
    y.backward(retain_graph=True)
    y.backward()
    ty.backward(retain_graph=True)
    ty.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


@pytest.mark.parametrize("case", ["output of a unary node", "input of a unary node"])
def test_unary_version_check_as_torch(case):
    def run(m):
        x = m.tensor(_arr(3), requires_grad=True)
        if case == "output of a unary node":
            y = x.exp()          # exp's rule reads its output
            y.add_(1)
            return y.sum().backward()
        x2 = x * 1
        y = x2.sin()             # sin's rule reads its input
        x2.add_(1)
        return y.sum().backward()
    t_ours, m_ours = _error(tg, run)
    t_theirs, m_theirs = _error(torch, run)
    assert t_ours is t_theirs is RuntimeError
    assert "modified by an inplace operation" in m_ours
    assert "modified by an inplace operation" in m_theirs


def test_gc_state_restored_after_backward():
    x = tg.tensor(_arr(3), requires_grad=True)
    assert gc.isenabled()
    (x * 2).sum().backward()
    assert gc.isenabled()
    gc.disable()
    try:
        (x * 2).sum().backward()
        assert not gc.isenabled()  # a GC the user switched off stays off
    finally:
        gc.enable()


def test_gc_reenabled_when_a_hook_raises():
    x = tg.tensor(_arr(3), requires_grad=True)
    y = x * 2

    def boom(g):
        raise ValueError("hook failed")
    y.register_hook(boom)
    with pytest.raises(ValueError, match="hook failed"):
        y.sum().backward()
    assert gc.isenabled()


@pytest.mark.parametrize("how", ["grad", "backward"])
@pytest.mark.parametrize("pieces", ["split", "same_twice", "unbind"])
def test_roots_sharing_a_node_as_torch(how, pieces):
    """Roots whose grad_fn is one node, above a non-leaf: the node's input edges are
    counted once (counted per root, nothing below the node ran: None / no .grad)."""
    a = _arr(5, 3)
    res = []
    for lib in (tg, torch):
        x = lib.tensor(a, requires_grad=True)
        h = x * 2.0  # a non-leaf below the shared node
        if pieces == "split":
            roots = list(lib.split(h, 2))
        elif pieces == "unbind":
            roots = list(lib.unbind(h, 1))
        else:
            y = h * 3.0
            roots = [y, y]
        seeds = [lib.tensor(np.full(tuple(r.shape), k + 1.0)) for k, r in enumerate(roots)]
        if how == "grad":
            (g,) = lib.autograd.grad(roots, [x], seeds)
        else:
            lib.autograd.backward(roots, seeds)
            g = x.grad
        assert g is not None
        res.append(g.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def _count_copies(monkeypatch):
    """The shapes of the leaves whose gradient went through `engine.accumulate` (the path
    that copies a fresh gradient into .grad; the steal in accumulate_all bypasses it)."""
    from tapegrad.core import engine
    copies = []
    plain = engine.accumulate
    monkeypatch.setattr(engine, "accumulate",
                        lambda t, g, *a, **k: (copies.append(tuple(t.shape)),
                                               plain(t, g, *a, **k))[1])
    return copies


@pytest.mark.parametrize("layer", ["Linear", "BatchNorm1d", "LayerNorm", "Linear3d"])
def test_parameter_sums_become_grad_without_a_copy(layer, monkeypatch):
    """A bias or norm-weight gradient is a sum its kernel just made: the engine keeps that
    array as `.grad`, as it does a matmul's weight gradient, instead of copying it (the
    sum reshaped to the shape it already had was a view, and a view is copied). The values
    are torch's; the second backward adds in place."""
    copies = _count_copies(monkeypatch)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4, 5) if layer == "Linear3d" else (6, 5)).astype(np.float32)
    make = {"Linear": lambda m: m.Linear(5, 3), "Linear3d": lambda m: m.Linear(5, 3),
            "BatchNorm1d": lambda m: m.BatchNorm1d(5), "LayerNorm": lambda m: m.LayerNorm(5)}
    ours, theirs = make[layer](tg.nn), make[layer](torch.nn)
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            q.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
            p.data = tg.tensor(q.numpy().copy())
    w = rng.standard_normal(tuple(ours(tg.tensor(x)).shape)).astype(np.float32)
    for step in range(2):
        (ours(tg.tensor(x)) * tg.tensor(w)).sum().backward()
        (theirs(torch.tensor(x)) * torch.tensor(w)).sum().backward()
        if step == 0:
            assert copies == [], f"{layer}: gradients copied into .grad: {copies}"
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=name)


@pytest.mark.parametrize("xshape,bshape", [((6, 3), (3,)), ((2, 6, 3), (6, 3)),
                                           ((2, 6, 3), (3,)), ((6, 3), (1, 3))])
def test_broadcast_bias_gradient_becomes_grad_without_a_copy(xshape, bshape, monkeypatch):
    """`x @ W + b` (the update loop of the lectures, no Linear): add's rule passes g on and
    the engine sums it back to b's shape: added axes summed away, a stretched size-1 axis
    (b of shape (1, 3)) kept, no reshape after, so the sum owns its memory and becomes
    `.grad` without a copy (keepdims + reshape gave a view, which was copied). Values and
    the second (in-place) accumulation are torch's."""
    copies = _count_copies(monkeypatch)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(xshape[:-1] + (5,)).astype(np.float32)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    b0 = rng.standard_normal(bshape).astype(np.float32)
    u = rng.standard_normal(xshape).astype(np.float32)
    W, b = tg.tensor(w0, requires_grad=True), tg.tensor(b0, requires_grad=True)
    Wt, bt = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    for step in range(2):
        ((tg.tensor(x) @ W + b) * tg.tensor(u)).sum().backward()
        ((torch.tensor(x) @ Wt + bt) * torch.tensor(u)).sum().backward()
        if step == 0:
            assert copies == [], f"gradients copied into .grad: {copies}"
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(W.grad.numpy(), Wt.grad.numpy(), rtol=1e-5, atol=1e-4)
    assert b.grad.shape == tuple(bshape)

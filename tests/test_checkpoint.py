"""Checkpointing: gradients identical to the plain run (and to PyTorch's checkpoint);
memory of the live graph (tg.utils.memory) shrinks; no_grad holds none."""
import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.utils.checkpoint import checkpoint, checkpoint_sequential
from tapegrad.utils.memory import saved_bytes

N, B, W = 9, 8, 16


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((W, W)) / 4, rng.standard_normal(W) / 4) for _ in range(N)]


def _layers(m, params):
    """n tanh layers as closures over parameter tensors (m = tg or torch)."""
    ps = [(m.tensor(w, dtype=m.float64, requires_grad=True),
           m.tensor(b, dtype=m.float64, requires_grad=True)) for w, b in params]
    fs = [(lambda h, w=w, b=b: m.tanh(h @ w + b)) for w, b in ps]
    return fs, [t for p in ps for t in p]


def _run(m, segments, ckpt_seq):
    params = _params()
    x0 = np.random.default_rng(1).standard_normal((B, W))
    fs, ps = _layers(m, params)
    x = m.tensor(x0, dtype=m.float64, requires_grad=True)
    if segments:
        y = ckpt_seq(fs, segments, x)
    else:
        y = x
        for f in fs:
            y = f(y)
    loss = (y * y).sum()
    loss.backward()
    return float(loss.detach()), [x.grad.numpy()] + [p.grad.numpy() for p in ps]


@pytest.mark.parametrize("segments", [1, 3, 9])
def test_checkpoint_sequential_identical_to_plain_and_torch(segments):
    loss0, g0 = _run(tg, 0, None)
    loss1, g1 = _run(tg, segments, checkpoint_sequential)
    lt, gt = _run(torch, segments,
                  lambda f, s, x: tcp.checkpoint_sequential(f, s, x, use_reentrant=False))
    assert loss0 == loss1
    for a, b, c in zip(g0, g1, gt):
        np.testing.assert_array_equal(a, b)      # same arithmetic, same order: exact
        np.testing.assert_allclose(b, c, rtol=1e-10, atol=1e-12)
    assert abs(loss1 - lt) < 1e-10 * abs(lt)


def test_saved_bytes_shrink_and_no_grad_holds_none():
    fs, ps = _layers(tg, _params())
    x = tg.tensor(np.ones((B, W)), dtype=tg.float64)
    y = x
    for f in fs:
        y = f(y)
    plain = saved_bytes(y)
    act = B * W * 8  # one activation, float64
    # per layer: the matmul output, the add output (= tanh input), the tanh output
    assert plain == 3 * N * act  # x is a leaf: not counted
    y2 = checkpoint_sequential(fs, 3, x)
    ck = saved_bytes(y2)
    # segment ends (2 checkpoint outputs) + the last 3 layers run normally
    assert ck == 2 * act + 3 * 3 * act
    assert ck < plain / 2
    with tg.no_grad():
        y3 = x
        for f in fs:
            y3 = f(y3)
    assert saved_bytes(y3) == 0 and y3.grad_fn is None


def test_memory_counts_shared_buffers_once_and_freed_graph_is_empty():
    a = tg.randn(100, dtype=tg.float64, requires_grad=True)
    h = a * 2.0
    y = h * h            # h saved once though read twice
    assert saved_bytes(y) == 2 * 800      # h, and y's ans
    assert saved_bytes(y, include_leaves=True) == 3 * 800
    y.sum().backward()
    assert saved_bytes(y) == 0


def test_dropout_mask_replayed():
    tg.manual_seed(0)
    w = tg.randn(W, W, dtype=tg.float64, requires_grad=True)
    x = tg.randn(B, W, dtype=tg.float64, requires_grad=True)
    f = lambda h: F.dropout(tg.tanh(h @ w), 0.5)  # noqa: E731

    def grads(use_ckpt, preserve=True):
        w.grad = x.grad = None
        tg.manual_seed(123)
        y = checkpoint(f, x, preserve_rng_state=preserve) if use_ckpt else f(x)
        F.dropout(y, 0.3).sum().backward()   # draws after the checkpoint
        return w.grad.numpy().copy(), x.grad.numpy().copy()

    ref = grads(False)
    got = grads(True)
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)
    # without restoring the RNG state the recomputed mask differs: gradients differ
    bad = grads(True, preserve=False)
    assert not np.array_equal(ref[0], bad[0])


def test_autograd_grad_multiple_outputs_and_kwargs():
    rng = np.random.default_rng(3)
    w0, x0 = rng.standard_normal((4, 4)), rng.standard_normal((2, 4))

    def f(m, x, w, scale=1.0):
        h = m.sin(x @ w) * scale
        return h, h.exp()

    res = []
    for m, ck in ((tg, checkpoint), (torch, lambda *a, **k: tcp.checkpoint(
            *a, use_reentrant=False, **k))):
        w = m.tensor(w0, dtype=m.float64, requires_grad=True)
        x = m.tensor(x0, dtype=m.float64, requires_grad=True)
        a, b = ck(lambda x, scale: f(m, x, w, scale), x, scale=0.5)
        gx, gw = (tg.autograd.grad if m is tg else torch.autograd.grad)(
            (a.sum() + (b * b).sum()), [x, w])
        res.append((gx.numpy(), gw.numpy()))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)


def test_double_backward_through_checkpoint():
    x0 = np.array([0.3, -1.2, 2.0])
    out = []
    for m, ck in ((tg, checkpoint), (torch, lambda *a: tcp.checkpoint(*a, use_reentrant=False))):
        x = m.tensor(x0, dtype=m.float64, requires_grad=True)
        y = ck(lambda t: m.tanh(t) ** 3, x).sum()
        grad = tg.autograd.grad if m is tg else torch.autograd.grad
        (g,) = grad(y, [x], create_graph=True)
        (gg,) = grad(g.sum(), [x])
        out.append((g.detach().numpy(), gg.numpy()))
    for u, v in zip(*out):
        np.testing.assert_allclose(u, v, rtol=1e-12)


def test_no_grad_runs_plain_and_inplace_change_is_caught():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.no_grad():
        y = checkpoint(lambda t: t * 2, x)
    assert y.grad_fn is None
    y = checkpoint(lambda t: t * t, x)
    assert y.grad_fn.name == "checkpoint"
    with tg.no_grad():
        x.data[0] = 5.0  # raw array write: no version bump, invisible (as .data in torch)
    x2 = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x2 * 1.0
    y2 = checkpoint(lambda t: t * t, h)
    h.mul_(2)            # the recompute would read the changed value: caught
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y2.sum().backward()

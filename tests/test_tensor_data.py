"""`Tensor.data` is torch's: a tensor on the same storage without history (issue 12, item 2).

Each case runs the same code with tapegrad and with torch and compares the results."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _both(fn):
    return fn(tg), fn(torch)


def _arr(t):
    return t.detach().numpy()


def test_data_is_a_history_free_tensor_sharing_storage():
    for L in (tg, torch):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        d = y.data
        assert isinstance(d, L.Tensor)
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        d[0] = 10.0                      # writes through to y
        assert float(y[0]) == 10.0
        assert y.grad_fn is not None     # y keeps its history


def test_parameter_data_is_a_plain_tensor():
    p = tg.nn.Parameter(tg.ones(2))
    tp = torch.nn.Parameter(torch.ones(2))
    assert type(p.data) is tg.Tensor and type(tp.data) is torch.Tensor


def test_nn_zero_to_hero_update_loop():
    # the update step of every nn-zero-to-hero lecture: `p.data += -lr * p.grad`
    def run(L):
        g = L.Generator().manual_seed(2147483647)
        W = L.tensor(np.random.default_rng(0).standard_normal((27, 27)), requires_grad=True)
        xs = L.tensor([0, 5, 13, 13, 1])
        ys = L.tensor([5, 13, 13, 1, 0])
        losses = []
        for _ in range(5):
            xenc = L.nn.functional.one_hot(xs, num_classes=27).double()
            logits = xenc @ W
            counts = logits.exp()
            probs = counts / counts.sum(1, keepdims=True)
            loss = -probs[L.arange(5), ys].log().mean() + 0.01 * (W ** 2).mean()
            losses.append(loss.item())
            W.grad = None
            loss.backward()
            W.data += -50 * W.grad
        del g
        return losses, _arr(W)
    (l1, w1), (l2, w2) = _both(run)
    np.testing.assert_allclose(l1, l2, rtol=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-12)


def _version(t):
    return t._version  # an int in both libraries


def test_in_place_methods_through_data():
    def run(L):
        p = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (p * p).sum().backward()
        v0 = _version(p)
        p.data.add_(p.grad, alpha=-0.1)
        after_add = _arr(p).copy()
        p.data.mul_(2.0)
        p.data.clamp_(-1.5, 1.5)
        q = L.zeros(3)
        q.data.copy_(p.data)
        q.data.zero_()
        return after_add, _arr(p), _arr(q), _version(p) - v0
    (a1, p1, q1, v1), (a2, p2, q2, v2) = _both(run)
    np.testing.assert_allclose(a1, a2)
    np.testing.assert_allclose(p1, p2)
    np.testing.assert_allclose(q1, q2)
    # changes through .data are not seen by autograd: p's own counter stays put
    assert v1 == v2 == 0


def test_data_reductions_are_torch_reductions():
    t1, t2 = _both(lambda L: L.tensor([1.0, 2, 3, 4]).data.std())
    assert float(t1) == pytest.approx(float(t2))   # unbiased 1.291, not NumPy's 1.118
    assert float(t1) == pytest.approx(1.2909944487358056)
    m1, m2 = _both(lambda L: L.tensor([[1.0, 2], [3, 4]]).data.mean(0))
    np.testing.assert_allclose(_arr(m1), _arr(m2))


def test_normal_init_through_data():
    # the weight-init idiom of many tutorials: `m.weight.data.normal_(0, 0.02)`
    lin = tg.nn.Linear(4, 3)
    lin.weight.data.normal_(0.0, 0.02)
    lin.bias.data.zero_()
    assert lin.weight.requires_grad and lin.weight.is_leaf
    assert float(lin.bias.abs().sum()) == 0.0
    assert 0.0 < float(lin.weight.std()) < 0.1


def test_assigning_data_swaps_storage_like_torch():
    for L in (tg, torch):
        x = L.zeros(2, 3, requires_grad=True)
        x.data = L.ones(4, dtype=L.float64)       # any shape and dtype
        assert tuple(x.shape) == (4,) and x.dtype == L.float64
        assert x.requires_grad and x.is_leaf
        with pytest.raises(TypeError):
            x.data = [1.0, 2.0]


def test_data_assignment_shares_memory_with_the_source():
    for L in (tg, torch):
        src = L.zeros(3)
        x = L.ones(3)
        x.data = src
        src.add_(1.0)
        assert float(x.sum()) == 3.0


def test_numpy_shares_memory_and_force_flag():
    for L in (tg, torch):
        x = L.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="requires grad"):
            x.numpy()
        a = x.numpy(force=True)
        y = L.zeros(3)
        y.numpy()[0] = 5.0
        assert float(y[0]) == 5.0
        assert a.shape == (3,)


def test_clip_style_in_place_on_grad_data():
    def run(L):
        w = L.tensor([3.0, 4.0], requires_grad=True)
        (w * w).sum().backward()
        w.grad.data.mul_(0.5)
        return _arr(w.grad)
    a, b = _both(run)
    np.testing.assert_allclose(a, b)

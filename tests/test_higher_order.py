"""Higher-order derivatives vs PyTorch: grad of grad (create_graph=True), Hessian-vector
products, full Hessians, third derivatives, and `backward(create_graph=True)`.

Every corpus call (tests/_ad_corpus.py) is reduced to a scalar with a fixed random
weighting, differentiated once with create_graph=True, and then again along a random
direction: the result must match torch.autograd in float64.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _ad_corpus import CORPUS, sample


def _close(a, b, rtol=1e-9, atol=1e-11):
    a = a.detach().numpy(force=True) if isinstance(a, torch.Tensor) else np.asarray(a.data)
    b = b.detach().numpy(force=True) if isinstance(b, torch.Tensor) else np.asarray(b.data)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _inputs(name, shapes, domain):
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    xs = [sample(rng, s, domain) for s in shapes]
    vs = [rng.standard_normal(s) for s in shapes]
    return xs, vs, rng


def _hvp(L, fn, xs, vs, u):
    ts = [L.tensor(x, requires_grad=True) for x in xs]
    out = fn(L, *ts)
    loss = (out * L.tensor(u)).sum()
    gs = L.autograd.grad(loss, ts, create_graph=True)
    dot = sum((g * L.tensor(v)).sum() for g, v in zip(gs, vs))
    if not dot.requires_grad:  # the gradient does not depend on the inputs (linear op)
        return gs, [None] * len(ts)
    hv = L.autograd.grad(dot, ts, allow_unused=True)
    return gs, hv


@pytest.mark.parametrize("entry", CORPUS, ids=[c[0] for c in CORPUS])
def test_grad_of_grad_matches_torch(entry):
    name, fn, shapes, domain = entry
    xs, vs, rng = _inputs(name, shapes, domain)
    with torch.no_grad():
        tout = fn(torch, *[torch.tensor(x) for x in xs])
    u = rng.standard_normal(tuple(tout.shape))
    gs, hv = _hvp(tg, fn, xs, vs, u)
    tgs, thv = _hvp(torch, fn, xs, vs, u)
    for g, t in zip(gs, tgs):
        _close(g, t)
    for h, t, x in zip(hv, thv, xs):
        if t is None:
            assert h is None or np.allclose(h.data, 0)
        elif h is None:
            np.testing.assert_allclose(t.numpy(force=True), 0, atol=1e-12)
        else:
            _close(h, t)


HESSIAN_CASES = {
    "exp": lambda L, x: L.exp(x).sum(),
    "tanh": lambda L, x: L.tanh(x).sum(),
    "sigmoid": lambda L, x: L.sigmoid(x * 2).sum(),
    "mul_div": lambda L, x: (x * x / (x + 3)).sum(),
    "pow": lambda L, x: ((x + 3) ** 2.5).sum() + ((x + 3) ** (x * 0.3)).sum(),
    "log_sqrt": lambda L, x: (L.log(x + 3) * L.sqrt(x + 3)).sum(),
    "matmul": lambda L, x: ((x.reshape(2, 3) @ x.reshape(3, 2)) ** 2).sum(),
    "softmax": lambda L, x: (L.softmax(x.reshape(2, 3), 1) * L.arange(6.0).double()
                             .reshape(2, 3)).sum(),
    "log_softmax": lambda L, x: (L.log_softmax(x.reshape(3, 2), 0) ** 2).sum(),
    "mean": lambda L, x: (x.mean() * x).sum(),
    "var_std": lambda L, x: x.var() + x.reshape(2, 3).std(1).sum(),
    "logsumexp": lambda L, x: L.logsumexp(x.reshape(2, 3), 1).sum() * x.sum(),
    "prod": lambda L, x: (x + 3).prod(),
    "amax": lambda L, x: L.amax(x * x, 0) * x.sum(),
    "cross_entropy_like": lambda L, x: -(L.log_softmax(x.reshape(2, 3), 1)[:, 0]).sum(),
}


@pytest.mark.parametrize("name", list(HESSIAN_CASES))
def test_full_hessian_matches_torch(name):
    f = HESSIAN_CASES[name]
    a = np.random.default_rng(1).uniform(-1, 1, 6)
    H = tg.autograd.functional.hessian(lambda x: f(tg, x), tg.tensor(a))
    TH = torch.autograd.functional.hessian(lambda x: f(torch, x), torch.tensor(a))
    _close(H, TH)
    np.testing.assert_allclose(H.data, H.data.T, rtol=1e-9, atol=1e-11)  # symmetric


def test_third_derivative():
    res = []
    for L in (tg, torch):
        x = L.tensor([0.3, -0.7, 1.1], dtype=L.float64, requires_grad=True)
        y = (L.tanh(x) * L.exp(x) + L.sigmoid(x) ** 2).sum()
        (g,) = L.autograd.grad(y, x, create_graph=True)
        (g2,) = L.autograd.grad(g.sum(), x, create_graph=True)
        (g3,) = L.autograd.grad(g2.sum(), x)
        res.append((g, g2, g3))
    for a, b in zip(*res):
        _close(a, b)


def test_logistic_map_second_derivative():
    # worked example 3, one order up
    res = []
    for L in (tg, torch):
        x = L.tensor(0.3, dtype=L.float64, requires_grad=True)
        y = x
        for _ in range(6):
            y = 4 * y * (1 - y)
        (g,) = L.autograd.grad(y, x, create_graph=True)
        (g2,) = L.autograd.grad(g, x)
        res.append((g, g2))
    assert round(res[0][0].item(), 10) == -65.1931590859
    _close(res[0][1], res[1][1])


def test_backward_create_graph_leaf_grad_has_grad_fn():
    res = []
    for L in (tg, torch):
        x = L.tensor([0.5, 1.5], dtype=L.float64, requires_grad=True)
        w = L.tensor([2.0, -1.0], dtype=L.float64, requires_grad=True)
        (x * w).exp().sum().backward(create_graph=True)
        assert x.grad.requires_grad and x.grad.grad_fn is not None
        gx = x.grad
        x.grad = None
        gx.sum().backward()
        res.append((gx, x.grad, w.grad))
    for a, b in zip(*res):
        _close(a, b)


def test_first_order_grads_are_not_recorded():
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    (x.exp() * x).sum().backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    (g,) = tg.autograd.grad((x.exp() * x).sum(), x)
    assert g.grad_fn is None


def test_hvp_via_double_backward_equals_forward_over_reverse():
    a, v = np.random.default_rng(2).standard_normal((2, 5))

    def f(x):
        return (tg.tanh(x) * tg.softmax(x, 0)).sum() + tg.logsumexp(x * x, 0)

    x = tg.tensor(a, requires_grad=True)
    (g,) = tg.autograd.grad(f(x), x, create_graph=True)
    (hv_rr,) = tg.autograd.grad((g * tg.tensor(v)).sum(), x)
    _, hv_fr = tg.func.jvp(tg.func.grad(f), (tg.tensor(a),), (tg.tensor(v),))
    _close(hv_rr, hv_fr)


def test_float32_double_backward():
    a = np.random.default_rng(3).standard_normal(4).astype(np.float32)
    res = []
    for L in (tg, torch):
        x = L.tensor(a, requires_grad=True)
        (g,) = L.autograd.grad((L.sigmoid(x) * x ** 2).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        assert gg.dtype == (np.float32 if L is tg else torch.float32)
        res.append(gg)
    _close(res[0], res[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a", [[0.5, 0.0, 2.0, 3.0], [0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 0.0, 3.0],
                               [0.0, 2.0, 0.0, 3.0]])
def test_prod_hessian_with_zeros(a):
    for f in (lambda L: lambda x: (x.prod() * x).sum(),
              lambda L: lambda x: (x.reshape(2, 2).prod(1) ** 2).sum(),
              lambda L: lambda x: (x.reshape(2, 2).prod(0) * x.reshape(2, 2)).sum()):
        H = tg.autograd.functional.hessian(f(tg), tg.tensor(a, dtype=tg.float64))
        TH = torch.autograd.functional.hessian(f(torch), torch.tensor(a, dtype=torch.float64))
        _close(H, TH)

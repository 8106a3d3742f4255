"""torch.native_layer_norm / native_batch_norm / native_group_norm (the normalizations
that also return their saved statistics) against torch: outputs and statistics in
float64 and float32, float64 gradients (group norm's through its mean and rstd too),
running statistics, gradcheck/gradgradcheck."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _pair(a, grad=False):
    return torch.tensor(a, requires_grad=grad), tg.tensor(a, requires_grad=grad)


def _close(got, want, rtol=1e-10, atol=1e-12):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


def _backward(outs_t, outs_g, seed):
    rng = np.random.default_rng(seed)
    pairs = [(t, g) for t, g in zip(outs_t, outs_g) if t.requires_grad]
    cots = [rng.standard_normal(tuple(t.shape)) for t, _ in pairs]
    torch.autograd.backward([t for t, _ in pairs], [torch.tensor(c) for c in cots])
    tg.autograd.backward([g for _, g in pairs], [tg.tensor(c) for c in cots])


@pytest.mark.parametrize("shape,ns", [((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), (5,)),
                                      ((0, 3), (3,)), ((1, 1), (1,))])
@pytest.mark.parametrize("affine", [True, False])
def test_native_layer_norm(shape, ns, affine):
    rng = np.random.default_rng(0)
    xt, xg = _pair(rng.standard_normal(shape), grad=True)
    wt, wg = _pair(rng.standard_normal(ns), grad=True) if affine else (None, None)
    bt, bg = _pair(rng.standard_normal(ns), grad=True) if affine else (None, None)
    want = torch.native_layer_norm(xt, ns, wt, bt, 1e-5)
    got = tg.native_layer_norm(xg, ns, wg, bg, 1e-5)
    for g, w in zip(got, want):
        _close(g, w)
    assert not got[1].requires_grad and not got[2].requires_grad  # as torch's
    _backward(want, got, 1)
    for t, g in [(xt, xg), (wt, wg), (bt, bg)]:
        if t is not None:
            _close(g.grad, t.grad, rtol=1e-9)


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 2, 2)])
@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm(shape, training):
    rng = np.random.default_rng(2)
    C = shape[1]
    xt, xg = _pair(rng.standard_normal(shape), grad=True)
    wt, wg = _pair(rng.standard_normal(C), grad=True)
    bt, bg = _pair(rng.standard_normal(C), grad=True)
    rmt, rmg = _pair(rng.standard_normal(C))
    rvt, rvg = _pair(rng.random(C) + 0.5)
    want = torch.native_batch_norm(xt, wt, bt, rmt, rvt, training, 0.3, 1e-5)
    got = tg.native_batch_norm(xg, wg, bg, rmg, rvg, training, 0.3, 1e-5)
    for g, w in zip(got, want):
        _close(g, w)
    _close(rmg, rmt)  # running statistics updated (in training) as torch's
    _close(rvg, rvt)
    _backward(want[:1], got[:1], 3)
    for t, g in [(xt, xg), (wt, wg), (bt, bg)]:
        _close(g.grad, t.grad, rtol=1e-9)


@pytest.mark.parametrize("shape,group", [((2, 6, 3), 2), ((1, 4, 2, 2), 4), ((3, 2), 1),
                                         ((0, 4, 3), 2)])
def test_native_group_norm_gradients_through_the_statistics(shape, group):
    rng = np.random.default_rng(4)
    N, C = shape[:2]
    HxW = int(np.prod(shape[2:]))
    xt, xg = _pair(rng.standard_normal(shape), grad=True)
    wt, wg = _pair(rng.standard_normal(C), grad=True)
    bt, bg = _pair(rng.standard_normal(C), grad=True)
    want = torch.native_group_norm(xt, wt, bt, N, C, HxW, group, 1e-5)
    got = tg.native_group_norm(xg, wg, bg, N, C, HxW, group, 1e-5)
    for g, w in zip(got, want):
        _close(g, w)
    if N:
        _backward(want, got, 5)  # cotangents for the output, mean and rstd
        for t, g in [(xt, xg), (wt, wg), (bt, bg)]:
            _close(g.grad, t.grad, rtol=1e-9)


def test_float32():
    x = np.random.default_rng(6).standard_normal((3, 4, 5)).astype(np.float32)
    for name, args in [("native_layer_norm", ((5,), None, None, 1e-5)),
                       ("native_group_norm", (None, None, 3, 4, 5, 2, 1e-5)),
                       ("native_batch_norm", (None, None, None, None, True, 0.1, 1e-5))]:
        want = getattr(torch, name)(torch.tensor(x), *args)
        got = getattr(tg, name)(tg.tensor(x), *args)
        for g, w in zip(got, want):
            _close(g, w, rtol=1e-5, atol=1e-5)


def test_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(7)
    x = tg.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    w = tg.tensor(rng.standard_normal(4), requires_grad=True)
    assert tg.autograd.gradcheck(lambda a, b: tg.native_group_norm(a, b, None, 2, 4, 3, 2, 1e-5),
                                 (x, w))
    assert tg.autograd.gradgradcheck(
        lambda a, b: tg.native_group_norm(a, b, None, 2, 4, 3, 2, 1e-5)[0], (x, w))
    assert tg.autograd.gradcheck(lambda a: tg.native_layer_norm(a, (3,), None, None, 1e-5)[0],
                                 (x,))

"""Shared helper for the conv/pooling tests: run the same call in tapegrad and PyTorch,
backpropagate the same random cotangent, compare outputs and input gradients."""
import numpy as np
import torch

import tapegrad as tg

TOL = {np.float64: (1e-10, 1e-12), np.float32: (2e-5, 2e-5)}


def compare(tg_fn, torch_fn, arrays, dtype=np.float64, tol=None, grad=True, seed=0):
    """arrays: float64 numpy inputs (cast to dtype). Returns (tg_out, torch_out)."""
    rtol, atol = tol or TOL[dtype]
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    xs = [tg.tensor(a, requires_grad=grad) for a in arrays]
    ts = [torch.tensor(a, requires_grad=grad) for a in arrays]
    y = tg_fn(*xs)
    yt = torch_fn(*ts)
    assert tuple(y.shape) == tuple(yt.shape), (tuple(y.shape), tuple(yt.shape))
    assert y.dtype == xs[0].dtype
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    if grad:
        g = np.random.default_rng(seed).standard_normal(tuple(yt.shape)).astype(dtype)
        y.backward(tg.tensor(g))
        yt.backward(torch.tensor(g))
        for i, (a, b) in enumerate(zip(xs, ts)):
            assert a.grad is not None, f"no gradient for input {i}"
            assert a.grad.dtype == a.dtype
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i}")
    return y, yt


def randn(rng, *shape):
    return rng.standard_normal(shape)

"""Comparing a tapegrad nn function with torch's on the same arrays: values and the
gradients of a random cotangent (float64 tight, float32 by `_nn_helpers.TOL`), and the
small random-input helpers the nn tests share.
"""
import numpy as np
import torch

import tapegrad as tg

from _nn_helpers import TOL


def _pair(a, grad):
    """The same array as a tapegrad and a torch tensor (float arrays require grad)."""
    a = np.asarray(a)
    g = grad and a.dtype.kind == "f"
    return tg.tensor(a, requires_grad=g), torch.tensor(a, requires_grad=g)


def compare(tg_fn, th_fn, arrays, dtype=np.float64, grad=(True,) * 8, cot_seed=3):
    """tg_fn(*tensors) vs th_fn(*tensors): the value, then every float input's gradient
    for a random cotangent."""
    arrays = [np.asarray(a, dtype=dtype) if np.asarray(a).dtype.kind == "f" else np.asarray(a)
              for a in arrays]
    pairs = [_pair(a, g) for a, g in zip(arrays, grad)]
    out, want = tg_fn(*[p[0] for p in pairs]), th_fn(*[p[1] for p in pairs])
    assert tuple(out.shape) == tuple(want.shape), (out.shape, want.shape)
    np.testing.assert_allclose(np.asarray(out.data), want.detach().numpy(), **TOL[dtype])
    if not want.requires_grad:
        return out, want
    cot = np.random.default_rng(cot_seed).standard_normal(tuple(want.shape)).astype(dtype)
    out.backward(tg.tensor(cot))
    want.backward(torch.tensor(cot))
    for i, (a, b) in enumerate(pairs):
        if b.requires_grad:
            assert (a.grad is None) == (b.grad is None), i
            if b.grad is not None:
                np.testing.assert_allclose(np.asarray(a.grad.data), b.grad.numpy(),
                                           err_msg=f"grad of argument {i}", **TOL[dtype])
    return out, want


def rng(seed=0):
    return np.random.default_rng(seed)


def signs(r, shape):
    return np.where(r.random(shape) < 0.5, -1.0, 1.0)

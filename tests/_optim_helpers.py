"""Helpers the optimizer tests share: the parameters and the loss both libraries train
(`SHAPES`, `_init`, `_tensor_pair`, `_loss`, `_train`), state dicts as plain nested
NumPy, their comparison, torch's state dict converted to tapegrad tensors, parameters
compared with torch's.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


SHAPES = [(3, 4), (5,), ()]


def _init(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _tensor_pair(dtype=np.float64):
    """The same initial parameters as tapegrad and as torch leaf tensors."""
    init = _init(dtype)
    return ([tg.tensor(a, requires_grad=True) for a in init],
            [torch.tensor(a, requires_grad=True) for a in init])


def _loss(lib, params, k):
    # A loss whose gradient depends on the current weights and on the step k, so the
    # optimizer's state (momentum, moments) is exercised with changing gradients (both
    # signs).
    total = 0
    for i, p in enumerate(params):
        c = 0.3 + 0.1 * i + 0.05 * k
        total = total + (lib.sin(p * c) * (1.0 + i) + p * p * 0.5).sum()
    return total


def _train(lib, params, opt, steps):
    """One optimizer step per k in `steps` on _loss(lib, params, k) (lib: tg or torch)."""
    for k in steps:
        opt.zero_grad()
        _loss(lib, params, k).backward()
        opt.step()


def _close(ours, theirs, dtype):
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    for a, b in zip(ours, theirs):
        assert a.data.dtype == b.detach().numpy().dtype
        assert a.data.shape == tuple(b.shape)
        np.testing.assert_allclose(a.data, b.detach().numpy(), **tol)


# ---- state dicts ------------------------------------------------------------------------
def _plain(sd):
    if isinstance(sd, torch.Tensor):
        return np.asarray(sd.detach().numpy())
    if isinstance(sd, tg.Tensor):
        return np.asarray(sd.data)
    if isinstance(sd, dict):
        return {k: _plain(v) for k, v in sd.items()}
    if isinstance(sd, (list, tuple)):
        return type(sd)(_plain(v) for v in sd)
    return sd


def _assert_same_tree(a, b, path="sd"):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            _assert_same_tree(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_tree(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), path
        assert a.dtype == b.dtype and a.shape == b.shape, (path, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=path)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-10), (path, a, b)
    else:
        assert a == b, (path, a, b)


def _to_tg_state(sd):
    def conv(v):
        if isinstance(v, torch.Tensor):
            return tg.tensor(v.detach().numpy().copy())
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return {"state": {i: {k: conv(v) for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}

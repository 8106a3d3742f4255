"""clip_grad_norm_'s one-pass 2-norm (a dot product per gradient) vs torch: many
gradients of mixed shapes, float32/float64, no-op scaling, non-finite and mixed dtypes."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.nn.utils import clip_grad_norm_, get_total_norm

SHAPES = [(64, 192), (192,), (), (27, 64), (1,), (256, 64)]


def _pair(dtypes, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for s, dt in zip(SHAPES, dtypes):
        g = np.asarray((rng.standard_normal(s) * scale).astype(dt))
        a = tg.zeros(*s, dtype=dt, requires_grad=True)
        a.grad = tg.tensor(g.copy())
        b = torch.zeros(s, dtype=torch.from_numpy(g).dtype, requires_grad=True)
        b.grad = torch.tensor(g.copy())
        ours.append(a)
        theirs.append(b)
    return ours, theirs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_norm", [1.0, 1e6])
def test_two_norm_matches_torch(dtype, max_norm):
    ours, theirs = _pair([dtype] * len(SHAPES))
    versions = [p.grad._version for p in ours]
    na = clip_grad_norm_(ours, max_norm)
    nb = torch.nn.utils.clip_grad_norm_(theirs, max_norm)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    assert na.detach().numpy().dtype == nb.numpy().dtype
    np.testing.assert_allclose(na.detach().numpy(), nb.numpy(), rtol=tol)
    for a, b, v in zip(ours, theirs, versions):
        np.testing.assert_allclose(a.grad.detach().numpy(), b.grad.numpy(), rtol=tol, atol=tol)
        assert a.grad._version == v + 1  # bumped even when the scale is 1
    if max_norm == 1e6:  # scale 1: untouched, as torch's multiply by 1.0
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.grad.detach().numpy(), b.grad.numpy())


def test_nonfinite_gradient_matches_torch():
    ours, theirs = _pair([np.float32] * len(SHAPES))
    ours[0].grad._data[0, 0] = np.inf
    theirs[0].grad[0, 0] = np.inf
    na = clip_grad_norm_(ours, 1.0)
    nb = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    assert np.isinf(na.detach().numpy()) and np.isinf(nb.numpy())
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.detach().numpy(), b.grad.numpy())
    with pytest.raises(RuntimeError, match="non-finite"):
        get_total_norm([p.grad for p in ours], error_if_nonfinite=True)


def test_mixed_dtypes_match_torch():
    ours, theirs = _pair([np.float32, np.float64] * 3)
    na = clip_grad_norm_(ours, 0.5)
    nb = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
    np.testing.assert_allclose(na.detach().numpy(), nb.numpy(), rtol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.detach().numpy(), b.grad.numpy(), rtol=1e-6,
                                   atol=1e-7)

"""F.group_norm and nn.GroupNorm against PyTorch 2.13: values, input and parameter
gradients (float64, float32), initialisation, errors, and a small U-Net-style block.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

from _nn_module_pairs import _close, _module_pair


# ---- GroupNorm -------------------------------------------------------------------------------
# One element per group (e.g. (3, 6) with 6 groups) is left to float64: there x - mean is
# rounding noise, and torch's float32 one-pass variance and ours disagree on noise.
GN_CASES = [(kw, g, shape, dt)
            for kw in ({}, dict(affine=False), dict(bias=False), dict(eps=1e-3))
            for g in (1, 2, 3, 6)
            for shape in ((3, 6), (2, 6, 5), (2, 6, 4, 3), (1, 6, 2, 2, 2))
            for dt in (np.float64, np.float32)
            if dt == np.float64 or 6 // g * int(np.prod(shape[2:])) > 1]


@pytest.mark.parametrize("kw,groups,shape,dtype", GN_CASES)
def test_group_norm_module(kw, groups, shape, dtype):
    x = np.random.default_rng(0).standard_normal(shape) * 3 + 1
    _module_pair(tg.nn.GroupNorm(groups, 6, **kw), torch.nn.GroupNorm(groups, 6, **kw), x, dtype,
                 f"GroupNorm({groups}, 6, {kw})")


def test_group_norm_functional_init_and_errors():
    x = np.random.default_rng(1).standard_normal((2, 4, 3))
    w, b = np.arange(1.0, 5.0), np.linspace(-1, 1, 4)
    out = F.group_norm(tg.tensor(x), 2, tg.tensor(w), tg.tensor(b), eps=1e-4)
    tout = TF.group_norm(torch.tensor(x), 2, torch.tensor(w), torch.tensor(b), eps=1e-4)
    _close(out, tout, np.float64, "F.group_norm")
    m = tg.nn.GroupNorm(2, 4)
    assert np.all(m.weight.numpy(force=True) == 1) and np.all(m.bias.numpy(force=True) == 0)
    assert repr(m) == repr(torch.nn.GroupNorm(2, 4))
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups "
                                         r"\(2\)"):
        tg.nn.GroupNorm(2, 5)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups.*\[2, 4, 3\].*num_groups=3"):
        F.group_norm(tg.tensor(x), 3)


def test_group_norm_in_a_small_unet_style_block():
    """GroupNorm + Conv2d + SiLU + nearest Upsample, as diffusion-model code stacks them."""
    def block(nn):
        return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.GroupNorm(4, 8), nn.SiLU(),
                             nn.Upsample(scale_factor=2, mode="nearest"),
                             nn.Conv2d(8, 4, 3, padding=1))
    x = np.random.default_rng(2).standard_normal((2, 4, 5, 5))
    _module_pair(block(tg.nn), block(torch.nn), x, np.float64, "unet block")


@pytest.mark.parametrize("shape", [(0, 4, 3), (0, 2), (2, 4, 0), (0, 6, 2, 2)])
def test_group_norm_empty_inputs(shape):
    """Empty batches or spatial sizes: an empty result of the input's shape, as torch
    (no reshape with -1 over a zero-size batch)."""
    C = shape[1]
    x = tg.zeros(*shape, requires_grad=True)
    w = tg.ones(C, requires_grad=True)
    out = F.group_norm(x, 2, w)
    want = TF.group_norm(torch.zeros(shape), 2, torch.ones(C))
    assert tuple(out.shape) == tuple(want.shape)
    out.sum().backward()
    assert tuple(x.grad.shape) == shape and np.all(w.grad.numpy() == 0)

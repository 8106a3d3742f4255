"""F.grid_sample, torch.grid_sampler_2d/3d and F.affine_grid against torch: values and the
gradients of input and grid (float64, float32) for every mode x padding x align_corners,
grids reaching outside [-1, 1], 3-d volumes, gradcheck, errors.
"""
import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

from _nn_compare import compare, rng

MODES = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode,pad,ac", list(itertools.product(MODES, PADS, [False, True])))
def test_grid_sample_2d(mode, pad, ac, dtype):
    r = rng(7)
    x = r.standard_normal((2, 3, 5, 6))
    grid = r.uniform(-1.6, 1.6, (2, 4, 7, 2))  # beyond the edges: padding decides
    if mode == "bicubic" and dtype == np.float32:
        return _bicubic_float32(x, grid, pad, ac)
    compare(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=ac),
            lambda a, g: TF.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=ac),
            [x, grid], dtype)


def _bicubic_float32(x, grid, pad, ac):
    """float32 bicubic: the grid gradient sums 16 products of cubic-weight derivatives, so
    it differs from torch's in the last bits (1e-5 on values ~10): a looser tolerance."""
    a, g = tg.tensor(x.astype(np.float32), requires_grad=True), \
        tg.tensor(grid.astype(np.float32), requires_grad=True)
    ta, tgr = torch.tensor(x.astype(np.float32), requires_grad=True), \
        torch.tensor(grid.astype(np.float32), requires_grad=True)
    out = F.grid_sample(a, g, mode="bicubic", padding_mode=pad, align_corners=ac)
    want = TF.grid_sample(ta, tgr, mode="bicubic", padding_mode=pad, align_corners=ac)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    cot = rng(11).standard_normal(tuple(want.shape)).astype(np.float32)
    out.backward(tg.tensor(cot))
    want.backward(torch.tensor(cot))
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g.grad.numpy(), tgr.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode,pad,ac", list(itertools.product(["bilinear", "nearest"], PADS,
                                                               [False, True])))
def test_grid_sampler_3d(mode, pad, ac):
    r = rng(8)
    x, grid = r.standard_normal((2, 2, 3, 4, 5)), r.uniform(-1.3, 1.3, (2, 3, 2, 4, 3))
    m, p = MODES.index(mode), PADS.index(pad)
    compare(lambda a, g: tg.grid_sampler_3d(a, g, m, p, ac),
            lambda a, g: torch.grid_sampler_3d(a, g, m, p, ac), [x, grid])
    compare(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=ac),
            lambda a, g: TF.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=ac),
            [x, grid])


def test_grid_sample_size_one_and_gradcheck():
    r = rng(9)
    compare(lambda a, g: F.grid_sample(a, g, padding_mode="reflection", align_corners=True),
            lambda a, g: TF.grid_sample(a, g, padding_mode="reflection", align_corners=True),
            [r.standard_normal((1, 2, 1, 4)), r.uniform(-2, 2, (1, 3, 3, 2))])
    x = tg.tensor(r.standard_normal((1, 2, 3, 4)), requires_grad=True)
    g = tg.tensor(r.uniform(-0.9, 0.9, (1, 2, 3, 2)), requires_grad=True)
    for mode in ("bilinear", "bicubic"):
        assert tg.autograd.gradcheck(
            lambda a, b: F.grid_sample(a, b, mode=mode, align_corners=False), (x, g))


@pytest.mark.parametrize("size,ac", [((2, 3, 4, 5), False), ((2, 3, 4, 5), True),
                                     ((1, 1, 1, 3), True), ((2, 1, 3, 2, 4), False)])
def test_affine_grid(size, ac):
    theta = rng(10).standard_normal((size[0],) + ((2, 3) if len(size) == 4 else (3, 4)))
    compare(lambda t: F.affine_grid(t, size, align_corners=ac),
            lambda t: TF.affine_grid(t, size, align_corners=ac), [theta])


def test_grid_sample_errors():
    x, g = tg.randn(1, 2, 3, 4), tg.randn(1, 2, 2, 2)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(tg.randn(1, 1, 2, 2, 2), tg.randn(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, tg.randn(2, 2, 2, 2), align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.grid_sample(x, g)

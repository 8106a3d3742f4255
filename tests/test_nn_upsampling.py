"""F.interpolate and nn.Upsample / UpsamplingNearest2d / UpsamplingBilinear2d against
PyTorch 2.13: values and gradients for every mode (float64, float32), errors.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

from _nn_module_pairs import _grads_match


# ---- interpolate / Upsample ------------------------------------------------------------------
INTERP = [
    # (input shape, mode, kwargs)
    ((2, 3, 5), "nearest", dict(scale_factor=2)),
    ((2, 3, 5), "nearest", dict(size=8)),
    ((2, 3, 7), "nearest", dict(size=3)),
    ((2, 3, 4, 5), "nearest", dict(scale_factor=2)),
    ((2, 3, 4, 5), "nearest", dict(size=(7, 3))),
    ((2, 3, 4, 5), "nearest", dict(scale_factor=(1.7, 0.6))),
    ((2, 3, 4, 5), "nearest", dict(scale_factor=1.7, recompute_scale_factor=True)),
    ((1, 2, 3, 4, 2), "nearest", dict(scale_factor=2)),
    ((2, 3, 4, 5), "nearest-exact", dict(size=(7, 3))),
    ((2, 3, 5), "nearest-exact", dict(scale_factor=1.5)),
    ((2, 3, 5), "linear", dict(size=9)),
    ((2, 3, 5), "linear", dict(size=9, align_corners=True)),
    ((2, 3, 6), "linear", dict(scale_factor=0.5)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=2)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=2, align_corners=True)),
    ((2, 3, 4, 5), "bilinear", dict(size=(7, 3))),
    ((2, 3, 4, 5), "bilinear", dict(size=(7, 3), align_corners=True)),
    ((2, 3, 4, 5), "bilinear", dict(size=(1, 1), align_corners=True)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=(1.3, 2.5))),
    ((2, 3, 6, 6), "bilinear", dict(scale_factor=0.5)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=1.7, recompute_scale_factor=True)),
    ((1, 2, 3, 4, 2), "trilinear", dict(scale_factor=2)),
    ((1, 2, 3, 4, 2), "trilinear", dict(size=(2, 5, 3), align_corners=True)),
    ((2, 3, 4, 5), "bicubic", dict(scale_factor=2)),
    ((2, 3, 4, 5), "bicubic", dict(size=(7, 3), align_corners=True)),
    ((2, 3, 4, 5), "bicubic", dict(size=(3, 9))),
    ((2, 3, 6, 6), "bicubic", dict(scale_factor=0.5)),
    ((1, 1, 1, 5), "bicubic", dict(size=(4, 1), align_corners=True)),
    ((2, 3, 4, 5), "bicubic", dict(scale_factor=(1.3, 2.5))),
    ((2, 3, 7), "area", dict(size=3)),
    ((2, 3, 4, 5), "area", dict(size=(7, 3))),
    ((2, 3, 6, 7), "area", dict(scale_factor=0.5)),
    ((1, 2, 3, 4, 5), "area", dict(size=(2, 3, 2))),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate_matches_torch(case, dtype):
    shape, mode, kw = INTERP[case]
    x = np.random.default_rng(case).standard_normal(shape)
    _grads_match(lambda a: F.interpolate(a, mode=mode, **kw),
                 lambda a: TF.interpolate(a, mode=mode, **kw), x, dtype, f"interpolate {mode} {kw}")


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(size=(6, 7), mode="bilinear"),
                                dict(scale_factor=3, mode="bilinear", align_corners=True)])
def test_upsample_modules(kw):
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 4))
    ours, theirs = tg.nn.Upsample(**kw), torch.nn.Upsample(**kw)
    assert repr(ours) == repr(theirs)
    _grads_match(ours, theirs, x, np.float64, f"Upsample {kw}")
    _grads_match(tg.nn.UpsamplingNearest2d(scale_factor=2),
                 torch.nn.UpsamplingNearest2d(scale_factor=2), x, np.float64, "nearest2d")
    _grads_match(tg.nn.UpsamplingBilinear2d(size=(5, 9)),
                 torch.nn.UpsamplingBilinear2d(size=(5, 9)), x, np.float64, "bilinear2d")


def test_interpolate_errors():
    x = tg.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(tg.randn(1, 2, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.interpolate(tg.randn(1, 2, 4), scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=2, mode="area", align_corners=False)


@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_bicubic_uint8(align_corners):
    """Integer images: rounded to the nearest and saturated (cubic overshoot), as torch."""
    x = np.array([[[[0, 255, 0, 255], [255, 0, 255, 0], [0, 0, 255, 255],
                    [255, 255, 0, 0]]]], dtype=np.uint8)
    got = F.interpolate(tg.tensor(x), size=(7, 7), mode="bicubic", align_corners=align_corners)
    want = TF.interpolate(torch.tensor(x), size=(7, 7), mode="bicubic",
                          align_corners=align_corners)
    assert got.dtype == tg.uint8
    assert np.abs(got.numpy().astype(int) - want.numpy().astype(int)).max() <= 1


def test_interpolate_bicubic_gradcheck():
    x = tg.tensor(np.random.default_rng(5).standard_normal((1, 2, 3, 4)), requires_grad=True)
    assert tg.autograd.gradcheck(
        lambda a: F.interpolate(a, size=(5, 3), mode="bicubic", align_corners=False), (x,))
    assert tg.autograd.gradgradcheck(
        lambda a: F.interpolate(a, scale_factor=2, mode="bicubic", align_corners=True), (x,))
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 3, 4))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(9, 4), (3, 13), (10, 14)])
def test_uint8_bilinear_within_one_of_torch(size, align_corners):
    # computed in float32 and rounded (it was computed in uint8: weights 0 or 1, off by
    # up to 170); torch's uint8 kernel uses fixed-point weights, so a value may differ by 1
    x = torch.randint(0, 256, (2, 3, 5, 7), dtype=torch.uint8,
                      generator=torch.Generator().manual_seed(1))
    want = torch.nn.functional.interpolate(x, size=size, mode="bilinear",
                                           align_corners=align_corners)
    got = tg.nn.functional.interpolate(tg.tensor(x.numpy()), size=size, mode="bilinear",
                                       align_corners=align_corners)
    assert got.dtype == tg.uint8
    assert np.abs(got.numpy().astype(int) - want.numpy().astype(int)).max() <= 1


@pytest.mark.parametrize("dtype", ["int64", "int16", "int8", "uint8"])
@pytest.mark.parametrize("mode,nd", [("linear", 3), ("bilinear", 4), ("trilinear", 5),
                                     ("bicubic", 4)])
def test_integer_interpolation_refused_as_torch(dtype, mode, nd):
    # torch interpolates integers only for uint8 images (bilinear, bicubic)
    shape = (1,) * (nd - 1) + (3,)
    def run(L):
        return L.nn.functional.interpolate(L.ones(shape, dtype=getattr(L, dtype)),
                                           scale_factor=2, mode=mode)
    try:
        want = run(torch)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            run(tg)
        return
    assert tuple(run(tg).shape) == tuple(want.shape)

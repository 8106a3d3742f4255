"""Pooling of integer tensors against torch: avg_pool1d/2d/3d sum in int64 and divide once,
truncating toward zero (negative sums and negative divisor_override included), max_pool2d/3d
never select padding (signed and unsigned types), local_response_norm of integers.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", [np.int64])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=3, padding=1, count_include_pad=False),
                                dict(kernel_size=2, ceil_mode=True, stride=2),
                                dict(kernel_size=2, divisor_override=-3),
                                dict(kernel_size=(2, 3), divisor_override=4)])
def test_avg_pool2d_integers(kw, dtype):
    x = np.random.default_rng(1).integers(-50, 50, (2, 3, 5, 6)).astype(dtype)
    _same(F.avg_pool2d(tg.tensor(x), **kw), TF.avg_pool2d(torch.tensor(x), **kw))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=2, stride=1, padding=1, ceil_mode=True,
                                     count_include_pad=False, divisor_override=2),
                                dict(kernel_size=3, padding=1, count_include_pad=False)])
def test_avg_pool1d_3d_integers(kw):
    r = np.random.default_rng(2)
    x3 = r.integers(-50, 50, (2, 2, 4, 5, 5))
    _same(F.avg_pool3d(tg.tensor(x3), **kw), TF.avg_pool3d(torch.tensor(x3), **kw))
    x1 = r.integers(-50, 50, (2, 3, 7))
    kw1 = {k: v for k, v in kw.items() if k != "divisor_override"}
    _same(F.avg_pool1d(tg.tensor(x1), **kw1), TF.avg_pool1d(torch.tensor(x1), **kw1))


@pytest.mark.parametrize("dtype", [np.int16, np.int64, np.uint8, np.int8])
def test_max_pool_integers_with_padding(dtype):
    lo = 0 if dtype == np.uint8 else -100
    x = np.random.default_rng(3).integers(lo, 100, (2, 2, 5, 5)).astype(dtype)
    for kw in (dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, ceil_mode=True)):
        got, gi = F.max_pool2d(tg.tensor(x), return_indices=True, **kw)
        want, wi = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        _same(got, want)
        _same(gi, wi)
    x3 = np.random.default_rng(4).integers(lo, 100, (1, 2, 3, 4, 4)).astype(dtype)
    _same(F.max_pool3d(tg.tensor(x3), 3, 2, 1), TF.max_pool3d(torch.tensor(x3), 3, 2, 1))


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.int8, np.uint8, np.bool_])
def test_avg_pool_refuses_small_integers_as_torch(dtype):
    """torch's average-pool kernels exist for int64 only among the integer types."""
    from _helpers import assert_raises_as_torch
    for shape, name in (((1, 2, 4), "avg_pool1d"), ((1, 2, 4, 4), "avg_pool2d"),
                        ((1, 2, 4, 4, 4), "avg_pool3d")):
        x = np.ones(shape, dtype=dtype)
        assert_raises_as_torch(
            lambda m: getattr(m.nn.functional, name)(m.tensor(x), 2), tg)


def test_local_response_norm_integers():
    """int64 input: torch's result is float32 (its divisor is a float pow)."""
    x = np.random.default_rng(5).integers(-5, 5, (2, 4, 3, 3))
    got, want = F.local_response_norm(tg.tensor(x), 3), TF.local_response_norm(torch.tensor(x), 3)
    _same(got, want)

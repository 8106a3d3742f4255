"""torch.all / torch.any (whole tensor and along a dim, keepdim) and cumsum of integers
(int64, as torch) against torch; a bad dim refused as torch refuses it.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


RNG = np.random.default_rng(5)


A = RNG.standard_normal((3, 4))


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"dim": 1, "keepdim": True}, {"dim": -1}])
def test_all_any_match_torch(name, kw):
    for arr in (A > 0, A > -5, np.zeros((3, 4), bool), (A > 0).astype(np.int64)):
        ours = getattr(tg.tensor(arr), name)(**kw)
        ref = getattr(torch.tensor(arr), name)(**kw)
        assert ours.dtype == np.bool_ and tuple(ours.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())
        np.testing.assert_array_equal(getattr(tg, name)(tg.tensor(arr), **kw).numpy(),
                                      ref.numpy())


def test_all_any_bad_dim():
    with pytest.raises(IndexError):
        tg.tensor(A).all(dim=2)


def test_cumsum_of_ints_is_int64_like_torch():
    arr = np.array([[True, False], [True, True]])
    ours, ref = tg.tensor(arr).cumsum(0), torch.tensor(arr).cumsum(0)
    assert ours.dtype == np.int64 and ref.dtype == torch.int64
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())

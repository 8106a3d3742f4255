"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d against torch with the same
`_random_samples` (the generators differ, so the samples are passed to both): values,
indices and gradients (float64, float32), output_size and output_ratio, unbatched input,
gradcheck, errors.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F

from _nn_compare import compare, rng


CASES2 = [((1, 3, 9, 9), 3, dict(output_size=2)), ((2, 3, 9, 9), (4, 4), dict(output_size=(2, 3))),
          ((1, 2, 10, 7), (2, 3), dict(output_ratio=(0.5, 0.6))),
          ((3, 6, 6), 2, dict(output_size=(5, 3))), ((1, 1, 4, 4), 2, dict(output_size=3))]
CASES3 = [((2, 3, 5, 5, 5), (2, 2, 2), dict(output_size=2)),
          ((1, 2, 6, 5, 7), (2, 3, 2), dict(output_size=(3, 2, 4))),
          ((2, 5, 6, 7), 2, dict(output_ratio=0.5))]


def _samples(shape, nd, seed):
    n = 1 if len(shape) == nd + 1 else shape[0]
    return rng(seed).random((n, shape[-nd - 1], nd))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nd,case", [(2, c) for c in CASES2] + [(3, c) for c in CASES3])
def test_fractional_max_pool_matches_torch(nd, case, dtype):
    shape, k, kw = case
    s = _samples(shape, nd, 1)
    f, tf = (F.fractional_max_pool2d, TF.fractional_max_pool2d) if nd == 2 else \
        (F.fractional_max_pool3d, TF.fractional_max_pool3d)
    compare(lambda a, u: f(a, k, _random_samples=u, **kw),
            lambda a, u: tf(a, k, _random_samples=u, **kw),
            [rng(2).standard_normal(shape), s], dtype, grad=(True, False))
    x = rng(2).standard_normal(shape).astype(dtype)
    _, i = f(tg.tensor(x), k, return_indices=True, _random_samples=tg.tensor(s.astype(dtype)),
             **kw)
    _, ti = tf(torch.tensor(x), k, return_indices=True,
               _random_samples=torch.tensor(s.astype(dtype)), **kw)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert i.dtype == tg.int64


def test_fractional_max_pool_modules_and_gradcheck():
    s = _samples((2, 3, 9, 9), 2, 3)
    x = rng(4).standard_normal((2, 3, 9, 9))
    ours = nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=tg.tensor(s))
    theirs = torch.nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=torch.tensor(s))
    np.testing.assert_allclose(ours(tg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
    assert repr(ours) == repr(theirs)
    xs = tg.tensor(x[:1, :1], requires_grad=True)
    assert tg.autograd.gradcheck(
        lambda a: F.fractional_max_pool2d(a, 2, output_size=4,
                                          _random_samples=tg.tensor(s[:1, :1])), (xs,))
    # no samples given: random windows, still the right shape
    assert tuple(nn.FractionalMaxPool3d(2, output_size=(2, 3, 2))(
        tg.randn(2, 3, 5, 5, 5)).shape) == (2, 3, 2, 3, 2)


def test_fractional_max_pool_errors():
    x = tg.randn(1, 2, 5, 5)
    with pytest.raises(ValueError, match="requires specifying either"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        F.fractional_max_pool2d(x, 3, output_size=4)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5)

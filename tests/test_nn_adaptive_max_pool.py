"""F.adaptive_max_pool1d/2d and their modules against torch: values, indices and gradients
(float64, float32), ties, gradcheck, errors.
"""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F

from _helpers import assert_raises_as_torch
from _nn_compare import compare, rng


DTYPES = [np.float64, np.float32]


# ---- adaptive max pooling ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,out", [((2, 3, 9), 4), ((3, 9), 9), ((2, 3, 5), 8), ((2, 7), 1),
                                       ((1, 2, 10), (3,))])
def test_adaptive_max_pool1d(shape, out, dtype):
    x = rng(30).standard_normal(shape)
    compare(lambda a: F.adaptive_max_pool1d(a, out), lambda a: TF.adaptive_max_pool1d(a, out),
            [x], dtype)
    _, i = F.adaptive_max_pool1d(tg.tensor(x), out, return_indices=True)
    _, ti = TF.adaptive_max_pool1d(torch.tensor(x), out, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert i.dtype == tg.int64


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,out", [((2, 3, 7, 9), (3, 4)), ((3, 7, 9), 7),
                                       ((2, 3, 5, 4), (8, 6)), ((1, 2, 6, 6), (None, 2)),
                                       ((2, 4, 5), (1, None)), ((1, 1, 6, 5), 1)])
def test_adaptive_max_pool2d(shape, out, dtype):
    x = rng(31).standard_normal(shape)
    compare(lambda a: F.adaptive_max_pool2d(a, out), lambda a: TF.adaptive_max_pool2d(a, out),
            [x], dtype)
    _, i = F.adaptive_max_pool2d(tg.tensor(x), out, return_indices=True)
    _, ti = TF.adaptive_max_pool2d(torch.tensor(x), out, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


def test_adaptive_max_pool_ties():
    # ReLU-style ties: the gradient goes to the first maximum in torch's scan order
    x = np.maximum(rng(32).standard_normal((2, 3, 6, 7)), 0.0).round(0)
    for out in ((2, 3), (4, 5)):
        compare(lambda a: F.adaptive_max_pool2d(a, out),
                lambda a: TF.adaptive_max_pool2d(a, out), [x])
    compare(lambda a: F.adaptive_max_pool1d(a, 4), lambda a: TF.adaptive_max_pool1d(a, 4),
            [x[0, :, 0]])


@pytest.mark.parametrize("cls,out,shape", [("AdaptiveMaxPool1d", 3, (2, 3, 8)),
                                           ("AdaptiveMaxPool2d", (3, None), (2, 3, 8, 5)),
                                           ("AdaptiveMaxPool2d", 2, (3, 8, 5))])
def test_adaptive_max_pool_modules(cls, out, shape):
    m, tm = getattr(nn, cls)(out), getattr(tnn, cls)(out)
    assert repr(m) == repr(tm)
    compare(m, tm, [rng(33).standard_normal(shape)])
    m, tm = getattr(nn, cls)(out, return_indices=True), getattr(tnn, cls)(out, True)
    x = rng(34).standard_normal(shape)
    (v, i), (tv, ti) = m(tg.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    np.testing.assert_array_equal(v.numpy(), tv.numpy())


def test_adaptive_max_pool_gradcheck():
    x = tg.tensor(rng(35).standard_normal((1, 2, 5, 7)), requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: F.adaptive_max_pool2d(a, (3, 4)), (x,))
    assert tg.autograd.gradcheck(lambda a: F.adaptive_max_pool1d(a[0], 3), (x,))


AMP_ERRORS = {
    "1d rank 1": lambda L: L.nn.functional.adaptive_max_pool1d(L.ones(5), 2),
    "1d rank 4": lambda L: L.nn.functional.adaptive_max_pool1d(L.ones(1, 2, 3, 5), 2),
    "1d two sizes": lambda L: L.nn.functional.adaptive_max_pool1d(L.ones(2, 5), (2, 3)),
    "2d rank 2": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 5), 2),
    "2d rank 5": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(1, 2, 3, 4, 5), 2),
    "2d empty": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 0, 5), 2),
}


@pytest.mark.parametrize("case", sorted(AMP_ERRORS))
def test_adaptive_max_pool_errors(case):
    assert_raises_as_torch(AMP_ERRORS[case], tg, 60)

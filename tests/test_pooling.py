"""Pooling primitives vs PyTorch: max_pool2d (gradient routing with ties and overlapping
windows), avg_pool2d (padding counted or not, ceil_mode, divisor_override),
adaptive_avg_pool2d, and the 1-D variants; float64 gradcheck / gradgradcheck."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tapegrad as tg
from tapegrad.autograd.gradcheck import gradcheck, gradgradcheck
import tapegrad.nn.functional as F
from tapegrad.ops.rules import conv as K

from _convcheck import compare

MAX_CASES = [
    ((2, 3, 8, 9), dict(kernel_size=2)),
    ((2, 2, 7, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 3, 9, 8), dict(kernel_size=(3, 2), stride=1, padding=1, dilation=2)),   # overlap
    ((2, 2, 6, 7), dict(kernel_size=3, stride=1, padding=1)),
    ((1, 2, 10, 11), dict(kernel_size=(2, 4), stride=(3, 2), padding=(1, 2))),
    ((3, 7, 7), dict(kernel_size=2, stride=2, ceil_mode=True)),                  # unbatched
    ((1, 2, 34, 33), dict(kernel_size=17, stride=3, padding=2)),   # > 255 kernel offsets
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,kw", MAX_CASES)
def test_max_pool2d_matches_torch(shape, kw, dtype):
    x = np.random.default_rng(0).standard_normal(shape)
    compare(lambda a: F.max_pool2d(a, **kw), lambda a: TF.max_pool2d(a, **kw), [x], dtype)


@pytest.mark.parametrize("shape,kw", MAX_CASES)
def test_max_pool2d_ties_route_like_torch(shape, kw):
    # Few distinct values: many windows have several maxima; the first one wins and
    # overlapping windows add their gradients to the same pixel.
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, shape).astype(np.float64)
    compare(lambda a: F.max_pool2d(a, **kw), lambda a: TF.max_pool2d(a, **kw), [x])
    compare(lambda a: F.max_pool2d(a, **kw), lambda a: TF.max_pool2d(a, **kw),
            [np.zeros(shape)])


def test_max_pool2d_return_indices_and_nan():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 4, (2, 3, 7, 8)).astype(np.float64)
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    y, i = F.max_pool2d(tg.tensor(x), return_indices=True, **kw)
    yt, it = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    assert i.dtype == tg.int64
    x[0, 0, 2, 2] = np.nan
    x[1, 2, 0, 1] = np.nan
    x[1, 2, 1, 1] = np.nan
    compare(lambda a: F.max_pool2d(a, **kw), lambda a: TF.max_pool2d(a, **kw), [x])


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_max_pool2d_random_configurations(data):
    d = data.draw
    kh, kw = d(st.integers(1, 4)), d(st.integers(1, 4))
    dh, dw = d(st.integers(1, 2)), d(st.integers(1, 2))
    ph, pw = d(st.integers(0, kh // 2)), d(st.integers(0, kw // 2))
    sh, sw = d(st.integers(1, 3)), d(st.integers(1, 3))
    H = d(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 9))
    W = d(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 9))
    kw_ = dict(kernel_size=(kh, kw), stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw),
               ceil_mode=d(st.booleans()))
    rng = np.random.default_rng(d(st.integers(0, 2 ** 16)))
    x = rng.integers(-2, 3, (2, 2, H, W)).astype(np.float64)      # ties on purpose
    oh, ow = TF.max_pool2d(torch.tensor(x), **kw_).shape[2:]
    # A dilated window can hold padding only; PyTorch's backward then writes to an index
    # outside the plane (undefined): such configurations are tested separately below.
    assume((K._first_inside(oh, sh, ph, dh, kh, H) >= 0).all()
           and (K._first_inside(ow, sw, pw, dw, kw, W) >= 0).all())
    compare(lambda a: F.max_pool2d(a, **kw_), lambda a: TF.max_pool2d(a, **kw_), [x])


def test_max_pool2d_window_of_padding_only_drops_its_gradient():
    # kernel width 2 with dilation 2 and padding 1 on a width-1 image: the window's two
    # cells are both padding -> output -inf (as torch), no gradient reaches the input.
    x = tg.tensor([[[[1.5]], [[-2.0]]]], requires_grad=True)
    kw = dict(kernel_size=(1, 2), stride=1, padding=(0, 1), dilation=(1, 2))
    y = F.max_pool2d(x, **kw)
    yt = TF.max_pool2d(torch.tensor(x.detach().numpy()), **kw)
    np.testing.assert_array_equal(y.detach().numpy(), yt.numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((1, 2, 1, 1)))
    # windows of real -inf cells next to padding: the gradient goes to the first real cell
    x = np.full((1, 1, 3, 3), -np.inf)
    x[0, 0, 2, 2] = 1.0
    compare(lambda a: F.max_pool2d(a, 2, 1, 1), lambda a: TF.max_pool2d(a, 2, 1, 1), [x])



@pytest.mark.parametrize("dtype", [torch.int16, torch.int64, torch.uint8, torch.int8])
@pytest.mark.parametrize("shape,kw", MAX_CASES)
def test_max_pool_integer_inputs_pad_with_the_lowest_value(shape, kw, dtype):
    # padded cells must lose to every real value: -inf has no integer form, so NumPy's
    # cast of -inf to int gave padding a real (sometimes winning) value
    lo = 0 if dtype == torch.uint8 else -100
    xt = torch.randint(lo, 100, shape, dtype=dtype)
    got = F.max_pool2d(tg.tensor(xt.numpy()), **kw)
    want = TF.max_pool2d(xt, **kw)
    assert got.dtype == getattr(tg, str(dtype).split(".")[1])
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if len(shape) == 4:
        x5 = xt.unsqueeze(2).expand(-1, -1, 3, -1, -1).contiguous()
        kw3 = dict(kernel_size=(2,) + tuple(np.broadcast_to(kw["kernel_size"], 2)),
                   padding=(1, 1, 1) if kw.get("padding", 0) else 0)
        np.testing.assert_array_equal(F.max_pool3d(tg.tensor(x5.numpy()), **kw3).numpy(),
                                      TF.max_pool3d(x5, **kw3).numpy())

AVG_CASES = [
    ((2, 3, 8, 9), dict(kernel_size=2)),
    ((2, 2, 7, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((2, 2, 7, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        count_include_pad=False)),
    ((1, 3, 6, 8), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0))),
    ((1, 2, 6, 7), dict(kernel_size=3, stride=1, padding=1, divisor_override=4)),
    ((1, 2, 5, 5), dict(kernel_size=2, stride=3, padding=1, ceil_mode=True)),
    ((3, 6, 6), dict(kernel_size=2)),                                            # unbatched
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,kw", AVG_CASES)
def test_avg_pool2d_matches_torch(shape, kw, dtype):
    x = np.random.default_rng(3).standard_normal(shape)
    compare(lambda a: F.avg_pool2d(a, **kw), lambda a: TF.avg_pool2d(a, **kw), [x], dtype)


ADAPTIVE_CASES = [((2, 3, 8, 8), 1), ((2, 3, 7, 9), (3, 4)), ((1, 2, 6, 5), (None, 2)),
                  ((1, 2, 3, 3), 5), ((3, 7, 6), (2, 3))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,size", ADAPTIVE_CASES)
def test_adaptive_avg_pool2d_matches_torch(shape, size, dtype):
    x = np.random.default_rng(4).standard_normal(shape)
    compare(lambda a: F.adaptive_avg_pool2d(a, size),
            lambda a: TF.adaptive_avg_pool2d(a, size), [x], dtype)


def test_pool1d_variants_match_torch():
    x = np.random.default_rng(5).standard_normal((2, 3, 11))
    compare(lambda a: F.max_pool1d(a, 3, 2, 1), lambda a: TF.max_pool1d(a, 3, 2, 1), [x])
    compare(lambda a: F.avg_pool1d(a, 3, 2, 1, count_include_pad=False),
            lambda a: TF.avg_pool1d(a, 3, 2, 1, count_include_pad=False), [x])
    compare(lambda a: F.adaptive_avg_pool1d(a, 4), lambda a: TF.adaptive_avg_pool1d(a, 4), [x])


def _separated(rng, shape):
    n = int(np.prod(shape))
    return ((rng.permutation(n) + 1) * 0.0731 * rng.choice([-1.0, 1.0], n)).reshape(shape)


@pytest.mark.parametrize("fn", [
    lambda a: F.max_pool2d(a, 3, 2, 1, ceil_mode=True),
    lambda a: F.max_pool2d(a, (2, 3), 1, 1, dilation=(2, 1)),
    lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda a: F.avg_pool2d(a, (2, 3), (1, 2), (1, 0)),
    lambda a: F.adaptive_avg_pool2d(a, (3, 2)),
], ids=["max", "max-dilated", "avg-exclude-pad", "avg", "adaptive"])
def test_pool_gradcheck_and_gradgradcheck(fn):
    x = tg.tensor(_separated(np.random.default_rng(6), (2, 2, 5, 6)), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pool_errors_like_torch():
    x = np.zeros((1, 2, 4, 4))
    for fn in [lambda L: L.max_pool2d(x_[L], 2, padding=2),
               lambda L: L.avg_pool2d(x_[L], 2, padding=2),
               lambda L: L.max_pool2d(x_[L], 5)]:
        x_ = {F: tg.tensor(x), TF: torch.tensor(x)}
        with pytest.raises(RuntimeError):
            fn(TF)
        with pytest.raises(RuntimeError):
            fn(F)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.nn.functional.max_pool2d(x, 2, 1),
    lambda L, x: L.nn.functional.avg_pool2d(x, 2, 1, 1),
    lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 3),
    lambda L, x: L.nn.functional.conv2d(x, L.ones(4, 3, 2, 2, dtype=L.float64), stride=2,
                                        padding=1),
    lambda L, x: L.nn.functional.unfold(x, 2),
], ids=["max", "avg", "adaptive", "conv2d", "unfold"])
def test_non_contiguous_and_empty_batch_inputs(fn):
    a = np.random.default_rng(7).standard_normal((2, 6, 7, 3))
    # a permuted (non-contiguous) view as input
    compare(lambda t: fn(tg, t.permute(0, 3, 1, 2)), lambda t: fn(torch, t.permute(0, 3, 1, 2)),
            [a])
    # an empty batch
    x, xt = tg.zeros(0, 3, 6, 7, dtype=tg.float64, requires_grad=True), \
        torch.zeros(0, 3, 6, 7, dtype=torch.float64, requires_grad=True)
    y, yt = fn(tg, x), fn(torch, xt)
    assert tuple(y.shape) == tuple(yt.shape)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 6, 7)

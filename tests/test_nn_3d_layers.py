"""The 3-d layers vs PyTorch: F.conv3d / conv_transpose3d, max/avg/adaptive 3-d pools
(with return_indices), BatchNorm3d, InstanceNorm3d, Dropout1d/3d, AlphaDropout,
FeatureAlphaDropout, max_pool1d(return_indices=True), and output_padding below the
dilation for the transposed convolutions.

Values and gradients (float64 tight, float32 loose) over strides, paddings ('same' with
even kernels), dilations, groups, ceil_mode, unbatched input and ties (integer-valued
inputs, where the gradient must go to torch's first maximum); float64 gradcheck through
the composition; module reprs and torch's error types. Dropout masks come from different
generators, so dropout is checked by its rule (kept values scaled, dropped values torch's
constants, whole channels) and its statistics.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F
from tapegrad.autograd.gradcheck import gradcheck

from _convcheck import compare

# (x shape, w shape, kwargs)
CONV3D_CASES = [
    ((2, 4, 7, 6, 5), (6, 4, 3, 2, 2), {}),
    ((2, 4, 7, 6, 5), (6, 4, 3, 3, 3), dict(stride=2)),
    ((1, 4, 6, 6, 6), (3, 4, 3, 2, 2), dict(padding=1, dilation=(2, 1, 1))),
    ((2, 4, 7, 6, 5), (6, 2, 3, 2, 2), dict(groups=2, stride=(1, 2, 3), padding=(2, 1, 0))),
    ((2, 3, 6, 5, 7), (4, 3, 2, 3, 4), dict(padding="same", dilation=(1, 2, 3))),  # even k
    ((2, 3, 4, 4, 4), (2, 3, 4, 4, 4), dict(padding="valid")),  # kernel = volume -> 1x1x1
    ((4, 5, 6, 5), (3, 4, 2, 2, 2), {}),  # unbatched
    ((0, 2, 3, 3, 3), (2, 2, 2, 2, 2), {}),  # empty batch
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV3D_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv3d_matches_torch(case, bias, dtype):
    xs, ws, kw = case
    rng = np.random.default_rng(0)
    if len(xs) == 4:  # unbatched: (C, D, H, W) with weight (O, C, ...)
        xs = (ws[1],) + xs[1:]
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if bias:
        arrays.append(rng.standard_normal(ws[0]))
    compare(lambda *a: F.conv3d(*a, **kw), lambda *a: TF.conv3d(*a, **kw), arrays, dtype)


CONVT3D_CASES = [
    ((2, 4, 3, 4, 3), (4, 3, 3, 2, 2), {}),
    ((2, 4, 3, 4, 3), (4, 3, 3, 2, 2), dict(stride=2)),
    ((2, 4, 3, 4, 3), (4, 3, 3, 2, 2), dict(stride=(2, 3, 2), padding=1,
                                            output_padding=(1, 2, 0))),
    ((2, 4, 3, 4, 3), (4, 2, 3, 2, 2), dict(groups=2, dilation=(2, 1, 2), padding=(1, 0, 1))),
    # output_padding >= stride, allowed below the dilation (torch's rule)
    ((2, 2, 3, 4, 3), (2, 3, 2, 3, 2), dict(stride=(2, 1, 2), output_padding=(2, 1, 3),
                                            dilation=(3, 2, 4), padding=(1, 0, 2))),
    ((4, 3, 2, 3), (4, 2, 2, 2, 2), dict(stride=2)),  # unbatched
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONVT3D_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv_transpose3d_matches_torch(case, bias, dtype):
    xs, ws, kw = case
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if bias:
        arrays.append(rng.standard_normal(ws[1] * kw.get("groups", 1)))
    compare(lambda *a: F.conv_transpose3d(*a, **kw), lambda *a: TF.conv_transpose3d(*a, **kw),
            arrays, dtype)


def test_conv_transpose2d_output_padding_below_dilation():
    rng = np.random.default_rng(2)
    kw = dict(stride=(2, 1), output_padding=(2, 1), dilation=(3, 2), padding=(1, 0))
    compare(lambda *a: F.conv_transpose2d(*a, **kw), lambda *a: TF.conv_transpose2d(*a, **kw),
            [rng.standard_normal((2, 2, 4, 3)), rng.standard_normal((2, 3, 3, 2))])
    x, w = tg.randn(1, 1, 3, 3), tg.randn(1, 1, 2, 2)
    with pytest.raises(RuntimeError, match="smaller than either stride or dilation"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2, dilation=2)
    with pytest.raises(RuntimeError, match="smaller than either stride or dilation"):
        F.conv_transpose3d(tg.randn(1, 1, 2, 2, 2), tg.randn(1, 1, 2, 2, 2), stride=2,
                           output_padding=2)


def test_conv3d_gradcheck():
    rng = np.random.default_rng(3)
    x = tg.tensor(rng.standard_normal((1, 2, 4, 3, 3)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((2, 1, 2, 2, 2)), requires_grad=True)
    b = tg.tensor(rng.standard_normal(2), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=1, groups=2),
                     (x, w, b))
    wt = tg.tensor(rng.standard_normal((2, 1, 2, 2, 2)), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=(1, 0, 0),
                                                     output_padding=1, groups=2), (x, wt))


def test_conv3d_errors_as_torch():
    x, w = tg.randn(2, 3, 4, 4, 4), tg.randn(4, 2, 2, 2, 2)
    with pytest.raises(RuntimeError, match="expected input\\[2, 3, 4, 4, 4\\] to have 2 "):
        F.conv3d(x, w)
    with pytest.raises(RuntimeError):
        TF.conv3d(torch.randn(2, 3, 4, 4, 4), torch.randn(4, 2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv3d(tg.randn(1, 1, 2, 5, 5), tg.randn(1, 1, 3, 3, 3))
    with pytest.raises(RuntimeError, match="not supported for strided"):
        F.conv3d(x, tg.randn(4, 3, 2, 2, 2), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="expected 4D \\(unbatched\\) or 5D"):
        F.conv3d(tg.randn(3, 4, 4), w)


def _ints(rng, shape):  # many ties: the gradient must pick torch's first maximum
    return rng.integers(0, 3, shape).astype(np.float64)


MAX3D_KW = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
            dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), dilation=(2, 1, 1), ceil_mode=True),
            dict(kernel_size=(2, 3, 1), stride=1, padding=(1, 1, 0), ceil_mode=True)]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kw", MAX3D_KW)
def test_max_pool3d_matches_torch_with_indices(kw, ties):
    rng = np.random.default_rng(4)
    x = _ints(rng, (2, 3, 7, 6, 5)) if ties else rng.standard_normal((2, 3, 7, 6, 5))
    compare(lambda a: F.max_pool3d(a, **kw), lambda a: TF.max_pool3d(a, **kw), [x])
    y, i = F.max_pool3d(tg.tensor(x), return_indices=True, **kw)
    yt, it = TF.max_pool3d(torch.tensor(x), return_indices=True, **kw)
    assert i.dtype == tg.int64
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    m, mt = nn.MaxPool3d(return_indices=True, **kw), torch.nn.MaxPool3d(return_indices=True, **kw)
    assert repr(m) == repr(mt)
    np.testing.assert_array_equal(m(tg.tensor(x[0]))[1].numpy(), mt(torch.tensor(x[0]))[1].numpy())


AVG3D_KW = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
            dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
            dict(kernel_size=(3, 2, 3), divisor_override=5, padding=(1, 1, 0)),
            dict(kernel_size=(2, 2, 3), stride=(1, 3, 2), ceil_mode=True)]


@pytest.mark.parametrize("kw", AVG3D_KW)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_avg_pool3d_matches_torch(kw, dtype):
    x = np.random.default_rng(5).standard_normal((2, 3, 7, 6, 5))
    compare(lambda a: F.avg_pool3d(a, **kw), lambda a: TF.avg_pool3d(a, **kw), [x], dtype)
    compare(lambda a: nn.AvgPool3d(**kw)(a), lambda a: torch.nn.AvgPool3d(**kw)(a), [x[0]],
            dtype)
    assert repr(nn.AvgPool3d(**kw)) == repr(torch.nn.AvgPool3d(**kw))


@pytest.mark.parametrize("out", [1, 3, (4, None, 2), (7, 6, 5), (2, 4, 3)])
def test_adaptive_pools_3d_match_torch(out):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 7, 6, 5))
    compare(lambda a: F.adaptive_avg_pool3d(a, out), lambda a: TF.adaptive_avg_pool3d(a, out),
            [x])
    xi = _ints(rng, (2, 3, 7, 6, 5))
    compare(lambda a: F.adaptive_max_pool3d(a, out), lambda a: TF.adaptive_max_pool3d(a, out),
            [xi])
    _, i = F.adaptive_max_pool3d(tg.tensor(xi), out, return_indices=True)
    _, it = TF.adaptive_max_pool3d(torch.tensor(xi), out, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    for ours, theirs in ((nn.AdaptiveAvgPool3d(out), torch.nn.AdaptiveAvgPool3d(out)),
                         (nn.AdaptiveMaxPool3d(out), torch.nn.AdaptiveMaxPool3d(out))):
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(tg.tensor(x[0])).numpy(),
                                   theirs(torch.tensor(x[0])).numpy(), rtol=1e-12)


def test_pools_3d_gradcheck():
    x = tg.tensor(np.random.default_rng(7).standard_normal((1, 2, 4, 5, 3)),
                  requires_grad=True)
    assert gradcheck(lambda a: F.avg_pool3d(a, 2, stride=1, padding=1,
                                            count_include_pad=False), (x,))
    assert gradcheck(lambda a: F.max_pool3d(a, 2, stride=1), (x,))
    assert gradcheck(lambda a: F.adaptive_avg_pool3d(a, (3, 2, 2)), (x,))


def test_max_pool1d_return_indices():
    rng = np.random.default_rng(8)
    x = _ints(rng, (2, 3, 11))
    for kw in (dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1, dilation=2,
                                         ceil_mode=True)):
        y, i = F.max_pool1d(tg.tensor(x), return_indices=True, **kw)
        yt, it = TF.max_pool1d(torch.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(y.numpy(), yt.numpy())
        np.testing.assert_array_equal(i.numpy(), it.numpy())
        y, i = nn.MaxPool1d(return_indices=True, **kw)(tg.tensor(x[0]))
        yt, it = torch.nn.MaxPool1d(return_indices=True, **kw)(torch.tensor(x[0]))
        np.testing.assert_array_equal(i.numpy(), it.numpy())


@pytest.mark.parametrize("training", [True, False])
def test_batchnorm3d_matches_torch(training):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 4, 5, 2, 3))
    m, mt = nn.BatchNorm3d(4).double(), torch.nn.BatchNorm3d(4).double()
    mt.running_mean.uniform_(-1, 1)
    m.load_state_dict({k: tg.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    m.train(training), mt.train(training)
    assert repr(m) == repr(mt)
    compare(m, mt, [x])
    np.testing.assert_allclose(m.running_var.numpy(), mt.running_var.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="expected 5D input"):
        m(tg.randn(2, 4, 3, 3))


@pytest.mark.parametrize("affine,track", [(False, False), (True, True)])
def test_instancenorm3d_matches_torch(affine, track):
    rng = np.random.default_rng(10)
    m = nn.InstanceNorm3d(4, affine=affine, track_running_stats=track).double()
    mt = torch.nn.InstanceNorm3d(4, affine=affine, track_running_stats=track).double()
    assert repr(m) == repr(mt)
    for x in (rng.standard_normal((3, 4, 5, 2, 3)), rng.standard_normal((4, 5, 2, 3))):
        compare(m, mt, [x])
    if track:
        np.testing.assert_allclose(m.running_mean.numpy(), mt.running_mean.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="expected 4D or 5D input"):
        m(tg.randn(2, 4, 3))


def test_channel_dropout_drops_whole_channels():
    tg.manual_seed(0)
    x = tg.ones(64, 16, 3, 2, 2)
    y = F.dropout3d(x, p=0.25).numpy()
    per = y.reshape(64, 16, -1)
    assert set(np.unique(per)) <= {np.float32(0.0), np.float32(1 / 0.75)}
    assert (per.min(-1) == per.max(-1)).all()  # a channel is kept or dropped whole
    assert abs((per[..., 0] == 0).mean() - 0.25) < 0.05
    y1 = F.dropout1d(tg.ones(64, 16, 5), p=0.5).numpy()
    assert (y1.min(-1) == y1.max(-1)).all() and abs((y1[..., 0] == 0).mean() - 0.5) < 0.05
    assert F.dropout1d(tg.ones(16, 5), 0.5).shape == (16, 5)  # unbatched
    assert F.dropout3d(tg.ones(4, 3, 2, 2), 0.5).shape == (4, 3, 2, 2)
    assert np.array_equal(F.dropout3d(x, 0.5, training=False).numpy(), x.numpy())
    assert not F.dropout1d(tg.ones(3, 5), 1.0).numpy().any()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(tg.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout3d(x, 1.5)
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        F.dropout3d(tg.ones(2, 3, 4))
    # the gradient is the mask: zero where dropped, 1/(1-p) where kept
    xg = tg.ones(8, 6, 4, requires_grad=True)
    y = F.dropout1d(xg, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), y.detach().numpy())


def test_alpha_dropout_rule_and_statistics():
    tg.manual_seed(1)
    p = 0.2
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    x = tg.randn(200000, dtype=tg.float64)
    y = F.alpha_dropout(x, p, training=True).numpy()
    xn = x.numpy()
    dropped_value = -alpha * a + alpha * a * p  # torch's b where the mask is 0
    dropped = np.isclose(y, dropped_value)
    np.testing.assert_allclose(y[~dropped], a * xn[~dropped] + alpha * a * p, rtol=1e-12)
    assert abs(dropped.mean() - p) < 0.01
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02  # self-normalizing
    assert np.array_equal(F.alpha_dropout(x, p).numpy(), xn)  # training=False by default
    yf = F.feature_alpha_dropout(tg.randn(50, 40, 6), 0.5, training=True).numpy()
    kept = ~np.isclose(yf, -alpha / np.sqrt((alpha ** 2 * 0.5 + 1) * 0.5) * 0.5)
    assert (kept.all(-1) | ~kept.any(-1)).all()  # whole channels
    assert F.alpha_dropout(tg.tensor(2.0, dtype=tg.float16), 0.5, True).dtype == tg.float16
    assert repr(nn.AlphaDropout(0.3)) == repr(torch.nn.AlphaDropout(0.3))
    assert repr(nn.FeatureAlphaDropout()) == repr(torch.nn.FeatureAlphaDropout())
    assert repr(nn.Dropout1d(0.1)) == repr(torch.nn.Dropout1d(0.1))
    assert repr(nn.Dropout3d()) == repr(torch.nn.Dropout3d())
    m = nn.AlphaDropout(0.5).eval()
    assert np.array_equal(m(x).numpy(), xn)


def test_conv3d_modules_match_torch():
    tg.manual_seed(0)
    for ours, theirs, shape in (
            (nn.Conv3d(4, 6, (3, 2, 2), stride=(2, 1, 1), padding=1, groups=2, bias=False),
             torch.nn.Conv3d(4, 6, (3, 2, 2), stride=(2, 1, 1), padding=1, groups=2,
                             bias=False), (2, 4, 5, 4, 4)),
            (nn.Conv3d(2, 3, 3, padding=1, padding_mode="circular"),
             torch.nn.Conv3d(2, 3, 3, padding=1, padding_mode="circular"), (1, 2, 4, 4, 4)),
            (nn.ConvTranspose3d(4, 2, 3, stride=2, output_padding=1),
             torch.nn.ConvTranspose3d(4, 2, 3, stride=2, output_padding=1), (2, 4, 2, 3, 2))):
        assert repr(ours) == repr(theirs)
        ours.double(), theirs.double()
        ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in
                              theirs.state_dict().items()})
        x = np.random.default_rng(11).standard_normal(shape)
        compare(ours, theirs, [x])
        # the default initialisation's bound: 1/sqrt(fan_in)
        fan_in = np.prod(ours.weight.shape[1:])
        assert np.abs(nn.Conv3d(4, 6, 3).weight.detach().numpy()).max() <= 1 / np.sqrt(4 * 27)
        assert fan_in > 0
    m = nn.ConvTranspose3d(2, 3, 3, stride=2).double()
    mt = torch.nn.ConvTranspose3d(2, 3, 3, stride=2).double()
    m.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    x = np.random.default_rng(12).standard_normal((1, 2, 3, 3, 3))
    assert m(tg.tensor(x), output_size=(8, 8, 7)).shape == \
        mt(torch.tensor(x), output_size=(8, 8, 7)).shape

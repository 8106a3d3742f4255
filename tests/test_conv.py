"""Convolution primitives vs PyTorch: conv2d, conv1d, unfold/fold, pad modes.

Values and gradients (float64 tight, float32 loose) for odd sizes, strides, paddings
('same'/'valid' too), dilations, groups, with and without bias; float64 gradcheck and
gradgradcheck; grad-of-grad vs PyTorch; error cases.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import tapegrad as tg
from tapegrad.autograd.gradcheck import gradcheck, gradgradcheck
import tapegrad.nn.functional as F

from _convcheck import compare

# (x shape, w shape, stride, padding, dilation, groups, bias)
CONV2D_CASES = [
    ((2, 3, 7, 9), (4, 3, 3, 3), 1, 0, 1, 1, True),
    ((2, 3, 7, 9), (4, 3, 3, 2), (2, 1), (1, 2), 1, 1, False),
    ((1, 4, 8, 7), (6, 2, 3, 3), 2, 1, (2, 1), 2, True),
    ((3, 4, 6, 5), (4, 1, 3, 3), 1, "same", 1, 4, True),          # depthwise
    ((2, 2, 9, 6), (3, 2, 2, 4), 1, "same", (2, 1), 1, True),     # even kernel: asymmetric
    ((2, 3, 5, 5), (2, 3, 5, 5), 1, "valid", 1, 1, True),         # kernel = image -> 1x1
    ((2, 6, 11, 10), (6, 2, 3, 3), 3, 2, 2, 3, False),
    ((2, 5, 4, 4), (3, 5, 1, 1), 1, 0, 1, 1, True),               # 1x1 conv
    ((1, 2, 10, 10), (3, 2, 2, 2), 3, 0, 1, 1, True),             # stride > kernel
    ((3, 7, 7), (2, 3, 3, 3), 1, 1, 1, 1, True),                  # unbatched input
]


def _conv_args(rng, case):
    xs, ws, stride, padding, dilation, groups, bias = case
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if bias:
        arrays.append(rng.standard_normal(ws[0]))
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    return arrays, kw


def _ids(cases):
    return [f"case{i}" for i in range(len(cases))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CONV2D_CASES, ids=_ids(CONV2D_CASES))
def test_conv2d_matches_torch(case, dtype):
    rng = np.random.default_rng(1)
    arrays, kw = _conv_args(rng, case)
    compare(lambda *a: F.conv2d(*a, **kw), lambda *a: TF.conv2d(*a, **kw), arrays, dtype)


@pytest.mark.parametrize("case", [CONV2D_CASES[i] for i in (1, 2, 4, 6)])
def test_conv2d_gradcheck(case):
    rng = np.random.default_rng(2)
    xs, ws, *rest = case
    xs = xs[:2] + tuple(min(s, 7) for s in xs[2:])  # keep the Jacobians small
    arrays, kw = _conv_args(rng, (xs[:1] + xs[1:], ws, *rest))
    ins = tuple(tg.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *a: F.conv2d(*a, **kw), ins)


def test_conv2d_gradgradcheck_and_double_backward_vs_torch():
    rng = np.random.default_rng(3)
    arrays, kw = _conv_args(rng, ((1, 4, 5, 6), (4, 2, 3, 2), (2, 1), 1, (1, 2), 2, True))
    ins = tuple(tg.tensor(a, requires_grad=True) for a in arrays)
    assert gradgradcheck(lambda *a: F.conv2d(*a, **kw), ins)

    # grad of (grad_x . u) w.r.t. x, w, b, and the cotangent v, against PyTorch
    x, w, b = ins
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in arrays)
    y, yt = F.conv2d(x, w, b, **kw), TF.conv2d(xt, wt, bt, **kw)
    v = rng.standard_normal(tuple(yt.shape))
    u = rng.standard_normal(arrays[0].shape)
    vg, vt = tg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    gx, gw = tg.autograd.grad(y, (x, w), vg, create_graph=True)
    gxt, gwt = torch.autograd.grad(yt, (xt, wt), vt, create_graph=True)
    ((gx * tg.tensor(u)).sum() + (gw * gw).sum()).backward()
    ((gxt * torch.tensor(u)).sum() + (gwt * gwt).sum()).backward()
    for a, t in [(x, xt), (w, wt), (vg, vt)]:
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_conv2d_random_configurations(data):
    d = data.draw
    groups = d(st.sampled_from([1, 1, 2, 3]))
    cin, cout = groups * d(st.integers(1, 2)), groups * d(st.integers(1, 2))
    kh, kw = d(st.integers(1, 4)), d(st.integers(1, 4))
    dh, dw = d(st.integers(1, 2)), d(st.integers(1, 2))
    ph, pw = d(st.integers(0, 2)), d(st.integers(0, 2))
    sh, sw = d(st.integers(1, 3)), d(st.integers(1, 3))
    H = d(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 9))
    W = d(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 9))
    n = d(st.integers(1, 3))
    bias = d(st.booleans())
    rng = np.random.default_rng(d(st.integers(0, 2 ** 16)))
    case = ((n, cin, H, W), (cout, cin // groups, kh, kw), (sh, sw), (ph, pw), (dh, dw),
            groups, bias)
    arrays, kw_ = _conv_args(rng, case)
    compare(lambda *a: F.conv2d(*a, **kw_), lambda *a: TF.conv2d(*a, **kw_), arrays)


CONV1D_CASES = [
    ((2, 4, 11), (6, 2, 3), 2, 1, 2, 2, True),
    ((3, 3, 8), (2, 3, 4), 1, "same", 1, 1, True),
    ((3, 3, 8), (5, 3, 2), 3, "valid", 1, 1, False),
    ((4, 9), (2, 4, 3), 1, 2, 3, 1, True),                         # unbatched
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CONV1D_CASES, ids=_ids(CONV1D_CASES))
def test_conv1d_matches_torch(case, dtype):
    rng = np.random.default_rng(4)
    arrays, kw = _conv_args(rng, case)
    compare(lambda *a: F.conv1d(*a, **kw), lambda *a: TF.conv1d(*a, **kw), arrays, dtype)


def test_conv1d_gradcheck():
    rng = np.random.default_rng(5)
    arrays, kw = _conv_args(rng, CONV1D_CASES[0])
    ins = tuple(tg.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *a: F.conv1d(*a, **kw), ins)


# ---- unfold / fold ---------------------------------------------------------------------
UNFOLD_CASES = [
    ((2, 3, 6, 7), dict(kernel_size=(2, 3))),
    ((1, 2, 7, 5), dict(kernel_size=3, dilation=(1, 2), padding=1, stride=(2, 1))),
    ((2, 1, 5, 5), dict(kernel_size=2, stride=2)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,kw", UNFOLD_CASES)
def test_unfold_and_fold_match_torch(shape, kw, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape)
    compare(lambda a: F.unfold(a, **kw), lambda a: TF.unfold(a, **kw), [x], dtype)
    cols = TF.unfold(torch.tensor(x), **kw).numpy()
    size = shape[2:]
    compare(lambda c: F.fold(c, size, **kw), lambda c: TF.fold(c, size, **kw),
            [rng.standard_normal(cols.shape)], dtype)


def test_unfold_fold_gradcheck_and_adjoint():
    rng = np.random.default_rng(7)
    kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    x = tg.tensor(rng.standard_normal((1, 2, 5, 6)), requires_grad=True)
    assert gradcheck(lambda a: F.unfold(a, **kw), (x,))
    assert gradgradcheck(lambda a: F.unfold(a, **kw), (x,))
    cols = F.unfold(x, **kw)
    c = tg.tensor(rng.standard_normal(tuple(cols.shape)), requires_grad=True)
    assert gradcheck(lambda a: F.fold(a, (5, 6), **kw), (c,))
    # <unfold(x), c> == <x, fold(c)>: fold is the adjoint of unfold
    lhs = (cols * c).sum().item()
    rhs = (x * F.fold(c, (5, 6), **kw)).sum().item()
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))


# ---- pad ------------------------------------------------------------------------------
PAD_CASES = [
    ((2, 3, 5, 6), (1, 2, 2, 1)),
    ((2, 3, 7), (2, 3)),
    ((3, 5, 6), (0, 2, 1, 0)),
    ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", PAD_CASES)
def test_pad_modes_match_torch(shape, pad, mode):
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape)
    compare(lambda a: F.pad(a, pad, mode=mode), lambda a: TF.pad(a, pad, mode=mode), [x])
    compare(lambda a: F.pad(a, pad, mode=mode), lambda a: TF.pad(a, pad, mode=mode), [x],
            np.float32)


def test_pad_constant_value_and_gradcheck():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 4))
    compare(lambda a: F.pad(a, (1, 2, 0, 1), value=2.5),
            lambda a: TF.pad(a, (1, 2, 0, 1), value=2.5), [x])
    t = tg.tensor(x, requires_grad=True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert gradcheck(lambda a: F.pad(a, (2, 1), mode=mode), (t,))
        assert gradgradcheck(lambda a: F.pad(a, (2, 1), mode=mode), (t,))


# ---- errors as PyTorch -------------------------------------------------------------------
def _raises_like_torch(fn_tg, fn_torch):
    with pytest.raises(Exception) as et:
        fn_torch()
    with pytest.raises(type(et.value)):
        fn_tg()


def test_errors_like_torch():
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5))
    w = np.random.default_rng(1).standard_normal((3, 2, 3, 3))
    tx, tw, gx, gw = torch.tensor(x), torch.tensor(w), tg.tensor(x), tg.tensor(w)
    cases = [
        (lambda L, F_, a, b: F_.conv2d(a, b, stride=2, padding="same")),
        (lambda L, F_, a, b: F_.conv2d(a, L.ones(3, 3, 3, 3, dtype=L.float64))),
        (lambda L, F_, a, b: F_.conv2d(a, b, padding="foo")),
        (lambda L, F_, a, b: F_.conv2d(a, L.ones(3, 2, 7, 7, dtype=L.float64))),
        (lambda L, F_, a, b: F_.conv2d(a, b.float())),
        (lambda L, F_, a, b: F_.max_pool2d(a, 2, padding=2)),
        (lambda L, F_, a, b: F_.pad(a, (1, 5, 0, 0), mode="reflect")),
    ]
    for c in cases:
        _raises_like_torch(lambda: c(tg, F, gx, gw), lambda: c(torch, TF, tx, tw))


def test_conv2d_same_padding_keeps_size_and_no_grad_mode():
    x = tg.randn(2, 3, 8, 9)
    w = tg.randn(4, 3, 4, 3, requires_grad=True)
    with tg.no_grad():
        y = F.conv2d(x, w, padding="same")
    assert tuple(y.shape) == (2, 4, 8, 9) and not y.requires_grad


# ---- forward mode (the entries' jvp rules) ---------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=1, groups=2),
    lambda L, x, w, b: L.nn.functional.conv1d(x[:, :, 0], w[:, :, 0], b, padding=1, groups=2),
    lambda L, x, w, b: L.nn.functional.max_pool2d(x, 3, 2, 1),
    lambda L, x, w, b: L.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda L, x, w, b: L.nn.functional.adaptive_avg_pool2d(x, (3, 2)),
    lambda L, x, w, b: L.nn.functional.unfold(x, (2, 3), padding=1),
], ids=["conv2d", "conv1d", "max_pool2d", "avg_pool2d", "adaptive", "unfold"])
def test_forward_mode_jvp_matches_torch(fn):
    import tapegrad.autograd.forward_ad as fwAD
    import torch.autograd.forward_ad as tfwAD
    rng = np.random.default_rng(11)
    prim = [rng.standard_normal(s) for s in ((2, 4, 7, 6), (6, 2, 3, 2), (6,))]
    tang = [rng.standard_normal(a.shape) for a in prim]
    with fwAD.dual_level():
        ds = [fwAD.make_dual(tg.tensor(a), tg.tensor(t)) for a, t in zip(prim, tang)]
        ours = fwAD.unpack_dual(fn(tg, *ds)).tangent
    with tfwAD.dual_level():
        ds = [tfwAD.make_dual(torch.tensor(a), torch.tensor(t)) for a, t in zip(prim, tang)]
        theirs = tfwAD.unpack_dual(fn(torch, *ds)).tangent
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


# ---- transposed convolution (the conv2d_input_grad entry as a public op) ----------------------
# (x shape, w shape (C_in, C_out/groups, kh, kw), stride, padding, output_padding, groups,
#  dilation, bias)
CONVT_CASES = [
    ((2, 4, 5, 6), (4, 3, 3, 3), 2, 1, 1, 1, 1, True),
    ((1, 4, 5, 5), (4, 2, 2, 3), (1, 2), (0, 1), (0, 1), 2, (2, 1), True),
    ((2, 3, 4, 4), (3, 2, 1, 1), 1, 0, 0, 1, 1, False),
    ((3, 5, 4), (3, 2, 2, 2), 3, 0, 2, 1, 1, True),                  # unbatched
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CONVT_CASES, ids=_ids(CONVT_CASES))
def test_conv_transpose2d_matches_torch(case, dtype):
    xs, ws, s, p, op_, g, d, bias = case
    rng = np.random.default_rng(12)
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if bias:
        arrays.append(rng.standard_normal(ws[1] * g))
    kw = dict(stride=s, padding=p, output_padding=op_, groups=g, dilation=d)
    compare(lambda *a: F.conv_transpose2d(*a, **kw), lambda *a: TF.conv_transpose2d(*a, **kw),
            arrays, dtype)


def test_conv_transpose_gradcheck_1d_and_errors():
    rng = np.random.default_rng(13)
    x = tg.tensor(rng.standard_normal((1, 4, 4, 3)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((4, 1, 2, 3)), requires_grad=True)
    b = tg.tensor(rng.standard_normal(2), requires_grad=True)
    def f(*a):
        return F.conv_transpose2d(*a, stride=2, padding=1, output_padding=1, groups=2)

    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))
    kw = dict(stride=3, padding=1, output_padding=2, dilation=2)
    compare(lambda a, c: F.conv_transpose1d(a, c, **kw),
            lambda a, c: TF.conv_transpose1d(a, c, **kw),
            [rng.standard_normal((2, 3, 7)), rng.standard_normal((3, 4, 4))])
    with pytest.raises(RuntimeError):
        F.conv_transpose2d(tg.zeros(1, 3, 4, 4), tg.zeros(4, 2, 3, 3))     # channel mismatch
    with pytest.raises(RuntimeError):
        TF.conv_transpose2d(torch.zeros(1, 3, 4, 4), torch.zeros(4, 2, 3, 3))

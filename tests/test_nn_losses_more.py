"""The padding modules and the losses of nn/functional/loss.py and nn/modules/loss.py
against torch: values and gradients (float64 tight, float32), every reduction,
broadcasting where torch allows it, gradcheck, module reprs, and torch's error cases (type
and message start)."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F
from _helpers import assert_raises_as_torch
from _nn_helpers import TOL

DTYPES = [np.float64, np.float32]
REDUCTIONS = ["mean", "sum", "none"]


def _pair(a, grad):
    """The same array as a tapegrad and a torch tensor (float arrays require grad)."""
    a = np.asarray(a)
    g = grad and a.dtype.kind == "f"
    return tg.tensor(a, requires_grad=g), torch.tensor(a, requires_grad=g)


def compare(tg_fn, th_fn, arrays, dtype=np.float64, grad=(True,) * 8, cot_seed=3):
    """tg_fn(*tensors) vs th_fn(*tensors): the value, then every float input's gradient
    for a random cotangent."""
    arrays = [np.asarray(a, dtype=dtype) if np.asarray(a).dtype.kind == "f" else np.asarray(a)
              for a in arrays]
    pairs = [_pair(a, g) for a, g in zip(arrays, grad)]
    out, want = tg_fn(*[p[0] for p in pairs]), th_fn(*[p[1] for p in pairs])
    assert tuple(out.shape) == tuple(want.shape), (out.shape, want.shape)
    np.testing.assert_allclose(np.asarray(out.data), want.detach().numpy(), **TOL[dtype])
    if not want.requires_grad:
        return out, want
    cot = np.random.default_rng(cot_seed).standard_normal(tuple(want.shape)).astype(dtype)
    out.backward(tg.tensor(cot))
    want.backward(torch.tensor(cot))
    for i, (a, b) in enumerate(pairs):
        if b.requires_grad:
            assert (a.grad is None) == (b.grad is None), i
            if b.grad is not None:
                np.testing.assert_allclose(np.asarray(a.grad.data), b.grad.numpy(),
                                           err_msg=f"grad of argument {i}", **TOL[dtype])
    return out, want


def rng(seed=0):
    return np.random.default_rng(seed)


def signs(r, shape):
    return np.where(r.random(shape) < 0.5, -1.0, 1.0)


# ---- padding modules ----------------------------------------------------------------------
PAD_CASES = [
    ("ConstantPad1d", (2, 3.5), [(3, 5), (2, 3, 5), (4,)]),
    ("ConstantPad1d", ((1, -1), -2.0), [(2, 3, 5)]),
    ("ConstantPad2d", ((1, 2, 0, 3), 1.5), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ConstantPad3d", (1, 0.0), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
    ("ZeroPad1d", ((2, 0),), [(3, 5), (2, 3, 5)]),
    ("ZeroPad2d", ((1, 1, 2, 0),), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ZeroPad3d", (1,), [(2, 3, 4, 5)]),
    ("ReflectionPad1d", (2,), [(3, 5), (2, 3, 5)]),
    ("ReflectionPad1d", ((3, 1),), [(2, 3, 5)]),
    ("ReflectionPad2d", ((1, 2, 3, 0),), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ReflectionPad3d", (1,), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
    ("ReplicationPad1d", ((4, 1),), [(3, 5), (2, 3, 5)]),
    ("ReplicationPad2d", (2,), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 3),), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
    ("CircularPad1d", ((2, 5),), [(3, 5), (2, 3, 5)]),
    ("CircularPad2d", ((1, 2, 3, 0),), [(2, 4, 5), (1, 2, 4, 5)]),
    ("CircularPad3d", (1,), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,shapes", PAD_CASES)
def test_padding_modules(name, args, shapes, dtype):
    m, tm = getattr(nn, name)(*args), getattr(tnn, name)(*args)
    assert repr(m) == repr(tm)
    assert m.padding == tm.padding
    for shape in shapes:
        compare(m, tm, [rng(1).standard_normal(shape)], dtype)


PAD_ERRORS = [
    ("ConstantPad2d", (1, 1.0), (5,)),
    ("ZeroPad3d", (1,), (4, 5)),
    ("ReflectionPad1d", (2,), (5,)),
    ("ReflectionPad1d", (2,), (2, 3, 4, 5)),
    ("ReflectionPad1d", (5,), (2, 3)),
    ("ReflectionPad2d", (1,), (3, 4)),
    ("ReflectionPad2d", (1,), (1, 2, 3, 4, 5)),
    ("ReflectionPad3d", (1,), (3, 4, 5)),
    ("ReplicationPad1d", (1,), (1, 2, 3, 4)),
    ("ReplicationPad2d", (1,), (3, 4)),
    ("ReplicationPad3d", (1,), (3, 4, 5)),
    ("CircularPad1d", (1,), (5,)),
    ("CircularPad1d", (1,), (1, 2, 3, 4)),
    ("CircularPad2d", (1,), (3, 4)),
    ("CircularPad3d", (1,), (3, 4, 5)),
    ("CircularPad1d", (5,), (2, 3)),
]


@pytest.mark.parametrize("name,args,shape", PAD_ERRORS)
def test_padding_errors(name, args, shape):
    x = np.zeros(shape)
    assert_raises_as_torch(lambda lib: getattr(lib.nn, name)(*args)(lib.tensor(x)), tg, 60)


def test_padding_gradcheck():
    for m in (nn.ReflectionPad2d((1, 2, 2, 0)), nn.CircularPad1d(2), nn.ReplicationPad3d(1),
              nn.ConstantPad2d(1, 2.0)):
        x = tg.tensor(rng(2).standard_normal((1, 2, 3, 4, 4)[-(len(m.padding) // 2 + 2):]),
                      requires_grad=True)
        assert tg.autograd.gradcheck(m, (x,))


# ---- losses: values and gradients -----------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes", [((6,), (6,), (6,)), ((4, 5), (1, 5), (4, 1)), ((), (), ())])
def test_margin_ranking(shapes, reduction, dtype):
    r = rng(4)
    a, b = r.standard_normal(shapes[0]), r.standard_normal(shapes[1])
    t = signs(r, shapes[2])
    for margin in (0.0, 0.7):
        compare(lambda x, y, z: F.margin_ranking_loss(x, y, z, margin, reduction=reduction),
                lambda x, y, z: TF.margin_ranking_loss(x, y, z, margin, reduction=reduction),
                [a, b, t], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding(reduction, dtype):
    r = rng(5)
    x = r.standard_normal((4, 6)) * 2
    t = signs(r, (4, 6))
    t[0, :2] = 0.5  # neither 1 nor -1: torch adds both terms
    for margin, tshape in ((1.0, (4, 6)), (0.3, (6,))):
        tt = t if tshape == (4, 6) else t[1]
        compare(lambda a, b: F.hinge_embedding_loss(a, b, margin, reduction=reduction),
                lambda a, b: TF.hinge_embedding_loss(a, b, margin, reduction=reduction),
                [x, tt], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("tshape", [(3, 4, 5), (5,), (3, 1, 5)])
def test_soft_margin(tshape, reduction, dtype):
    r = rng(6)
    x = r.standard_normal((3, 4, 5)) * 3
    compare(lambda a, b: F.soft_margin_loss(a, b, reduction=reduction),
            lambda a, b: TF.soft_margin_loss(a, b, reduction=reduction),
            [x, signs(r, tshape) * r.uniform(0.2, 1.5, tshape)], dtype, grad=(True, False))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 5), (5,)])
def test_multilabel_soft_margin(shape, reduction, dtype):
    r = rng(7)
    x = r.standard_normal(shape) * 4
    t = (r.random(shape) < 0.5).astype(float)
    for w in (None, r.uniform(0.1, 2.0, shape[-1])):
        arrays = [x, t] + ([] if w is None else [w])
        compare(lambda a, b, *w_: F.multilabel_soft_margin_loss(
                    a, b, weight=w_[0] if w_ else None, reduction=reduction),
                lambda a, b, *w_: TF.multilabel_soft_margin_loss(
                    a, b, weight=w_[0] if w_ else None, reduction=reduction),
                arrays, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes", [((6, 5), (6, 5), (6,)), ((6, 5), (1, 5), (6,)),
                                    ((5,), (5,), ())])
def test_cosine_embedding(shapes, reduction, dtype):
    r = rng(8)
    a, b = r.standard_normal(shapes[0]), r.standard_normal(shapes[1])
    t = signs(r, shapes[2])
    for margin in (0.0, -0.2, 0.4):
        compare(lambda x, y, z: F.cosine_embedding_loss(x, y, z, margin, reduction=reduction),
                lambda x, y, z: TF.cosine_embedding_loss(x, y, z, margin, reduction=reduction),
                [a, b, t], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(6, 4), (4,), (2, 3, 4)])
@pytest.mark.parametrize("p,swap", [(2, False), (1, True), (3.0, False), (2, True)])
def test_triplet_margin(shape, p, swap, reduction, dtype):
    r = rng(9)
    a, pos, neg = (r.standard_normal(shape) for _ in range(3))
    for margin in (1.0, 0.3):
        compare(lambda x, y, z: F.triplet_margin_loss(x, y, z, margin, p, swap=swap,
                                                      reduction=reduction),
                lambda x, y, z: TF.triplet_margin_loss(x, y, z, margin, p, swap=swap,
                                                       reduction=reduction),
                [a, pos, neg], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True),
                                            (False, True)])
def test_poisson_nll(log_input, full, reduction, dtype):
    r = rng(10)
    x = r.standard_normal((4, 5)) if log_input else r.uniform(0.1, 3.0, (4, 5))
    t = r.uniform(1.2, 5.0, (4, 5))  # > 1: Stirling's term (and its gradient) everywhere
    for tt in (t, t[0], np.floor(t)):
        compare(lambda a, b: F.poisson_nll_loss(a, b, log_input, full, reduction=reduction),
                lambda a, b: TF.poisson_nll_loss(a, b, log_input, full, reduction=reduction),
                [x, tt], dtype)
    # targets at or below 1 (zero counts included) without a target gradient
    t0 = r.integers(0, 3, (4, 5)).astype(float)
    compare(lambda a, b: F.poisson_nll_loss(a, b, log_input, full, eps=1e-3,
                                            reduction=reduction),
            lambda a, b: TF.poisson_nll_loss(a, b, log_input, full, eps=1e-3,
                                             reduction=reduction),
            [x, t0], dtype, grad=(True, False))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("vshape", [(4, 3, 5), (4, 3), (4, 1, 5), (4, 3, 1), (1, 3, 5)])
def test_gaussian_nll(vshape, reduction, dtype):
    r = rng(11)
    x, t = r.standard_normal((4, 3, 5)), r.standard_normal((4, 3, 5))
    var = r.uniform(0.05, 2.0, vshape)
    var.flat[0] = 1e-9  # below eps: clamped, the gradient still flows as torch's
    for full, eps in ((False, 1e-6), (True, 1e-2)):
        compare(lambda a, b, v: F.gaussian_nll_loss(a, b, v, full, eps, reduction),
                lambda a, b, v: TF.gaussian_nll_loss(a, b, v, full, eps, reduction),
                [x, t, var], dtype)
    compare(lambda a, b: F.gaussian_nll_loss(a, b, 0.7, reduction=reduction),
            lambda a, b: TF.gaussian_nll_loss(a, b, 0.7, reduction=reduction), [x, t], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin(p, reduction, dtype):
    r = rng(12)
    x = r.standard_normal((6, 5))
    y = r.integers(0, 5, 6)
    w = r.uniform(0.2, 2.0, 5)
    for margin in (1.0, 0.4):
        compare(lambda a, b: F.multi_margin_loss(a, b, p, margin, reduction=reduction),
                lambda a, b: TF.multi_margin_loss(a, b, p, margin, reduction=reduction),
                [x, y], dtype)
        compare(lambda a, b, c: F.multi_margin_loss(a, b, p, margin, c, reduction=reduction),
                lambda a, b, c: TF.multi_margin_loss(a, b, p, margin, c, reduction=reduction),
                [x, y, w], dtype, grad=(True, False, False))
    # one sample: a vector with a 0-dim or a one-element target
    for tgt in (np.array(2), np.array([2])):
        compare(lambda a, b: F.multi_margin_loss(a, b, p, reduction=reduction),
                lambda a, b: TF.multi_margin_loss(a, b, p, reduction=reduction),
                [x[0], tgt], dtype)


# ---- legacy arguments, modules, reprs ---------------------------------------------------------
def test_legacy_size_average_reduce():
    r = rng(13)
    x, t = r.standard_normal((4, 5)), signs(r, (4, 5))
    for sa, red in ((False, None), (None, False), (True, True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compare(lambda a, b: F.soft_margin_loss(a, b, size_average=sa, reduce=red),
                    lambda a, b: TF.soft_margin_loss(a, b, size_average=sa, reduce=red), [x, t],
                    grad=(True, False))
            compare(lambda a, b: F.multilabel_soft_margin_loss(a, b, size_average=sa,
                                                               reduce=red),
                    lambda a, b: TF.multilabel_soft_margin_loss(a, b, size_average=sa,
                                                                reduce=red), [x, (t > 0) * 1.0])
            m, tm = nn.HingeEmbeddingLoss(size_average=sa, reduce=red), \
                tnn.HingeEmbeddingLoss(size_average=sa, reduce=red)
            assert m.reduction == tm.reduction
            compare(m, tm, [x, t])


MODULES = [
    ("MarginRankingLoss", dict(margin=0.5, reduction="sum"), 3),
    ("HingeEmbeddingLoss", dict(margin=2.0), 2),
    ("SoftMarginLoss", dict(reduction="none"), 2),
    ("MultiLabelSoftMarginLoss", dict(), 2),
    ("CosineEmbeddingLoss", dict(margin=0.1), 3),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, eps=1e-3, swap=True), 3),
    ("PoissonNLLLoss", dict(log_input=False, full=True, eps=1e-4), 2),
    ("GaussianNLLLoss", dict(full=True, eps=1e-3, reduction="none"), 3),
    ("MultiMarginLoss", dict(p=2, margin=0.5), 2),
]


def _module_inputs(name, dtype):
    r = rng(14)
    x, y = r.standard_normal((4, 5)), r.standard_normal((4, 5))
    return {"MarginRankingLoss": [x, y, signs(r, (4, 5))],
            "HingeEmbeddingLoss": [x, signs(r, (4, 5))],
            "SoftMarginLoss": [x, signs(r, (4, 5))],
            "MultiLabelSoftMarginLoss": [x, (y > 0).astype(float)],
            "CosineEmbeddingLoss": [x, y, signs(r, (4,))],
            "TripletMarginLoss": [x, y, r.standard_normal((4, 5))],
            "PoissonNLLLoss": [np.abs(x) + 0.1, np.abs(y) * 3 + 1.1],
            "GaussianNLLLoss": [x, y, r.uniform(0.1, 1.0, (4, 1))],
            "MultiMarginLoss": [x, r.integers(0, 5, 4)]}[name]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,kw,nargs", MODULES)
def test_loss_modules(name, kw, nargs, dtype):
    m, tm = getattr(nn, name)(**kw), getattr(tnn, name)(**kw)
    assert repr(m) == repr(tm)
    assert m.reduction == tm.reduction
    # torch's soft margin and multi margin kernels have no target / weight gradient
    compare(m, tm, _module_inputs(name, dtype), dtype, grad=(True, name != "SoftMarginLoss", True))


def test_weighted_loss_modules():
    w = rng(15).uniform(0.2, 2.0, 5)
    for name in ("MultiLabelSoftMarginLoss", "MultiMarginLoss"):
        m, tm = getattr(nn, name)(weight=tg.tensor(w)), getattr(tnn, name)(weight=torch.tensor(w))
        assert repr(m) == repr(tm)
        assert "weight" in dict(m.named_buffers())
        compare(m, tm, _module_inputs(name, np.float64))


def test_losses_gradcheck():
    r = rng(16)
    x, y, z = (tg.tensor(r.standard_normal((3, 4)), requires_grad=True) for _ in range(3))
    t = tg.tensor(signs(r, (3, 4)))
    var = tg.tensor(r.uniform(0.2, 1.0, (3, 4)), requires_grad=True)
    gc = tg.autograd.gradcheck
    assert gc(lambda a, b: F.margin_ranking_loss(a, b, t, 0.3), (x, y))
    assert gc(lambda a: F.soft_margin_loss(a, t), (x,))
    assert gc(lambda a: F.multilabel_soft_margin_loss(a, (t > 0).float()), (x,))
    assert gc(lambda a, b: F.cosine_embedding_loss(a, b, t[:, 0], 0.1), (x, y))
    assert gc(lambda a, b, c: F.triplet_margin_loss(a, b, c, swap=True), (x, y, z))
    assert gc(lambda a, v: F.gaussian_nll_loss(a, y.detach(), v, full=True), (x, var))
    assert gc(lambda a, b: F.poisson_nll_loss(a, b.abs() + 1.5, full=True), (x, y))
    assert gc(lambda a: F.multi_margin_loss(a, tg.tensor([0, 3, 1]), p=2), (x,))


# ---- errors ---------------------------------------------------------------------------------
def _T(lib, *shape, v=None):
    return lib.ones(*shape) if v is None else lib.full(shape, v)


ERRORS = {
    "ranking dims": lambda L: L.nn.functional.margin_ranking_loss(
        _T(L, 2, 3), _T(L, 3), _T(L, 3)),
    "ranking reduction": lambda L: L.nn.functional.margin_ranking_loss(
        _T(L, 3), _T(L, 3), _T(L, 3), reduction="avg"),
    "cosine 0D target": lambda L: L.nn.functional.cosine_embedding_loss(
        _T(L, 2, 3), _T(L, 2, 3), L.tensor(1.0)),
    "cosine 1D target": lambda L: L.nn.functional.cosine_embedding_loss(
        _T(L, 3), _T(L, 3), _T(L, 2)),
    "cosine 2D target": lambda L: L.nn.functional.cosine_embedding_loss(
        _T(L, 2, 3), _T(L, 2, 3), _T(L, 2, 3)),
    "triplet dims": lambda L: L.nn.functional.triplet_margin_loss(
        _T(L, 2, 3), _T(L, 3), _T(L, 2, 3)),
    "triplet margin": lambda L: L.nn.functional.triplet_margin_loss(
        _T(L, 2, 3), _T(L, 2, 3), _T(L, 2, 3), margin=0),
    "triplet module margin": lambda L: L.nn.TripletMarginLoss(margin=-1.0),
    "poisson reduction": lambda L: L.nn.functional.poisson_nll_loss(
        _T(L, 3), _T(L, 3), reduction="x"),
    "gaussian var size": lambda L: L.nn.functional.gaussian_nll_loss(
        _T(L, 2, 3), _T(L, 2, 3), _T(L, 2, 4)),
    "gaussian var size 2": lambda L: L.nn.functional.gaussian_nll_loss(
        _T(L, 2, 3, 4), _T(L, 2, 3, 4), _T(L, 1, 1, 4)),
    "gaussian negative var": lambda L: L.nn.functional.gaussian_nll_loss(
        _T(L, 2, 3), _T(L, 2, 3), _T(L, 2, 3, v=-1.0)),
    "gaussian negative float": lambda L: L.nn.functional.gaussian_nll_loss(
        _T(L, 2, 3), _T(L, 2, 3), -1.0),
    "gaussian reduction": lambda L: L.nn.functional.gaussian_nll_loss(
        _T(L, 2, 3), _T(L, 2, 3), 1.0, reduction="x"),
    "multilabel reduction": lambda L: L.nn.functional.multilabel_soft_margin_loss(
        _T(L, 2, 3), _T(L, 2, 3), reduction="x"),
    "multi margin p": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3), L.tensor([0, 1]), p=3),
    "multi margin weight dim": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3), L.tensor([0, 1]), weight=_T(L, 1, 3)),
    "multi margin weight size": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3), L.tensor([0, 1]), weight=_T(L, 4)),
    "multi margin 3D": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3, 4), L.tensor([0, 1])),
    "multi margin target size": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3), L.tensor([0, 1, 1])),
    "multi margin out of range": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3), L.tensor([0, 3])),
    "multi margin module p": lambda L: L.nn.MultiMarginLoss(p=0),
    "multi margin weight grad": lambda L: L.nn.functional.multi_margin_loss(
        _T(L, 2, 3), L.tensor([0, 1]), weight=_T(L, 3).requires_grad_()),
    "multi margin module weight": lambda L: L.nn.MultiMarginLoss(weight=_T(L, 2, 2)),
    "soft margin shapes": lambda L: L.nn.functional.soft_margin_loss(_T(L, 2, 3), _T(L, 4)),
    "soft margin target grad": lambda L: L.nn.functional.soft_margin_loss(
        _T(L, 3), _T(L, 3).requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    assert_raises_as_torch(ERRORS[case], tg, 60)


# ---- instance norm ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 2, 4, 5), (1, 3, 2, 3, 2)])
@pytest.mark.parametrize("affine,stats", [(False, False), (True, False), (True, True),
                                          (False, True)])
def test_instance_norm_functional(shape, affine, stats, dtype):
    r = rng(20)
    C = shape[1]
    x = r.standard_normal(shape) * 2 + 0.5
    w, b = r.uniform(0.5, 1.5, C), r.standard_normal(C)
    rm, rv = r.standard_normal(C), r.uniform(0.5, 2.0, C)
    for use_input_stats in (True, False) if stats else (True,):
        state = {}

        def run(lib, F_, *ts):
            args = list(ts)
            xx, ww, bb = args[0], (args[1] if affine else None), (args[2] if affine else None)
            m, v = (lib.tensor(rm.astype(dtype)), lib.tensor(rv.astype(dtype))) if stats \
                else (None, None)
            out = F_.instance_norm(xx, m, v, ww, bb, use_input_stats, 0.3, 1e-3)
            state[lib.__name__] = (m, v)
            return out

        compare(lambda *ts: run(tg, F, *ts), lambda *ts: run(torch, TF, *ts),
                [x, w, b] if affine else [x], dtype)
        if stats:  # the running statistics, updated in place (only with input statistics)
            for a, t in zip(state["tapegrad"], state["torch"]):
                np.testing.assert_allclose(np.asarray(a.detach().numpy()), t.numpy(),
                                           **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (4, 3, 6)), ("InstanceNorm1d", (3, 6)),
                                       ("InstanceNorm2d", (2, 3, 4, 5)),
                                       ("InstanceNorm2d", (3, 4, 5))])
@pytest.mark.parametrize("kw", [dict(), dict(affine=True), dict(track_running_stats=True),
                                dict(affine=True, track_running_stats=True, momentum=None),
                                dict(affine=True, bias=False, eps=1e-3, momentum=0.5)])
def test_instance_norm_modules(cls, shape, kw, dtype):
    from _nn_helpers import compare_module
    m, tm = getattr(nn, cls)(3, **kw), getattr(tnn, cls)(3, **kw)
    assert repr(m) == repr(tm)
    assert sorted(m.state_dict()) == sorted(tm.state_dict())
    if m.weight is not None:  # not the initial ones / zeros, so the affine part is tested
        m.weight.data.copy_(tg.tensor(rng(21).uniform(0.5, 1.5, 3)))
    compare_module(m, tm, rng(22).standard_normal(shape) * 2 + 1, dtype, steps=2)
    m.eval()
    tm.eval()
    compare_module(m, tm, rng(23).standard_normal(shape), dtype)


def test_instance_norm_gradcheck():
    r = rng(24)
    x = tg.tensor(r.standard_normal((2, 3, 5)), requires_grad=True)
    w = tg.tensor(r.uniform(0.5, 1.5, 3), requires_grad=True)
    b = tg.tensor(r.standard_normal(3), requires_grad=True)
    assert tg.autograd.gradcheck(lambda a, c, d: F.instance_norm(a, weight=c, bias=d), (x, w, b))


IN_ERRORS = {
    "one spatial element": lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 1)),
    "no running stats": lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 4),
                                                                use_input_stats=False),
    "1d rank": lambda L: L.nn.InstanceNorm1d(3)(L.ones(2, 3, 4, 5)),
    "2d rank": lambda L: L.nn.InstanceNorm2d(3)(L.ones(3, 4)),
    "affine features": lambda L: L.nn.InstanceNorm2d(4, affine=True)(L.ones(2, 3, 4, 5)),
}


@pytest.mark.parametrize("case", sorted(IN_ERRORS))
def test_instance_norm_errors(case):
    assert_raises_as_torch(IN_ERRORS[case], tg, 60)


def test_instance_norm_features_warning():
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(tg.ones(2, 3, 5))


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

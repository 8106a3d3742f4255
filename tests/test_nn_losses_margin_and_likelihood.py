"""torch.nn's margin and likelihood losses against torch: margin_ranking, hinge_embedding,
soft_margin, multilabel_soft_margin, cosine_embedding, triplet_margin, poisson_nll,
gaussian_nll, multi_margin. Values and gradients (float64 tight, float32), every
reduction, broadcasting where torch allows it, gradcheck, the legacy size_average/reduce
arguments, module reprs, and torch's error cases (type and message start).
"""
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
from _nn_compare import compare, rng, signs


DTYPES = [np.float64, np.float32]


REDUCTIONS = ["mean", "sum", "none"]


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

"""Losses vs torch (modules and functional, every option; values and gradients of the
input and, where PyTorch has one, of the target), worked example 8 (fused
cross-entropy), and PyTorch's error cases."""
import itertools
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F
from tapegrad.nn import composite_reference as R
from _nn_helpers import close

DTYPES = [np.float64, np.float32]


def _run(tg_loss, th_loss, x, t, dtype, x_map=None, t_grad=False, extra=()):
    """loss(x, t) in both libraries; compare the value and the gradients."""
    xa = np.asarray(x, dtype=dtype)
    xt, xth = tg.tensor(xa, requires_grad=True), torch.tensor(xa, requires_grad=True)
    if np.asarray(t).dtype.kind == "f":
        ta = np.asarray(t, dtype=dtype)
        tt, tth = tg.tensor(ta, requires_grad=t_grad), torch.tensor(ta, requires_grad=t_grad)
    else:
        tt, tth = tg.tensor(t), torch.tensor(t)
    a_in, b_in = (x_map[0](xt), x_map[1](xth)) if x_map else (xt, xth)
    la, lb = tg_loss(a_in, tt), th_loss(b_in, tth)
    close(la, lb, dtype, "loss")
    cot = np.random.default_rng(9).standard_normal(tuple(lb.shape)).astype(dtype)
    la.backward(tg.tensor(cot))
    lb.backward(torch.tensor(cot))
    close(xt.grad, xth.grad, dtype, "d loss / d input")
    if t_grad:
        close(tt.grad, tth.grad, dtype, "d loss / d target")
    return la, lb


rng = np.random.default_rng(0)
X = rng.standard_normal((8, 5)) * 2
Y = rng.integers(0, 5, 8)
Y_IGN = Y.copy()
Y_IGN[[0, 3]] = -100
W = rng.uniform(0.2, 2.0, 5)
CE_OPTIONS = list(itertools.product(["mean", "sum", "none"], [None, "w"], [-100, 2],
                                    [0.0, 0.15]))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction,weight,ignore_index,smoothing", CE_OPTIONS)
def test_cross_entropy_options(dtype, reduction, weight, ignore_index, smoothing):
    tgt = Y_IGN if ignore_index == -100 else Y
    kw = dict(reduction=reduction, ignore_index=ignore_index, label_smoothing=smoothing)
    wa = W.astype(dtype) if weight else None
    _run(nn.CrossEntropyLoss(weight=tg.tensor(wa) if weight else None, **kw),
         torch.nn.CrossEntropyLoss(weight=torch.tensor(wa) if weight else None, **kw),
         X, tgt, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_cross_entropy_shapes(dtype):
    _run(F.cross_entropy, TF.cross_entropy, X[0], np.array(3), dtype)               # (C,)
    x4 = rng.standard_normal((2, 5, 3, 2))
    y4 = rng.integers(0, 5, (2, 3, 2))
    _run(F.cross_entropy, TF.cross_entropy, x4, y4, dtype)                          # (N,C,d1,d2)
    _run(lambda a, b: F.cross_entropy(a, b, reduction="none", label_smoothing=0.1),
         lambda a, b: TF.cross_entropy(a, b, reduction="none", label_smoothing=0.1),
         x4, y4, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2}, {"reduction": "sum"},
                                {"reduction": "none"}, {"weight": True}])
def test_cross_entropy_probability_targets(dtype, kw):
    kw = dict(kw)
    P = rng.dirichlet(np.ones(5), 8)
    wa = W.astype(dtype)
    kw_tg = {**kw, "weight": tg.tensor(wa)} if kw.pop("weight", None) else kw
    kw_th = {**kw, "weight": torch.tensor(wa)} if "weight" in kw_tg else kw
    _run(lambda a, b: F.cross_entropy(a, b, **kw_tg), lambda a, b: TF.cross_entropy(a, b, **kw_th),
         X, P, dtype, t_grad=True)


def test_cross_entropy_all_ignored_is_nan_like_torch():
    t = np.full(4, -100)
    a = F.cross_entropy(tg.tensor(X[:4]), tg.tensor(t))
    b = TF.cross_entropy(torch.tensor(X[:4]), torch.tensor(t))
    assert np.isnan(a.item()) and np.isnan(b.item())


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [False, True])
def test_nll_loss(dtype, reduction, weight):
    wa = W.astype(dtype)
    kw = dict(reduction=reduction, ignore_index=1)
    lsm = (lambda a: F.log_softmax(a, 1), lambda a: TF.log_softmax(a, 1))
    _run(nn.NLLLoss(weight=tg.tensor(wa) if weight else None, **kw),
         torch.nn.NLLLoss(weight=torch.tensor(wa) if weight else None, **kw), X, Y, dtype,
         x_map=lsm)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(dtype, reduction):
    T = rng.standard_normal((8, 5))
    Xt = X.copy()
    Xt[0, 0] = T[0, 0]   # a zero residual: l1's gradient is sign(0) = 0 as in torch
    for ours, theirs in ((nn.MSELoss, torch.nn.MSELoss), (nn.L1Loss, torch.nn.L1Loss)):
        _run(ours(reduction=reduction), theirs(reduction=reduction), Xt, T, dtype, t_grad=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [False, True])
def test_bce(dtype, reduction, weight):
    P = rng.uniform(0.02, 0.98, (6, 3))
    T = rng.uniform(0, 1, (6, 3))
    wa = rng.uniform(0.5, 2, (6, 3)).astype(dtype)
    _run(nn.BCELoss(weight=tg.tensor(wa) if weight else None, reduction=reduction),
         torch.nn.BCELoss(weight=torch.tensor(wa) if weight else None, reduction=reduction),
         P, T, dtype, t_grad=True)


def test_bce_clamps_logs_like_torch():
    p = np.array([0.0, 1.0, 0.5, 1e-50])
    t = np.array([1.0, 0.0, 1.0, 1.0])
    a, b = tg.tensor(p, requires_grad=True), torch.tensor(p, requires_grad=True)
    la, lb = F.binary_cross_entropy(a, tg.tensor(t)), TF.binary_cross_entropy(b, torch.tensor(t))
    close(la, lb, np.float64, "loss: each log clamped at -100")
    la.backward()
    lb.backward()
    # gradients ~2e11 = (x - y) / 1e-12 / n; the two libraries round in a different order
    np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("pos_weight", [False, True])
@pytest.mark.parametrize("weight", [False, True])
def test_bce_with_logits(dtype, reduction, pos_weight, weight):
    Z = rng.standard_normal((6, 3)) * 4
    Z[0, 0], Z[1, 1] = 60.0, -60.0     # stable at large |logits|
    T = rng.uniform(0, 1, (6, 3))
    pw = rng.uniform(0.5, 3, 3).astype(dtype)
    wa = rng.uniform(0.5, 2, 3).astype(dtype)
    kw_tg = dict(reduction=reduction, pos_weight=tg.tensor(pw) if pos_weight else None,
                 weight=tg.tensor(wa) if weight else None)
    kw_th = dict(reduction=reduction, pos_weight=torch.tensor(pw) if pos_weight else None,
                 weight=torch.tensor(wa) if weight else None)
    _run(nn.BCEWithLogitsLoss(**kw_tg), torch.nn.BCEWithLogitsLoss(**kw_th), Z, T, dtype,
         t_grad=True)


def test_bce_with_logits_matches_composite():
    Z, T = rng.standard_normal((5, 4)) * 3, rng.uniform(0, 1, (5, 4))
    a, b = tg.tensor(Z, requires_grad=True), tg.tensor(Z, requires_grad=True)
    F.binary_cross_entropy_with_logits(a, tg.tensor(T)).backward()
    R.binary_cross_entropy_with_logits(b, tg.tensor(T)).backward()
    np.testing.assert_allclose(a.grad.data, b.grad.data, rtol=1e-12, atol=1e-15)


def test_legacy_size_average_reduce():
    a = F.mse_loss(tg.tensor(X), tg.tensor(X * 0), size_average=False)
    b = TF.mse_loss(torch.tensor(X), torch.tensor(X * 0), size_average=False)
    close(a, b, np.float64)
    assert nn.CrossEntropyLoss(reduce=False).reduction == "none"


# ---- worked example 8: cross-entropy, fused ------------------------------------------------------
def test_worked_example_8_fused_cross_entropy():
    n, C = 32, 27
    g = np.random.default_rng(8)
    logits0 = g.standard_normal((n, C)).astype(np.float32) * 2
    y = g.integers(0, C, n)
    # fused: ONE node, dlogits = (softmax - onehot) / n
    x = tg.tensor(logits0, requires_grad=True)
    loss = F.cross_entropy(x, tg.tensor(y))
    assert loss.grad_fn.name == "cross_entropy" and loss.grad_fn.parents() == (x,)
    loss.backward()
    p = np.exp(logits0 - logits0.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    onehot = np.eye(C, dtype=np.float32)[y]
    np.testing.assert_allclose(x.grad.data, (p - onehot) / n, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(x.grad.data.sum(1), 0, atol=1e-8)   # each row sums to 0
    # composite: log_softmax -> pick -> mean; the picked log-probs get exactly -1/32
    xc = tg.tensor(logits0, requires_grad=True)
    lc, logp = R.cross_entropy(xc, tg.tensor(y), return_logprobs=True)
    logp.retain_grad()
    lc.backward()
    expected = np.where(onehot == 1, np.float32(-1 / 32), 0)
    np.testing.assert_array_equal(logp.grad.data, expected)
    assert logp.grad.data[0, y[0]] == -1 / 32
    # fused == composite to ~1e-8 in float32
    np.testing.assert_allclose(loss.item(), lc.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.data, xc.grad.data, atol=1e-8, rtol=0)
    # and both equal torch
    xt = torch.tensor(logits0, requires_grad=True)
    TF.cross_entropy(xt, torch.tensor(y)).backward()
    np.testing.assert_allclose(x.grad.data, xt.grad.numpy(), atol=1e-8)


# ---- errors (PyTorch's types and wording) --------------------------------------------------------
def test_loss_errors_match_torch():
    def both(fn_tg, fn_th, exc):
        with pytest.raises(exc) as a:
            fn_tg()
        with pytest.raises(exc) as b:
            fn_th()
        return str(a.value), str(b.value)

    a, b = both(lambda: F.cross_entropy(tg.tensor(X), tg.tensor(Y[:5])),
                lambda: TF.cross_entropy(torch.tensor(X), torch.tensor(Y[:5])), ValueError)
    assert a == b   # Expected input batch_size (8) to match target batch_size (5).
    a, b = both(lambda: F.cross_entropy(tg.tensor(X), tg.tensor(Y), reduction="avg"),
                lambda: TF.cross_entropy(torch.tensor(X), torch.tensor(Y), reduction="avg"),
                ValueError)
    assert a == b
    a, b = both(lambda: F.cross_entropy(tg.tensor(X), tg.tensor(Y), label_smoothing=1.5),
                lambda: TF.cross_entropy(torch.tensor(X), torch.tensor(Y), label_smoothing=1.5),
                RuntimeError)
    assert a == b
    bad = Y.copy()
    bad[2] = 7
    a, b = both(lambda: F.cross_entropy(tg.tensor(X), tg.tensor(bad)),
                lambda: TF.cross_entropy(torch.tensor(X), torch.tensor(bad)), IndexError)
    assert "Target 7 is out of bounds" in a and "Target 7 is out of bounds" in b
    bad[2] = -1  # a negative target (the one-reduction check views it as unsigned)
    a, b = both(lambda: F.cross_entropy(tg.tensor(X), tg.tensor(bad)),
                lambda: TF.cross_entropy(torch.tensor(X), torch.tensor(bad)), IndexError)
    assert "Target -1 is out of bounds" in a and "Target -1 is out of bounds" in b
    for ii in (-1, 2, 7):  # ignore_index inside / outside the class range, as torch does
        bad[2] = ii
        ours = F.cross_entropy(tg.tensor(X), tg.tensor(bad), ignore_index=ii).item()
        theirs = TF.cross_entropy(torch.tensor(X), torch.tensor(bad), ignore_index=ii).item()
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    a, b = both(lambda: F.binary_cross_entropy(tg.tensor([1.5]), tg.tensor([1.0])),
                lambda: TF.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0])),
                RuntimeError)
    assert "between 0 and 1" in a and "between 0 and 1" in b
    a, b = both(lambda: F.binary_cross_entropy(tg.tensor([0.5, 0.5]), tg.tensor([1.0])),
                lambda: TF.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([1.0])),
                ValueError)
    assert a.replace("tapegrad", "torch") == b
    a, b = both(lambda: F.cross_entropy(tg.tensor(X), tg.tensor(Y), weight=tg.ones(3)),
                lambda: TF.cross_entropy(torch.tensor(X), torch.tensor(Y), weight=torch.ones(3)),
                RuntimeError)
    assert "weight" in a
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.mse_loss(tg.randn(3, 1), tg.randn(3))
    assert any("different to the input size" in str(x.message) for x in w)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_huber(dtype, reduction):
    T = rng.standard_normal((8, 5))
    Xt = T + rng.standard_normal((8, 5)) * 1.5
    Xt[0, 0] = T[0, 0] + 1.0     # exactly at the switch point |d| = beta = delta
    for ours, theirs in ((nn.SmoothL1Loss(reduction=reduction, beta=1.0),
                          torch.nn.SmoothL1Loss(reduction=reduction, beta=1.0)),
                         (nn.SmoothL1Loss(reduction=reduction, beta=0.5),
                          torch.nn.SmoothL1Loss(reduction=reduction, beta=0.5)),
                         (nn.HuberLoss(reduction=reduction, delta=1.0),
                          torch.nn.HuberLoss(reduction=reduction, delta=1.0)),
                         (nn.HuberLoss(reduction=reduction, delta=0.7),
                          torch.nn.HuberLoss(reduction=reduction, delta=0.7))):
        _run(ours, theirs, Xt, T, dtype, t_grad=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["batchmean", "mean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, reduction, log_target):
    P = rng.dirichlet(np.ones(5), 6)
    T = np.log(P) if log_target else P
    lsm = (lambda a: F.log_softmax(a, 1), lambda a: TF.log_softmax(a, 1))
    mods = (nn.KLDivLoss(reduction=reduction, log_target=log_target),
            torch.nn.KLDivLoss(reduction=reduction, log_target=log_target))
    _run(*mods, X[:6], T, dtype, x_map=lsm, t_grad=True)
    if not log_target:
        # a zero target: 0 log 0 = 0 (the target's own gradient there is torch's nan: skipped)
        T = T.copy()
        T[0, 0] = 0.0
        _run(*mods, X[:6], T, dtype, x_map=lsm)


def test_cross_entropy_all_rows_ignored_matches_torch():
    """Every target == ignore_index: the mean loss is 0/0 = nan, the gradient is 0."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    ours = tg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    loss = F.cross_entropy(ours, tg.tensor(np.full(3, -100)))
    tloss = TF.cross_entropy(theirs, torch.full((3,), -100))
    loss.backward()
    tloss.backward()
    assert np.isnan(loss.item()) and np.isnan(tloss.item())
    np.testing.assert_array_equal(ours.grad.data, theirs.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [31, 32, 512])
def test_cross_entropy_many_rows_matches_torch(dtype, rows):
    """From 32 rows the log-softmax's row max takes `_rowsum.max_last` (a transposed
    copy): values and gradients as torch's, on both sides of the threshold, with a row of
    large logits and a row holding -inf."""
    r = np.random.default_rng(rows)
    x = (r.standard_normal((rows, 27)) * 3).astype(dtype)
    x[1] += 80.0
    x[2, 5] = -np.inf
    y = r.integers(0, 27, rows)
    y[2] = 0
    ours = tg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    F.cross_entropy(ours, tg.tensor(y)).backward()
    tloss = TF.cross_entropy(theirs, torch.tensor(y))
    tloss.backward()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(F.cross_entropy(ours, tg.tensor(y)).item(), tloss.item(), **tol)
    np.testing.assert_allclose(ours.grad.data, theirs.grad.numpy(), **tol)

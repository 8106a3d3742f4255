"""NaN and inf where torch has them, finite values where torch is finite: values and
gradients at the edges (atan2 at the origin, hypot without overflow, the robust losses at
+-inf, std of 1e20s in float32, clamp with NaN bounds, xlogy/logit/kl_div at 0 and
outside their domain, nll_loss with every target ignored), vs torch."""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn.functional as F

TF = torch.nn.functional
inf, nan = float("inf"), float("nan")


def _run(m, FF, f, vals, dtype):
    xs = [m.tensor(v, dtype=getattr(m, dtype)).requires_grad_() for v in vals]
    y = f(m, FF, *xs)
    y.sum().backward()
    return y.detach().numpy(), [x.grad.numpy() for x in xs]


CASES = [
    ("atan2_origin", lambda m, F, a, b: m.atan2(a, b), ([0., 1., 0., 1e-200], [0., 0., 2., 0.]), "float64"),
    ("atan2_origin_f32", lambda m, F, a, b: m.atan2(a, b), ([0., 1.], [0., 0.]), "float32"),
    ("hypot_no_overflow", lambda m, F, a, b: m.hypot(a, b), ([3e19, 0.], [4e19, 2.]), "float32"),
    ("hypot_inf_nan", lambda m, F, a, b: m.hypot(a, b), ([inf, nan, 3.], [nan, inf, 4.]), "float64"),
    ("huber_inf", lambda m, F, a, b: F.huber_loss(a, b), ([inf, -inf, 1., 0.5], [0., 0., inf, 0.]), "float64"),
    ("huber_inf_delta", lambda m, F, a, b: F.huber_loss(a, b, delta=0.3, reduction="sum"), ([inf, 0.1, -2.], [0., 0., 0.]), "float32"),
    ("smooth_l1_inf", lambda m, F, a, b: F.smooth_l1_loss(a, b), ([inf, -inf, 1., 0.5], [0., 0., inf, 0.]), "float64"),
    ("smooth_l1_inf_beta", lambda m, F, a, b: F.smooth_l1_loss(a, b, beta=2.), ([inf, 0.1, -3.], [0., 0., 0.]), "float32"),
    ("std_f32_1e20", lambda m, F, a: a.std(), ([3e19, -3e19, 1e20, 2e20],), "float32"),
    ("std_f32_dim", lambda m, F, a: a.std(dim=1), ([[3e19, -3e19], [1e20, 2e20]],), "float32"),
    ("clamp_nan_min_tensor", lambda m, F, a, b: m.clamp(a, min=b), ([1., 2., nan], [nan, 0., 0.]), "float64"),
    ("clamp_nan_max_tensor", lambda m, F, a, b: m.clamp(a, max=b), ([1., 2.], [nan, 0.]), "float64"),
    ("clamp_nan_both", lambda m, F, a, b, c: m.clamp(a, min=b, max=c), ([1., 2., 3.], [nan, 0., 5.], [0., nan, 4.]), "float64"),
    ("clamp_min_nan_number", lambda m, F, a: a.clamp_min(nan), ([1., 2.],), "float64"),
    ("clamp_max_nan_number", lambda m, F, a: a.clamp_max(nan), ([1., 2.],), "float64"),
    ("logit_outside", lambda m, F, a: m.logit(a), ([0., 1., 0.5, -1., 2., 0.25],), "float64"),
    ("logit_eps", lambda m, F, a: m.logit(a, eps=0.1), ([0., 1., 0.5, 0.1, 0.9, -1., 2.],), "float64"),
    ("xlogy_edges", lambda m, F, a, b: m.xlogy(a, b), ([0., 0., 0., 1., nan, 0., 2.], [0., inf, nan, 0., 1., -1., 3.]), "float64"),
    ("kl_div_target0", lambda m, F, a, b: F.kl_div(a, b, reduction="sum"), ([-1., -2., -0.5], [0., 0.5, 2.]), "float64"),
    ("kl_div_target_neg", lambda m, F, a, b: F.kl_div(a, b, reduction="batchmean"), ([[-1., -2.]], [[-0.5, 0.5]]), "float64"),
    ("elu_edges", lambda m, F, a: F.elu(a), ([0., -inf, inf, -1000.],), "float64"),
    ("celu_edges", lambda m, F, a: F.celu(a, alpha=2.), ([0., -inf, inf, -1.],), "float64"),
    ("selu_edges", lambda m, F, a: F.selu(a), ([0., -inf, inf, -1000.],), "float64"),
]


@pytest.mark.parametrize("name,f,vals,dtype", CASES, ids=[c[0] for c in CASES])
def test_edge_like_torch(name, f, vals, dtype):
    with np.errstate(all="ignore"):
        got, ggot = _run(tg, F, f, vals, dtype)
    exp, gexp = _run(torch, TF, f, vals, dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exp))
    np.testing.assert_allclose(got, exp, rtol=1e-6 if dtype == "float32" else 1e-12,
                               equal_nan=True)
    for a, b in zip(ggot, gexp):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == "float32" else 1e-12,
                                   atol=0, equal_nan=True)


@pytest.mark.parametrize("loss", ["nll", "ce"])
@pytest.mark.parametrize("weighted", [False, True])
def test_every_target_ignored_gives_zero_gradient(loss, weighted):
    vals = [[0.1, 0.2, 0.3], [0.3, 0.4, 0.5]]
    res = []
    for m, FF in ((tg, F), (torch, TF)):
        x = m.tensor(vals, dtype=m.float64).requires_grad_()
        w = m.tensor([1., 2., 3.], dtype=m.float64) if weighted else None
        t = m.tensor([-100, -100])
        y = (FF.nll_loss if loss == "nll" else FF.cross_entropy)(x, t, weight=w)
        y.backward()
        res.append((y.item(), x.grad.numpy()))
    assert np.isnan(res[0][0]) and np.isnan(res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert not np.isnan(res[0][1]).any()


def test_edge_rules_second_order_like_torch():
    # the new table entries (hypot, xlogy, logit, atan2) differentiate twice as torch
    for name, f, a, b in [
        ("hypot", lambda m, x, y: m.hypot(x, y), [3., 1.], [4., 2.]),
        ("xlogy", lambda m, x, y: m.xlogy(x, y), [0.5, 2.], [3., 0.5]),
        ("atan2", lambda m, x, y: m.atan2(x, y), [0.5, 2.], [3., -0.5]),
        ("logit", lambda m, x, y: m.logit(x * 0.1) * y, [0.5, 2.], [3., 0.5]),
    ]:
        res = []
        for m in (tg, torch):
            x = m.tensor(a, dtype=m.float64).requires_grad_()
            y = m.tensor(b, dtype=m.float64).requires_grad_()
            gx, gy = m.autograd.grad(f(m, x, y).sum(), (x, y), create_graph=True)
            (gx.pow(2).sum() + gy.pow(2).sum()).backward()
            res.append((x.grad.numpy(), y.grad.numpy()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-14, err_msg=name)

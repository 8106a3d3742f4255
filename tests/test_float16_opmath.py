"""float16 is computed in float32 and rounded once, as torch's "opmath" (core/opmath.py).

Differential against torch: values and float16 gradients of reductions, norms, matmuls,
pointwise ops with intermediate steps and nn kernels on float16 inputs whose float16
intermediates would overflow (300**2 + 400**2 > 65504) or lose counts (a float16 sum
stops at 2048), and the float32/float64 paths unchanged. Composites (ops/_opmath.py) and
the kernels that round at their own points (batch norm's statistics, log_softmax's sum,
adaptive_avg_pool3d's and nll_loss's float16 sums, the slow transposed convolution,
flash attention's weights) against torch's float16 results, bit for bit where possible.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn.functional as F

TF = torch.nn.functional


def _pair(a, rg=True):
    return (tg.tensor(a).half().requires_grad_(rg),
            torch.tensor(a, dtype=torch.float32).half().requires_grad_(rg))


def _close(got, exp):
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().float().numpy(), exp.detach().float().numpy(),
                               rtol=1e-3, atol=1e-3, equal_nan=True)


BIG = np.array([[300., 400., -250.], [200., 100., 150.]])
CASES = {
    "norm": lambda x, m, F: x.norm(),
    "norm_dim": lambda x, m, F: m.linalg.vector_norm(x, dim=1),
    "normalize": lambda x, m, F: F.normalize(x, dim=1),
    "rms_norm": lambda x, m, F: F.rms_norm(x, (3,)),
    "cosine_similarity": lambda x, m, F: F.cosine_similarity(x, x * 2),
    "var": lambda x, m, F: x.var(),
    "std": lambda x, m, F: x.std(dim=0),
    "sum_sq": lambda x, m, F: (x * x).sum() / 1000,
    "logsumexp": lambda x, m, F: (x / 50).logsumexp(1),
    "softmax": lambda x, m, F: (x / 50).softmax(1),
    "log_softmax": lambda x, m, F: (x / 50).log_softmax(1),
    "layer_norm": lambda x, m, F: F.layer_norm(x, (3,)),
    "mean": lambda x, m, F: x.mean(),
    "matmul": lambda x, m, F: x @ x.t(),
    "gelu": lambda x, m, F: F.gelu(x / 100),
    "softplus": lambda x, m, F: F.softplus(x / 100),
    "cumsum": lambda x, m, F: (x * 10).cumsum(1),
    "mse": lambda x, m, F: F.mse_loss(x, x * 0),
    "linear": lambda x, m, F: F.linear(x, x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_like_torch(name):
    f = CASES[name]
    x, t = _pair(BIG)
    y, z = f(x, tg, F), f(t, torch, TF)
    _close(y, z)
    cot = np.random.default_rng(0).standard_normal(tuple(z.shape))
    y.backward(tg.tensor(cot).half())
    z.backward(torch.tensor(cot, dtype=torch.float32).half())
    assert x.grad.dtype == tg.float16
    _close(x.grad, t.grad)


def test_clip_grad_norm_float16():
    a, b = _pair([300., 400.])
    a.grad, b.grad = tg.tensor([300., 400.]).half(), torch.tensor([300., 400.]).half()
    _close(tg.nn.utils.clip_grad_norm_([a], 1.0), torch.nn.utils.clip_grad_norm_([b], 1.0))
    _close(a.grad, b.grad)
    assert np.isfinite(a.grad.float().numpy()).all() and a.grad.float().numpy()[1] > 0.7
    a.grad, b.grad = tg.tensor([300., 400.]).half(), torch.tensor([300., 400.]).half()
    _close(tg.nn.utils.clip_grad_norm_([a], 1.0, norm_type=3),
           torch.nn.utils.clip_grad_norm_([b], 1.0, norm_type=3))


def test_linear_half_bias_gradient_counts_past_2048():
    torch.manual_seed(0)
    lt = torch.nn.Linear(4, 2).half()
    lg = tg.nn.Linear(4, 2).half()
    lg.load_state_dict({k: tg.from_numpy(v.detach().numpy().copy())
                        for k, v in lt.state_dict().items()})
    xt, xg = torch.ones(3000, 4).half(), tg.ones(3000, 4).half()
    lt(xt).sum().backward()
    lg(xg).sum().backward()
    _close(lg.bias.grad, lt.bias.grad)
    assert lg.bias.grad.float().numpy().tolist() == [3000.0, 3000.0]
    _close(lg.weight.grad, lt.weight.grad)


def test_mixed_dtypes_and_views_unchanged():
    x = tg.tensor([1., 2., 3.]).half()
    assert (x + tg.tensor([1., 2., 3.])).dtype == tg.float32  # float32 input decides
    assert x.sum(dtype=tg.float32).dtype == tg.float32       # dtype= decides
    assert x.float().dtype == tg.float32 and x.double().dtype == tg.float64
    v = x[1:]                                                 # a view stays a view
    v.add_(1)
    assert x.tolist() == [1.0, 3.0, 4.0]
    assert x.argmax().dtype == tg.int64 and (x > 1).dtype == tg.bool


def test_float32_and_float64_paths_unchanged():
    # the float32 square overflows as in torch: no widening for float32
    for dt, tdt in ((tg.float32, torch.float32), (tg.float64, torch.float64)):
        a = tg.tensor([3e19, 4e19], dtype=dt)
        b = torch.tensor([3e19, 4e19], dtype=tdt)
        np.testing.assert_array_equal((a * a).numpy(), (b * b).numpy())
        np.testing.assert_array_equal(a.sum().numpy(), b.sum().numpy())


# ---- composites and kernels that round where torch's kernels round --------------------
# Each case is checked against torch's float16 result on random float16 inputs whose
# stepwise float16 evaluation differs from torch's: bit for bit where the kernel is
# arithmetic only, with torch.testing's float16 tolerance where torch's float32 exp/log
# (SLEEF's, vectorized) or its BLAS/oneDNN summation order may move a rounding by one.
def _h(rng, *shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, shape).astype(np.float16)


def _pairs(arrays, rg=False):
    return ([tg.tensor(a).requires_grad_(rg) for a in arrays],
            [torch.tensor(a).requires_grad_(rg) for a in arrays])


KERNEL_CASES = {
    "addcmul": ((5, 6), (5, 6), (5, 6), lambda m, F, a, b, c: m.addcmul(a, b, c, value=0.3)),
    "addcdiv": ((5, 6), (5, 6), (5, 6),
                lambda m, F, a, b, c: m.addcdiv(a, b, c.abs() + 0.5, value=-0.7)),
    "lerp": ((5, 6), (5, 6), lambda m, F, a, b: m.lerp(a, b, 0.3)),
    "lerp_tensor": ((5, 6), (5, 6), (5, 6), lambda m, F, a, b, w: m.lerp(a, b, w)),
    "logaddexp": ((6, 7), (6, 7), lambda m, F, a, b: m.logaddexp(a, b)),
    "exp2": ((6, 7), lambda m, F, a: m.exp2(a)),
    "sinc": ((6, 7), lambda m, F, a: m.sinc(a)),
    "logit": ((6, 7), lambda m, F, a: m.logit(a.sigmoid())),
    "logit_eps": ((6, 7), lambda m, F, a: m.logit(a / 4 + 0.5, eps=0.2)),
    "addr": ((4, 5), (4,), (5,), lambda m, F, a, b, c: m.addr(a, b, c, beta=0.6, alpha=0.2)),
    "softplus": ((6, 7), lambda m, F, a: F.softplus(a, beta=3, threshold=5)),
    "log_softmax_last": ((5, 9), lambda m, F, a: (a * 3).log_softmax(-1)),
    "log_softmax_inner": ((9, 5), lambda m, F, a: (a * 3).log_softmax(0)),
    "huber": ((6, 7), (6, 7), lambda m, F, a, b: F.huber_loss(a * 3, b, reduction="none",
                                                              delta=2.7)),
    "huber_sum": ((6, 7), (6, 7), lambda m, F, a, b: F.huber_loss(a * 3, b, reduction="sum",
                                                                  delta=2.7)),
    "multilabel_soft_margin": ((4, 9), (4, 9), lambda m, F, a, b: F.multilabel_soft_margin_loss(
        a, (b > 0).to(a.dtype), reduction="none")),
    "group_norm": ((3, 4, 5), (4,), (4,), lambda m, F, a, w, b: F.group_norm(a * 8, 2, w, b)),
    "batch_norm_train": ((6, 3, 4), (3,), (3,), lambda m, F, a, w, b: F.batch_norm(
        a * 8, None, None, w, b, training=True, eps=0.3)),
    "batch_norm_eval": ((6, 3, 4), (3,), (3,), lambda m, F, a, w, b: F.batch_norm(
        a * 8, w, b.abs() + 0.5, w, b, training=False)),
    "instance_norm": ((2, 3, 7), (3,), (3,), lambda m, F, a, w, b: F.instance_norm(
        a * 8, weight=w, bias=b, eps=0.6)),
    "interpolate_linear": ((2, 3, 4), lambda m, F, a: F.interpolate(
        a, scale_factor=1.7, mode="linear")),
    "interpolate_bilinear": ((2, 2, 4, 3), lambda m, F, a: F.interpolate(
        a, size=(6, 5), mode="bilinear", align_corners=True)),
    "interpolate_trilinear": ((1, 2, 4, 3, 5), lambda m, F, a: F.interpolate(
        a, size=(5, 4, 6), mode="trilinear")),
    "adaptive_avg_pool3d": ((2, 3, 8, 8, 6), lambda m, F, a: F.adaptive_avg_pool3d(
        a * 40, (5, 7, 4))),
    "adaptive_avg_pool3d_global": ((2, 3, 4, 3, 7), lambda m, F, a: F.adaptive_avg_pool3d(
        a * 40, 1)),
    "bilinear": ((3, 4), (3, 5), (2, 4, 5), (2,),
                 lambda m, F, a, b, w, c: F.bilinear(a, b, w, c)),
    "sdpa_4d": ((2, 2, 3, 8), (2, 2, 6, 8), (2, 2, 6, 8),
                lambda m, F, q, k, v: F.scaled_dot_product_attention(q * 2, k, v)),
    "sdpa_4d_causal": ((2, 2, 3, 8), (2, 2, 6, 8), (2, 2, 6, 8),
                       lambda m, F, q, k, v: F.scaled_dot_product_attention(q * 2, k, v,
                                                                           is_causal=True)),
    "sdpa_3d": ((2, 3, 8), (2, 6, 8), (2, 6, 8),
                lambda m, F, q, k, v: F.scaled_dot_product_attention(q * 2, k, v)),
}
PRODUCT_CASES = {
    "addmm": ((3, 5), (3, 4), (4, 5), lambda m, F, a, b, c: m.addmm(a, b, c, beta=0.6,
                                                                     alpha=0.2)),
    "baddbmm": ((2, 3, 5), (2, 3, 4), (2, 4, 5), lambda m, F, a, b, c: m.baddbmm(
        a, b, c, beta=0.6, alpha=0.2)),
    "addbmm": ((3, 5), (4, 3, 6), (4, 6, 5), lambda m, F, a, b, c: m.addbmm(
        a, b * 4, c * 4, beta=0.6, alpha=0.2)),
    "conv_transpose1d": ((2, 4, 5), (4, 3, 3), (3,), lambda m, F, a, w, b: F.conv_transpose1d(
        a, w, b, stride=2, padding=1)),
    "conv_transpose2d": ((1, 2, 5, 5), (2, 4, 3, 3), (4,), lambda m, F, a, w, b:
                         F.conv_transpose2d(a, w, b, stride=2)),
    "conv_transpose3d": ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), (2,), lambda m, F, a, w, b:
                         F.conv_transpose3d(a, w, b, stride=(1, 2, 1), padding=1)),
}


def _run(case, seed):
    *shapes, f = case
    rng = np.random.default_rng(seed)
    (xs, ts) = _pairs([_h(rng, *s) for s in shapes])
    return f(tg, F, *xs), f(torch, TF, *ts)


def _same_bits(got, exp):
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1] == "float16"
    np.testing.assert_array_equal(got.detach().numpy(), exp.detach().numpy())


EXACT = {"addcmul", "addcdiv", "lerp", "lerp_tensor", "addr", "interpolate_linear",
         "interpolate_bilinear", "interpolate_trilinear", "adaptive_avg_pool3d", "huber",
         "huber_sum"}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(KERNEL_CASES))
def test_float16_kernels_round_like_torch(name, seed):
    got, exp = _run(KERNEL_CASES[name], seed)
    if name in EXACT:
        _same_bits(got, exp)
    else:
        assert got.dtype == tg.float16
        np.testing.assert_allclose(got.detach().float().numpy(),
                                   exp.detach().float().numpy(), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(PRODUCT_CASES))
def test_float16_products_round_once_like_torch(name, seed):
    got, exp = _run(PRODUCT_CASES[name], seed)
    assert got.dtype == tg.float16
    np.testing.assert_allclose(got.detach().float().numpy(), exp.detach().float().numpy(),
                               rtol=1e-3, atol=1e-5)


def _float16_grads_like_torch(rng, xs, ts, y, z):
    """Backward from one random float16 cotangent through both results: every input's
    gradient float16, close to torch's."""
    cot = rng.standard_normal(tuple(z.shape)).astype(np.float16)
    y.backward(tg.tensor(cot))
    z.backward(torch.tensor(cot))
    for a, b in zip(xs, ts):
        assert a.grad.dtype == tg.float16
        np.testing.assert_allclose(a.grad.float().numpy(), b.grad.float().numpy(),
                                   rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", ["addcmul", "lerp_tensor", "group_norm", "batch_norm_train",
                                  "instance_norm", "interpolate_trilinear", "bilinear",
                                  "sdpa_4d", "adaptive_avg_pool3d", "log_softmax_last",
                                  "huber_sum", "softplus"])
def test_float16_gradients_like_torch(name):
    """The float32 paths keep the graph: float16 gradients of every input, as torch's."""
    *shapes, f = KERNEL_CASES[name]
    rng = np.random.default_rng(5)
    xs, ts = _pairs([_h(rng, *s) for s in shapes], rg=True)
    y, z = f(tg, F, *xs), f(torch, TF, *ts)
    _float16_grads_like_torch(rng, xs, ts, y, z)


OVERFLOW_CASES = {  # float16 intermediates overflow (> 65504); torch's results are finite
    "addcmul": lambda m, F, h: m.addcmul(h([-60000.]), h([300.]), h([300.]), value=0.5),
    "addcdiv": lambda m, F, h: m.addcdiv(h([-60000.]), h([60000.]), h([0.5]), value=0.5),
    "lerp": lambda m, F, h: m.lerp(h([-60000.]), h([60000.]), 0.5),
    "addmm": lambda m, F, h: m.addmm(h([[-1000.]]), h([[300., 300.]]), h([[300.], [300.]]),
                                     alpha=0.25),
    "baddbmm": lambda m, F, h: m.baddbmm(h([[[-1000.]]]), h([[[300., 300.]]]),
                                         h([[[300.], [300.]]]), alpha=0.25),
    "addbmm": lambda m, F, h: m.addbmm(h([[-1000.]]), h([[[300., 300.]]]),
                                       h([[[300.], [300.]]]), alpha=0.25),
    "huber": lambda m, F, h: F.huber_loss(h([60000.]), h([-60000.]), delta=0.1,
                                          reduction="none"),
    "group_norm": lambda m, F, h: F.group_norm(h([[[300., -300., 250., 200.]]]), 1),
    "instance_norm": lambda m, F, h: F.instance_norm(h([[[300., -300., 250., 200.]]])),
    "batch_norm": lambda m, F, h: F.batch_norm(h([[300.], [-300.], [250.], [200.]]), None,
                                               None, training=True),
    "sdpa_4d": lambda m, F, h: F.scaled_dot_product_attention(
        h(np.full((1, 1, 2, 8), 100.)), h(np.full((1, 1, 2, 8), 100.)),
        h(np.arange(16.).reshape(1, 1, 2, 8))),
    "sdpa_3d": lambda m, F, h: F.scaled_dot_product_attention(
        h(np.full((1, 2, 8), 100.)), h(np.full((1, 2, 8), 100.)),
        h(np.arange(16.).reshape(1, 2, 8))),
    "softplus": lambda m, F, h: F.softplus(h([3000., -3000.]), beta=30),
}


@pytest.mark.parametrize("name", sorted(OVERFLOW_CASES))
def test_float16_overflowing_intermediates_like_torch(name):
    f = OVERFLOW_CASES[name]
    got = f(tg, F, lambda v: tg.tensor(np.asarray(v, np.float16)))
    exp = f(torch, TF, lambda v: torch.tensor(np.asarray(v, np.float16)))
    assert np.isfinite(exp.float().numpy()).all()  # the case is one torch computes finitely
    np.testing.assert_allclose(got.float().numpy(), exp.float().numpy(), rtol=1e-3, atol=1e-5)


def test_float16_adaptive_avg_pool3d_overflows_where_torch_does():
    # torch sums each window in float16: 40000 + 40000 overflows there, as here
    a = np.full((1, 1, 2, 2, 2), 40000., np.float16)
    got = F.adaptive_avg_pool3d(tg.tensor(a), (1, 1, 2))
    exp = TF.adaptive_avg_pool3d(torch.tensor(a), (1, 1, 2))
    assert np.isinf(exp.float().numpy()).all()
    _same_bits(got, exp)


@pytest.mark.parametrize("shape", [(40, 5), (3, 5, 6, 7), (2, 5, 300), (1, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_float16_nll_loss_sums_like_torch(shape, reduction, weighted):
    """torch sums float16 losses in a cascade of float16 partial sums (levels of 16)."""
    rng = np.random.default_rng(len(shape) + weighted)
    a = (rng.standard_normal(shape) * 4).astype(np.float16)
    tgt = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    tgt.reshape(-1)[::7] = -100  # ignored: the cascade skips them
    w = rng.uniform(0.5, 2, shape[1]).astype(np.float16) if weighted else None
    (x,), (t,) = _pairs([a], rg=True)
    y = F.nll_loss(x, tg.tensor(tgt), None if w is None else tg.tensor(w),
                   reduction=reduction)
    z = TF.nll_loss(t, torch.tensor(tgt), None if w is None else torch.tensor(w),
                    reduction=reduction)
    _same_bits(y, z)
    y.backward()
    z.backward()
    np.testing.assert_allclose(x.grad.float().numpy(), t.grad.float().numpy(), rtol=1e-3,
                               atol=1e-5)


SLOW_TRANSPOSE_CASES = {  # output_padding >= stride: torch's slow kernel (col2im in float16)
    "2d_groups": ((2, 2, 4, 4), (2, 2, 4, 5), (4,), lambda m, F, a, w, b: F.conv_transpose2d(
        a * 3, w * 3, b, stride=(3, 2), padding=(1, 2), output_padding=(2, 3), groups=2,
        dilation=(4, 4))),
    "1d": ((2, 3, 5), (3, 2, 3), (2,), lambda m, F, a, w, b: F.conv_transpose1d(
        a * 3, w * 3, b, stride=2, output_padding=2, dilation=3)),
    "3d": ((1, 2, 3, 3, 2), (2, 3, 2, 2, 3), (3,), lambda m, F, a, w, b: F.conv_transpose3d(
        a * 3, w * 3, b, stride=(1, 2, 1), output_padding=(0, 2, 1), dilation=(1, 3, 2))),
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(SLOW_TRANSPOSE_CASES))
def test_float16_conv_transpose_slow_kernel_like_torch(name, seed):
    *shapes, f = SLOW_TRANSPOSE_CASES[name]
    rng = np.random.default_rng(seed)
    xs, ts = _pairs([_h(rng, *s) for s in shapes], rg=True)
    y, z = f(tg, F, *xs), f(torch, TF, *ts)
    _same_bits(y, z)
    _float16_grads_like_torch(rng, xs, ts, y, z)


@pytest.mark.parametrize("name", ["addcmul_", "addcdiv_", "lerp_"])
def test_float16_inplace_forms_round_once_like_torch(name):
    """The optimizers' in-place forms (Adam's addcmul_/addcdiv_, EMA's lerp_) on float16."""
    rng = np.random.default_rng(7)
    a, b, c = (_h(rng, 6, 7) for _ in range(3))
    args = {"addcmul_": lambda m, b, c: (b, c), "addcdiv_": lambda m, b, c: (b, c.abs() + 0.5),
            "lerp_": lambda m, b, c: (b, 0.3)}[name]
    kw = {} if name == "lerp_" else {"value": -0.7}
    x, t = tg.tensor(a), torch.tensor(a)
    getattr(x, name)(*args(tg, tg.tensor(b), tg.tensor(c)), **kw)
    getattr(t, name)(*args(torch, torch.tensor(b), torch.tensor(c)), **kw)
    _same_bits(x, t)
    # through a graph: the gradient of the old value and the operands
    (xs, ts) = _pairs([a, b, c], rg=True)
    y, z = xs[0] * 1, ts[0] * 1
    getattr(y, name)(*args(tg, xs[1], xs[2]), **kw)
    getattr(z, name)(*args(torch, ts[1], ts[2]), **kw)
    _same_bits(y, z)
    y.sum().backward()
    z.sum().backward()
    for p, q in zip(xs, ts):
        if q.grad is None:  # lerp_'s third array is not an operand
            assert p.grad is None
            continue
        np.testing.assert_allclose(p.grad.float().numpy(), q.grad.float().numpy(), rtol=2e-2,
                                   atol=2e-2)


@pytest.mark.parametrize("cls, shape", [("BatchNorm2d", (4, 3, 5, 5)),
                                        ("InstanceNorm1d", (4, 3, 7))])
def test_float16_norm_modules_and_running_stats_like_torch(cls, shape):
    torch.manual_seed(0)
    mt = getattr(torch.nn, cls)(3, momentum=0.3, track_running_stats=True).half()
    mg = getattr(tg.nn, cls)(3, momentum=0.3, track_running_stats=True).half()
    for _ in range(3):
        x = (torch.randn(shape) * 5 + 1).half()
        _same_bits(mg(tg.tensor(x.numpy())), mt(x).detach())
    _same_bits(mg.running_mean, mt.running_mean)
    _same_bits(mg.running_var, mt.running_var)
    mt.eval()
    mg.eval()
    _same_bits(mg(tg.tensor(x.numpy())), mt(x).detach())


def test_bfloat16_method_refuses():
    with pytest.raises(TypeError, match="bfloat16 is not supported"):
        tg.ones(2).bfloat16()


@pytest.mark.parametrize("name", ["addcmul", "lerp", "group_norm", "interpolate_linear",
                                  "huber", "softplus", "log_softmax_last"])
def test_float32_composites_unchanged(name):
    """float32 takes the stepwise path as before (no widening to float64)."""
    *shapes, f = KERNEL_CASES[name]
    rng = np.random.default_rng(3)
    arrays = [_h(rng, *s).astype(np.float32) for s in shapes]
    xs, ts = _pairs(arrays)
    y, z = f(tg, F, *xs), f(torch, TF, *ts)
    assert y.dtype == tg.float32
    np.testing.assert_allclose(y.numpy(), z.numpy(), rtol=1.3e-6, atol=1e-5)

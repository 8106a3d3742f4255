"""tg.nn.functional vs torch.nn.functional (values and gradients, float64 tight and
float32), fused kernels vs their composite references (worked example 9 and the
others), the layer rules of worked example 10, float64 gradcheck of every fused
entry, and error messages."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.nn import composite_reference as R
from _nn_helpers import TOL, close

DTYPES = [np.float64, np.float32]


def _pair(a, dtype=np.float64, rg=True):
    a = np.asarray(a, dtype=dtype)
    return tg.tensor(a, requires_grad=rg), torch.tensor(a, requires_grad=rg)


def _both(fn_tg, fn_th, arrays, dtype, seed=0):
    """Run fn on the same float arrays in both libraries; compare outputs and grads."""
    pairs = [_pair(a, dtype) if a is not None else (None, None) for a in arrays]
    out = fn_tg(*[p[0] for p in pairs])
    oth = fn_th(*[p[1] for p in pairs])
    close(out, oth, dtype, "output")
    cot = np.random.default_rng(seed).standard_normal(tuple(oth.shape)).astype(dtype)
    out.backward(tg.tensor(cot))
    oth.backward(torch.tensor(cot))
    for i, (a, b) in enumerate(pairs):
        if a is not None:
            if b.grad is None:  # not differentiable in torch (e.g. detached stats)
                assert a.grad is None, f"input {i} got a gradient, torch's has none"
                continue
            close(a.grad, b.grad, dtype, f"grad of input {i}")
    return out, oth


r = np.random.default_rng(0).standard_normal

FUNCS = [
    ("linear", lambda L, x, w, b: L.linear(x, w, b), [r((5, 4)), r((3, 4)), r(3)]),
    ("linear-3d", lambda L, x, w, b: L.linear(x, w, b), [r((2, 5, 4)), r((3, 4)), r(3)]),
    ("linear-nobias", lambda L, x, w: L.linear(x, w), [r((5, 4)), r((3, 4))]),
    ("relu", lambda L, x: L.relu(x), [r((4, 5))]),
    ("leaky_relu", lambda L, x: L.leaky_relu(x, 0.3), [r((4, 5))]),
    ("leaky_relu-default", lambda L, x: L.leaky_relu(x), [r((4, 5))]),
    ("gelu", lambda L, x: L.gelu(x), [r((4, 5)) * 3]),
    ("gelu-tanh", lambda L, x: L.gelu(x, approximate="tanh"), [r((4, 5)) * 3]),
    ("silu", lambda L, x: L.silu(x), [r((4, 5))]),
    ("tanh", lambda L, x: L.tanh(x), [r((4, 5))]),
    ("sigmoid", lambda L, x: L.sigmoid(x), [r((4, 5)) * 5]),
    ("softmax", lambda L, x: L.softmax(x, dim=1), [r((4, 5)) * 4]),
    ("softmax-0", lambda L, x: L.softmax(x, dim=0), [r((4, 5))]),
    ("log_softmax", lambda L, x: L.log_softmax(x, dim=-1), [r((3, 4, 5)) * 4]),
    ("layer_norm", lambda L, x, w, b: L.layer_norm(x, (5,), w, b), [r((4, 5)), r(5), r(5)]),
    ("layer_norm-2", lambda L, x, w, b: L.layer_norm(x, (3, 5), w, b, eps=1e-3),
     [r((2, 3, 5)), r((3, 5)), r((3, 5))]),
    ("layer_norm-plain", lambda L, x: L.layer_norm(x, [5]), [r((4, 5))]),
    ("batch_norm-train", lambda L, x, w, b: L.batch_norm(x, None, None, w, b, training=True),
     [r((6, 3)), r(3), r(3)]),
    ("batch_norm-NCL", lambda L, x, w, b: L.batch_norm(x, None, None, w, b, True, 0.1, 1e-3),
     [r((4, 3, 5)), r(3), r(3)]),
    ("batch_norm-eval", lambda L, x, w, b, m, v: L.batch_norm(x, m.detach(), v.detach().abs(),
                                                              w, b, training=False),
     [r((6, 3)), r(3), r(3), r(3), r(3)]),
    ("dropout-eval", lambda L, x: L.dropout(x, 0.5, training=False), [r((4, 5))]),
    ("dropout-p0", lambda L, x: L.dropout(x, 0.0), [r((4, 5))]),
    ("mse", lambda L, x, y: L.mse_loss(x, y), [r((4, 5)), r((4, 5))]),
    ("pad", lambda L, x: L.pad(x, (1, 2)), [r((2, 3))]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,fn,arrays", FUNCS, ids=[f[0] for f in FUNCS])
def test_functional_vs_torch(name, fn, arrays, dtype):
    _both(lambda *a: fn(F, *a), lambda *a: fn(TF, *a), arrays, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_stats_vs_torch(dtype, momentum):
    x = r((7, 3, 2)) * 2 + 1
    rm, rv = np.zeros(3, dtype), np.ones(3, dtype)
    trm, trv = torch.tensor(rm.copy()), torch.tensor(rv.copy())
    grm, grv = tg.tensor(rm.copy()), tg.tensor(rv.copy())
    for _ in range(3):
        F.batch_norm(tg.tensor(x.astype(dtype)), grm, grv, training=True, momentum=momentum)
        TF.batch_norm(torch.tensor(x.astype(dtype)), trm, trv, training=True, momentum=momentum)
    close(grm, trm, dtype, "running_mean")
    close(grv, trv, dtype, "running_var")


def test_embedding_vs_torch():
    idx = np.array([[0, 3, 3], [1, 3, 0]])
    for pad in (None, 3):
        w, wt = _pair(r((4, 2)))
        out = F.embedding(tg.tensor(idx), w, padding_idx=pad)
        oth = TF.embedding(torch.tensor(idx), wt, padding_idx=pad)
        close(out, oth, np.float64)
        cot = r(tuple(oth.shape))
        out.backward(tg.tensor(cot))
        oth.backward(torch.tensor(cot))
        close(w.grad, wt.grad, np.float64, f"padding_idx={pad}")


def test_one_hot_reexported():
    close(F.one_hot(tg.tensor([0, 2, 1]), 4), TF.one_hot(torch.tensor([0, 2, 1]), 4),
          np.float64)


# ---- hypothesis: random shapes --------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 5), st.booleans(),
       st.integers(0, 2 ** 31 - 1))
def test_linear_hypothesis(lead, fin, fout, bias, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((lead, 2, fin)), rng.standard_normal((fout, fin))]
    if bias:
        arrays.append(rng.standard_normal(fout))
    _both(lambda *a: F.linear(*a), lambda *a: TF.linear(*a), arrays, np.float64)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 4), st.integers(0, 3), st.integers(0, 2 ** 31 - 1))
def test_norms_hypothesis(n, c, extra, seed):
    rng = np.random.default_rng(seed)
    shape = (n, c) + (2,) * min(extra, 2)
    x, w, b = rng.standard_normal(shape) * 3, rng.standard_normal(c), rng.standard_normal(c)
    _both(lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
          lambda x, w, b: TF.batch_norm(x, None, None, w, b, True), [x, w, b], np.float64)
    ns = shape[1:]
    w2, b2 = rng.standard_normal(ns), rng.standard_normal(ns)
    _both(lambda x, w, b: F.layer_norm(x, ns, w, b), lambda x, w, b: TF.layer_norm(x, ns, w, b),
          [x, w2, b2], np.float64)


# ---- worked example 9: fused batch norm vs the op-by-op composite -----------------------------
@pytest.mark.parametrize("correction", [0, 1], ids=["biased(pytorch)", "bessel(makemore)"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("shape", [(32, 8), (16, 4, 5)])
def test_batch_norm_fused_matches_composite(correction, dtype, shape):
    rng = np.random.default_rng(1)
    x0, w0, b0 = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape[1]), \
        rng.standard_normal(shape[1])
    cot = rng.standard_normal(shape).astype(dtype)
    res = []
    for fused in (True, False):
        x, w, b = (tg.tensor(a.astype(dtype), requires_grad=True) for a in (x0, w0, b0))
        if fused:
            y = F.batch_norm(x, None, None, w, b, training=True, correction=correction)
            assert y.grad_fn.name == "batch_norm"  # ONE node
        else:
            y = R.batch_norm(x, w, b, correction=correction)
        y.backward(tg.tensor(cot))
        res.append((y.numpy(force=True), x.grad.numpy(force=True), w.grad.numpy(force=True), b.grad.numpy(force=True)))
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    for a, b_ in zip(*res):
        np.testing.assert_allclose(a, b_, **tol)
    # and the Bessel form against torch's autograd on the same composite
    xt, wt, bt = (torch.tensor(a.astype(dtype), requires_grad=True) for a in (x0, w0, b0))
    axes = (0,) + tuple(range(2, len(shape)))
    bs = (1, shape[1]) + (1,) * (len(shape) - 2)
    yt = (xt - xt.mean(axes, keepdim=True)) / torch.sqrt(
        xt.var(axes, keepdim=True, correction=correction) + 1e-5) * wt.view(bs) + bt.view(bs)
    yt.backward(torch.tensor(cot))
    close(res[0][0], yt, dtype, "value vs torch composite")
    close(res[0][1], xt.grad, dtype, "dx vs torch composite")


def test_batch_norm_correction_running_var():
    """With correction=1 the batch variance is already unbiased: running_var gets it as is."""
    x = r((5, 2))
    rm, rv = tg.zeros(2, dtype=tg.float64), tg.ones(2, dtype=tg.float64)
    F.batch_norm(tg.tensor(x), rm, rv, training=True, momentum=1.0, correction=1)
    np.testing.assert_allclose(rv.numpy(force=True), x.var(0, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(force=True), x.mean(0), rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_other_fused_kernels_match_composites(dtype):
    rng = np.random.default_rng(2)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)

    def run(f, arrays, idx_args=()):
        ts = [tg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
        y = f(*ts)
        cot = np.random.default_rng(3).standard_normal(tuple(y.shape)).astype(dtype)
        y.backward(tg.tensor(cot))
        return [y.numpy(force=True)] + [t.grad.numpy(force=True) for t in ts]

    cases = [
        (lambda x, w, b: F.linear(x, w, b), R.linear,
         [rng.standard_normal((6, 4)), rng.standard_normal((3, 4)), rng.standard_normal(3)]),
        (lambda x, w, b: F.layer_norm(x, (5,), w, b), lambda x, w, b: R.layer_norm(x, (5,), w, b),
         [rng.standard_normal((3, 4, 5)), rng.standard_normal(5), rng.standard_normal(5)]),
        (lambda w: F.embedding(tg.tensor([[1, 2, 1], [0, 1, 1]]), w),
         lambda w: R.embedding(tg.tensor([[1, 2, 1], [0, 1, 1]]), w),
         [rng.standard_normal((4, 3))]),
        (lambda x: F.gelu(x, approximate="tanh"), R.gelu_tanh, [rng.standard_normal((4, 5))]),
    ]
    for fused, comp, arrays in cases:
        for a, b in zip(run(fused, arrays), run(comp, arrays)):
            np.testing.assert_allclose(a, b, **tol)


# ---- worked example 10: the layer rules ------------------------------------------------------
def test_layer_rules_worked_example_10():
    rng = np.random.default_rng(0)
    X, W, b = rng.standard_normal((5, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)
    dY = rng.standard_normal((5, 4))
    x, w, bb = (tg.tensor(a, requires_grad=True) for a in (X, W, b))
    F.linear(x, w, bb).backward(tg.tensor(dY))
    np.testing.assert_allclose(x.grad.numpy(force=True), dY @ W, rtol=1e-12)        # dX = dY W
    np.testing.assert_allclose(w.grad.numpy(force=True), dY.T @ X, rtol=1e-12)      # dW = dY^T X
    np.testing.assert_allclose(bb.grad.numpy(force=True), dY.sum(0), rtol=1e-12)    # db = dY.sum(0)
    # ReLU passes the gradient where the input was > 0 (and NOT at 0)
    x = tg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    F.relu(x).backward(tg.tensor([5.0, 5.0, 5.0]))
    np.testing.assert_array_equal(x.grad.numpy(force=True), [0.0, 0.0, 5.0])
    # sigmoid s (1 - s) and tanh 1 - out^2, from the saved OUTPUT
    x = tg.tensor(X, requires_grad=True)
    s = F.sigmoid(x)
    s.backward(tg.ones_like(s))
    np.testing.assert_allclose(x.grad.numpy(force=True), s.numpy(force=True) * (1 - s.numpy(force=True)), rtol=1e-12)
    x = tg.tensor(X, requires_grad=True)
    t = F.tanh(x)
    t.backward(tg.ones_like(t))
    np.testing.assert_allclose(x.grad.numpy(force=True), 1 - t.numpy(force=True) ** 2, rtol=1e-12)
    # broadcasting in forward = sum in backward
    bias = tg.tensor(b, requires_grad=True)
    (tg.tensor(dY) + bias).backward(tg.tensor(dY))
    np.testing.assert_allclose(bias.grad.numpy(force=True), dY.sum(0), rtol=1e-12)
    # embedding with repeated indices: gradients ADD
    E = tg.tensor(W, requires_grad=True)
    F.embedding(tg.tensor([2, 0, 2, 2]), E).backward(tg.tensor(rng.standard_normal((4, 3))))
    g = E.grad.numpy(force=True)
    assert not np.any(g[[1, 3]])
    # residual y = x + f(x): dx = dy + (gradient through f)
    x = tg.tensor(X, requires_grad=True)
    y = x + F.tanh(x)
    y.backward(tg.ones_like(y))
    np.testing.assert_allclose(x.grad.numpy(force=True), 1 + (1 - np.tanh(X) ** 2), rtol=1e-12)


def test_embedding_repeated_rows_sum_exactly():
    W = tg.zeros(3, 2, requires_grad=True)
    G = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]])
    F.embedding(tg.tensor([1, 1, 1]), W).backward(tg.tensor(G, dtype=tg.float32))
    np.testing.assert_array_equal(W.grad.numpy(force=True), [[0, 0], [111, 222], [0, 0]])


# ---- float64 gradcheck of every fused entry (incl. options the op database skips) -------------
GRADCHECKS = [
    ("linear", lambda x, w, b: F.linear(x, w, b), [(3, 4), (2, 4), (2,)]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [(5, 3), (3,), (3,)]),
    ("batch_norm-bessel", lambda x, w, b: F.batch_norm(x, None, None, w, b, True, correction=1),
     [(5, 3, 2), (3,), (3,)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (2, 3), w, b), [(2, 2, 3), (2, 3), (2, 3)]),
    ("embedding", lambda w: F.embedding(tg.tensor([[0, 2], [2, 2]]), w), [(3, 2)]),
    ("gelu", lambda x: F.gelu(x), [(3, 4)]),
    ("gelu-tanh", lambda x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    ("leaky_relu", lambda x: F.leaky_relu(x + 0.05, 0.1), [(3, 4)]),
    ("cross_entropy", lambda x: F.cross_entropy(x, tg.tensor([0, 2, 1, 2]),
                                                label_smoothing=0.1), [(4, 3)]),
    ("cross_entropy-w", lambda x: F.cross_entropy(x, tg.tensor([0, 2, 1, 2]),
                                                  weight=tg.tensor([1.0, 2.0, 0.5]),
                                                  ignore_index=1, reduction="sum"), [(4, 3)]),
    ("nll_loss", lambda x: F.nll_loss(x, tg.tensor([0, 2, 1])), [(3, 3)]),
    ("bce", lambda x, y: F.binary_cross_entropy(F.sigmoid(x), F.sigmoid(y)), [(3, 2), (3, 2)]),
    ("bce_logits", lambda x, y, p: F.binary_cross_entropy_with_logits(x, F.sigmoid(y),
                                                                      pos_weight=p.exp()),
     [(3, 2), (3, 2), (2,)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECKS, ids=[g[0] for g in GRADCHECKS])
def test_gradcheck_fused(name, fn, shapes):
    rng = np.random.default_rng(4)
    args = [tg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert tg.autograd.gradcheck(fn, args)
    assert tg.autograd.gradgradcheck(fn, args)


# ---- errors and warnings ------------------------------------------------------------------------
def test_errors():
    with pytest.raises(RuntimeError, match=r"linear.*\(2, 3\).*\(4, 5\)"):
        F.linear(tg.randn(2, 3), tg.randn(4, 5))
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\]"):
        F.layer_norm(tg.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\]"):
        TF.layer_norm(torch.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(tg.randn(2), approximate="fast")
    with pytest.raises(RuntimeError, match="weight should contain 3 elements"):
        F.batch_norm(tg.randn(4, 3), None, None, tg.ones(2), None, True)
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout(tg.randn(2), p=-0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.softmax(tg.randn(2, 3))
    assert any("Implicit dimension" in str(x.message) for x in w)


def test_dropout_functional_statistics():
    tg.manual_seed(1)
    x = tg.ones(100000)
    y = F.dropout(x, 0.2)
    assert abs(float(y.numpy(force=True).mean()) - 1.0) < 0.01     # E[y] = x (inverted dropout)
    assert abs(float((y.numpy(force=True) == 0).mean()) - 0.2) < 0.01
    assert F.dropout(x, 0.2, training=False) is x


# ---- forward mode (JVP) of the fused entries vs torch.func.jvp -------------------------------------
JVPS = [
    ("linear", lambda L, x, w, b: L.linear(x, w, b), [(3, 4), (2, 4), (2,)]),
    ("cross_entropy", lambda L, x: L.cross_entropy(x, _T(L, [0, 2, 1, 2]), label_smoothing=0.1),
     [(4, 3)]),
    ("cross_entropy-none", lambda L, x: L.cross_entropy(x, _T(L, [0, 2, 1, 2]), reduction="none",
                                                        ignore_index=1), [(4, 3)]),
    ("nll_loss", lambda L, x: L.nll_loss(x, _T(L, [0, 2, 1])), [(3, 3)]),
    ("batch_norm", lambda L, x, w, b: L.batch_norm(x, None, None, w, b, True),
     [(5, 3, 2), (3,), (3,)]),
    ("layer_norm", lambda L, x, w, b: L.layer_norm(x, (2, 3), w, b), [(2, 2, 3), (2, 3), (2, 3)]),
    ("embedding", lambda L, w: L.embedding(_T(L, [[0, 2], [2, 2]]), w), [(3, 2)]),
    ("gelu", lambda L, x: L.gelu(x), [(3, 4)]),
    ("leaky_relu", lambda L, x: L.leaky_relu(x, 0.1), [(3, 4)]),
    ("bce", lambda L, x, y: L.binary_cross_entropy(x.sigmoid(), y.sigmoid()), [(3, 2), (3, 2)]),
    ("bce_logits", lambda L, x, y: L.binary_cross_entropy_with_logits(x, y.sigmoid()),
     [(3, 2), (3, 2)]),
    ("bce_logits_pw", lambda L, x, y, p: L.binary_cross_entropy_with_logits(
        x, y.sigmoid(), pos_weight=p.exp()), [(3, 2), (3, 2), (2,)]),
]


def _T(L, v):
    return (tg if L is F else torch).tensor(v)


@pytest.mark.parametrize("name,fn,shapes", JVPS, ids=[j[0] for j in JVPS])
def test_forward_mode_vs_torch(name, fn, shapes):
    import torch.func
    from tapegrad.autograd import forward_ad as fwAD
    rng = np.random.default_rng(5)
    prim = [rng.standard_normal(s) for s in shapes]
    tans = [rng.standard_normal(s) for s in shapes]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(tg.tensor(p), tg.tensor(t)) for p, t in zip(prim, tans)]
        out = fn(F, *duals)
        tangent = fwAD.unpack_dual(out).tangent
    _, th_tangent = torch.func.jvp(lambda *a: fn(TF, *a), tuple(torch.tensor(p) for p in prim),
                                   tuple(torch.tensor(t) for t in tans))
    close(tangent, th_tangent, np.float64, f"{name} tangent")


def test_gelu_and_trunc_normal_without_scipy(monkeypatch):
    """SciPy is optional: the NumPy-only erf / erfinv give the same numbers."""
    import sys
    monkeypatch.setitem(sys.modules, "scipy.special", None)   # `import` now fails
    monkeypatch.setitem(sys.modules, "scipy", None)
    x = r((3, 4)) * 3
    _both(lambda a: F.gelu(a), lambda a: TF.gelu(a), [x], np.float64)
    _both(lambda a: F.gelu(a), lambda a: TF.gelu(a), [x], np.float32)
    t = tg.empty(100, 100)
    tg.nn.init.trunc_normal_(t, a=-1.0, b=1.5)
    assert t.numpy(force=True).min() >= -1.0 and t.numpy(force=True).max() <= 1.5


def test_batch_norm_without_affine_output_can_change_in_place():
    """The output is not the saved normalized input, so `out += 1` is allowed (torch too)."""
    x = np.random.default_rng(0).standard_normal((4, 3))
    ours = tg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = tg.nn.functional.batch_norm(ours, None, None, training=True)
    tout = torch.nn.functional.batch_norm(theirs, None, None, training=True)
    out += 1
    tout += 1
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(force=True), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)

"""F.normalize, F.rms_norm / nn.RMSNorm, nn.CosineSimilarity / nn.PairwiseDistance and the
further activations (glu, mish, hardswish, selu, celu, prelu, rrelu, gumbel_softmax, the
shrinks, the in-place forms) against torch: values and gradients (float64 tight, float32),
shapes including 0-d and size 1, gradcheck, module reprs and state_dict keys, error
messages; the random ones (rrelu training, gumbel_softmax) by their properties."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F
from _helpers import assert_raises_as_torch
from _nn_helpers import close, compare_module

DTYPES = [np.float64, np.float32]
SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (1, 1, 2)]


def _rand(shape, dtype, seed=0, scale=2.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _both(fn, arrays, dtype, seed=1, grad_rtol=None):
    """fn(L, *tensors) for L = tapegrad.nn.functional, torch.nn.functional on the same
    arrays: compare the output and every input's gradient."""
    tgs = [tg.tensor(a, requires_grad=True) for a in arrays]
    ths = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, oth = fn(F, *tgs), fn(TF, *ths)
    close(out, oth, dtype, "output")
    cot = np.random.default_rng(seed).standard_normal(tuple(oth.shape)).astype(dtype)
    out.backward(tg.tensor(cot))
    oth.backward(torch.tensor(cot))
    for i, (a, b) in enumerate(zip(tgs, ths)):
        if grad_rtol is None:
            close(a.grad, b.grad, dtype, f"grad of input {i}")
        else:
            np.testing.assert_allclose(np.asarray(a.grad.data), b.grad.numpy(), rtol=grad_rtol,
                                       atol=1e-8, err_msg=f"grad of input {i}")


# name, fn(L, x): the elementwise-shaped ones, any shape
UNARY = [
    ("mish", lambda L, x: L.mish(x)),
    ("hardswish", lambda L, x: L.hardswish(x)),
    ("hardsigmoid", lambda L, x: L.hardsigmoid(x)),
    ("selu", lambda L, x: L.selu(x)),
    ("celu", lambda L, x: L.celu(x)),
    # alphas whose reciprocal is exact in float32: torch's celu backward rounds 1/alpha to
    # float (derivatives.yaml: alpha.toFloat()), a 3e-8 difference otherwise
    ("celu-alpha", lambda L, x: L.celu(x, alpha=0.5)),
    ("celu-neg-alpha", lambda L, x: L.celu(x, -2.0)),
    ("softsign", lambda L, x: L.softsign(x)),
    ("softshrink", lambda L, x: L.softshrink(x)),
    ("softshrink-1", lambda L, x: L.softshrink(x, 1.0)),
    ("hardshrink", lambda L, x: L.hardshrink(x)),
    ("hardshrink-0.8", lambda L, x: L.hardshrink(x, lambd=0.8)),
    ("tanhshrink", lambda L, x: L.tanhshrink(x)),
    ("logsigmoid", lambda L, x: L.logsigmoid(x)),
    ("softmin-last", lambda L, x: L.softmin(x, dim=-1)),
    ("softmin-0", lambda L, x: L.softmin(x, 0)),
    ("softmin-dtype", lambda L, x: L.softmin(x, -1, dtype=torch.float64 if L is TF
                                             else tg.float64)),
    ("threshold", lambda L, x: L.threshold(x, 0.3, -2.0)),
    ("rrelu-eval", lambda L, x: L.rrelu(x)),
    ("rrelu-eval-bounds", lambda L, x: L.rrelu(x, 0.1, 0.5, training=False)),
    ("prelu-scalar", lambda L, x: L.prelu(x, x.new_tensor([0.2]) if L is TF
                                          else tg.tensor([0.2], dtype=x.dtype))),
    ("normalize-last", lambda L, x: L.normalize(x, dim=-1)),
    ("normalize-p1", lambda L, x: L.normalize(x, p=1.0, dim=0)),
    ("normalize-pinf", lambda L, x: L.normalize(x, float("inf"), -1)),
    ("rms_norm-last", lambda L, x: L.rms_norm(x, x.shape[-1:])),
    ("rms_norm-eps", lambda L, x: L.rms_norm(x, list(x.shape[-1:]), eps=1e-3)),
    ("elu_", lambda L, x: L.elu_(x * 1.0, 0.5)),
    ("selu_", lambda L, x: L.selu_(x * 1.0)),
    ("celu_", lambda L, x: L.celu_(x * 1.0, 2.0)),
    ("hardtanh_", lambda L, x: L.hardtanh_(x * 1.0, -0.5, 1.5)),
    ("threshold_", lambda L, x: L.threshold_(x * 1.0, 0.1, 3.0)),
    ("rrelu_", lambda L, x: L.rrelu_(x * 1.0, 0.2, 0.4)),
    ("inplace=True", lambda L, x: L.mish(x * 1.0, inplace=True)
     + L.hardswish(x * 1.0, inplace=True) + L.selu(x * 1.0, True)
     + L.hardsigmoid(x * 1.0, inplace=True) + L.celu(x * 1.0, 0.25, True)
     + L.threshold(x * 1.0, 0.0, 0.5, True) + L.rrelu(x * 1.0, inplace=True)),
]
LOOSE_GRAD = {"hardsigmoid", "inplace=True"}
# the ones that need a dim (no 0-d input, rms_norm needs a trailing dim)
NEEDS_DIM = {"rms_norm-last", "rms_norm-eps", "normalize-last", "normalize-p1",
             "normalize-pinf"}


# every (op, shape) pair except 0-d input to the ones that need a dim (not a skip: the
# pair is simply not a case)
UNARY_CASES = [(n, f, s) for n, f in UNARY for s in SHAPES
               if not (n in NEEDS_DIM and s == ())]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,shape", UNARY_CASES,
                         ids=[f"{n}-{s}" for n, _, s in UNARY_CASES])
def test_unary_vs_torch(name, fn, shape, dtype):
    # scale 4: every branch (hardswish's +-3, the shrinks' +-lambd) is reached
    # torch's hardsigmoid backward multiplies by a float32 1/6 (3e-8 off in float64)
    loose = dtype == np.float64 and name in LOOSE_GRAD
    _both(fn, [_rand(shape, dtype, scale=4.0)], dtype, grad_rtol=1e-7 if loose else None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,shapes", [
    (lambda L, x: L.glu(x), [(4,)]),
    (lambda L, x: L.glu(x, dim=0), [(2, 3)]),
    (lambda L, x: L.glu(x, 1), [(3, 6, 2)]),
    (lambda L, x: L.glu(x, -3), [(2, 1, 1)]),
    (lambda L, x, w: L.prelu(x, w), [(2, 3, 4), (3,)]),
    (lambda L, x, w: L.prelu(x, w), [(5,), (1,)]),
    (lambda L, x, w: L.prelu(x, w), [(2, 3), (1,)]),
    (lambda L, x, w: L.prelu(x, w), [(2, 3, 2, 2), ()]),
    (lambda L, x, w: L.rms_norm(x, (3, 4), w), [(2, 3, 4), (3, 4)]),
    (lambda L, x, w: L.rms_norm(x, [4], w, 1e-5), [(1, 4), (4,)]),
    (lambda L, x: L.rms_norm(x, (2, 3, 4)), [(2, 3, 4)]),
    (lambda L, x: L.normalize(x), [(3, 4)]),
    (lambda L, x: L.normalize(x, 3.0, 1, 1e-3), [(2, 5, 2)]),
    (lambda L, x: L.normalize(x, dim=0), [(1,)]),
])
def test_with_args_vs_torch(fn, shapes, dtype):
    _both(fn, [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)], dtype)


def test_normalize_small_norm_is_clamped():
    # a zero row: torch returns zeros and the gradient of x / eps
    a = np.array([[0.0, 0.0], [3.0, 4.0]])
    _both(lambda L, x: L.normalize(x), [a.T.copy()], np.float64)
    _both(lambda L, x: L.normalize(x, eps=1e-1), [a * 1e-3], np.float64)


def test_normalize_out():
    x = _rand((3, 4), np.float64)
    out = tg.empty(3, 4, dtype=tg.float64)
    res = F.normalize(tg.tensor(x), out=out)
    assert res is out
    close(out, TF.normalize(torch.tensor(x)), np.float64)


def test_rms_norm_default_eps_is_finfo_eps():
    # a tiny input: the eps term decides the value, so the default must be finfo.eps
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        x = np.full((2, 3), 1e-5, dtype=dt) if dt == np.float32 else np.full((2, 3), 1e-9)
        close(F.rms_norm(tg.tensor(x), (3,)), TF.rms_norm(torch.tensor(x), (3,)), dt)


def test_logsigmoid_and_mish_extreme_values():
    a = np.array([-800.0, -40.0, -20.0, 0.0, 20.0, 40.0, 800.0])
    _both(lambda L, x: L.logsigmoid(x), [a], np.float64)
    _both(lambda L, x: L.mish(x), [a], np.float64)
    _both(lambda L, x: L.selu(x), [a], np.float64)


def test_breakpoint_slopes_match_torch():
    """At the breakpoints the slopes are torch's backward kernels' choices."""
    a = np.array([-3.0, 3.0, 0.0, -0.5, 0.5, 0.3, 1.0, -1.0])
    for fn in (lambda L, x: L.hardswish(x), lambda L, x: L.hardsigmoid(x),
               lambda L, x: L.selu(x), lambda L, x: L.celu(x), lambda L, x: L.logsigmoid(x),
               lambda L, x: L.softshrink(x), lambda L, x: L.hardshrink(x),
               lambda L, x: L.threshold(x, 0.3, 1.0), lambda L, x: L.rrelu(x),
               lambda L, x: L.hardtanh_(x * 1.0, -1.0, 1.0), lambda L, x: L.mish(x),
               lambda L, x: L.softsign(x),
               lambda L, x: L.prelu(x, torch.tensor([0.1], dtype=torch.float64) if L is TF
                                    else tg.tensor([0.1], dtype=tg.float64))):
        _both(fn, [a], np.float64, grad_rtol=1e-7)  # a wrong slope is off by O(1)


@pytest.mark.parametrize("fn,shapes", [
    (lambda x: F.mish(x), [(3, 4)]), (lambda x: F.hardswish(x * 4), [(3, 4)]),
    (lambda x: F.hardsigmoid(x * 4), [(3, 4)]), (lambda x: F.selu(x), [(3, 4)]),
    (lambda x: F.celu(x, 0.5), [(3, 4)]), (lambda x: F.softsign(x), [(3, 4)]),
    (lambda x: F.softshrink(x * 3), [(3, 4)]), (lambda x: F.hardshrink(x * 3), [(3, 4)]),
    (lambda x: F.tanhshrink(x), [(3, 4)]), (lambda x: F.logsigmoid(x), [(3, 4)]),
    (lambda x: F.softmin(x, 1), [(3, 4)]), (lambda x: F.glu(x, 1), [(3, 4)]),
    (lambda x, w: F.prelu(x, w), [(2, 3, 2), (3,)]),
    (lambda x: F.normalize(x), [(3, 4)]), (lambda x: F.normalize(x, 1.5, 0), [(3, 4)]),
    (lambda x, w: F.rms_norm(x, (4,), w), [(3, 4), (4,)]),
    (lambda x: F.rrelu(x), [(3, 4)]), (lambda x: F.threshold(x, 0.1, 2.0), [(3, 4)]),
])
def test_gradcheck(fn, shapes):
    # values away from the kinks (finite differences across a kink disagree)
    args = []
    for i, s in enumerate(shapes):
        a = _rand(s, np.float64, seed=10 + i)
        a = np.where(np.abs(a) < 0.2, a + 0.5, a)
        a = np.where(np.abs(np.abs(a) - 1.5) < 0.05, a + 0.2, a)  # softshrink(3x)'s kinks
        args.append(tg.tensor(a, requires_grad=True))
    assert tg.autograd.gradcheck(fn, tuple(args))


# ---- random ones: properties ---------------------------------------------------------------
def test_rrelu_training_slopes():
    tg.manual_seed(3)
    a = _rand((2000,), np.float64)
    x = tg.tensor(a, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    pos = a > 0
    np.testing.assert_array_equal(y.data[pos], a[pos])
    slopes = y.data[~pos] / a[~pos]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert slopes.std() > 0.03  # drawn per element, not one slope
    assert abs(slopes.mean() - 0.2) < 0.01
    y.sum().backward()
    # the gradient is the slope drawn in the forward
    np.testing.assert_allclose(x.grad.data[~pos], slopes, rtol=1e-12)
    np.testing.assert_array_equal(x.grad.data[pos], 1.0)
    tg.manual_seed(3)
    np.testing.assert_array_equal(F.rrelu(tg.tensor(a), 0.1, 0.3, True).data, y.data)


def test_rrelu_module_train_eval_and_inplace():
    m = tg.nn.RReLU(0.1, 0.3)
    a = _rand((50,), np.float64)
    y = m(tg.tensor(a)).data
    assert not np.allclose(y[a < 0] / a[a < 0], 0.2)
    m.eval()
    close(m(tg.tensor(a)), torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor(a)), np.float64)
    t = tg.tensor(a.copy())
    r = tg.nn.RReLU(inplace=True).eval()(t)
    assert r is t
    close(t, TF.rrelu(torch.tensor(a)), np.float64)


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_gumbel_softmax_soft(dim):
    tg.manual_seed(0)
    logits = tg.tensor(_rand((4, 5), np.float64), requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5, dim=dim)
    np.testing.assert_allclose(y.data.sum(axis=dim), 1.0)
    assert (y.data > 0).all()
    # the sample is softmax((logits + g) / tau): recover g and redo it in torch
    tg.manual_seed(0)
    y2 = F.gumbel_softmax(logits, tau=0.5, dim=dim)
    np.testing.assert_array_equal(y.data, y2.data)
    y.sum().backward()  # rows sum to 1: the gradient of the sum is 0
    np.testing.assert_allclose(logits.grad.data, 0.0, atol=1e-12)


def test_gumbel_softmax_matches_distribution():
    # argmax of logits + Gumbel noise samples softmax(logits)
    tg.manual_seed(1)
    logits = np.log(np.array([0.1, 0.2, 0.7]))
    x = tg.tensor(np.tile(logits, (20000, 1)))
    y = F.gumbel_softmax(x, hard=True)
    freq = y.data.mean(axis=0)
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.015)


def test_gumbel_softmax_hard_straight_through():
    tg.manual_seed(2)
    a = _rand((3, 6), np.float64)
    logits = tg.tensor(a, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=2.0, hard=True)
    assert set(np.unique(y.data)) <= {0.0, 1.0}
    np.testing.assert_array_equal(y.data.sum(-1), 1.0)
    w = _rand((3, 6), np.float64, seed=5)
    (y * tg.tensor(w)).sum().backward()
    # the gradient is that of the soft sample with the same noise (torch's formula)
    tg.manual_seed(2)
    logits2 = tg.tensor(a, requires_grad=True)
    ys = F.gumbel_softmax(logits2, tau=2.0)
    np.testing.assert_array_equal(np.argmax(ys.data, -1), np.argmax(y.data, -1))
    (ys * tg.tensor(w)).sum().backward()
    np.testing.assert_allclose(logits.grad.data, logits2.grad.data, rtol=1e-12)
    # and that one is torch's softmax gradient at the same point
    tl = torch.tensor(a, requires_grad=True)
    z = torch.tensor(np.log(ys.detach().numpy()) * 2.0 - a)  # (logits + g) / tau = log ys + c
    ts = ((tl + z) / 2.0).softmax(-1)
    (ts * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(logits.grad.data, tl.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_gumbel_softmax_eps_warns():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(tg.randn(2, 3), eps=1e-5)


# ---- modules -------------------------------------------------------------------------------
MODULES = [
    ("GLU", (), (2, 4)), ("GLU", (0,), (4, 3)), ("Mish", (), (3, 4)),
    ("Hardswish", (), (3, 4)), ("Hardsigmoid", (), (3, 4)), ("SELU", (), (3, 4)),
    ("CELU", (), (3, 4)), ("CELU", (0.5,), (3, 4)), ("Softsign", (), (3, 4)),
    ("Softshrink", (), (3, 4)), ("Softshrink", (1.2,), (3, 4)), ("Hardshrink", (), (3, 4)),
    ("Hardshrink", (0.1,), (3,)), ("Tanhshrink", (), (3, 4)), ("LogSigmoid", (), ()),
    ("Softmin", (1,), (3, 4)), ("Threshold", (0.2, 5.0), (3, 4)), ("PReLU", (), (2, 3)),
    ("PReLU", (3, 0.1), (2, 3, 5)), ("Softmax2d", (), (2, 3, 4, 5)), ("Softmax2d", (), (3, 2, 2)),
    ("RMSNorm", (4,), (3, 4)), ("RMSNorm", ([3, 4], 1e-4), (2, 3, 4)),
    ("RMSNorm", ((4,), None, False), (4,)),
    ("Mish", (True,), (3, 4)), ("SELU", (True,), (3, 4)), ("Hardswish", (True,), (3,)),
    ("Hardsigmoid", (True,), (3,)), ("CELU", (0.25, True), (3,)),
    ("Threshold", (0.0, 1.0, True), (3,)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,shape", MODULES, ids=[f"{m[0]}{m[1]}" for m in MODULES])
def test_module_vs_torch(name, args, shape, dtype):
    tm, thm = getattr(tg.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(tm) == repr(thm)
    assert list(tm.state_dict()) == list(thm.state_dict())
    if dtype == np.float32:
        tm.float()
        thm.float()
    if any(a is True for a in args) or (name == "Hardsigmoid" and dtype == np.float64):
        # inplace modules run on a non-leaf; Hardsigmoid's torch gradient has a float32
        # 1/6 (see test_unary_vs_torch)
        a = _rand(shape, dtype, scale=4.0)
        xt, xth = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        y, yth = tm(xt * 1.0), thm(xth * 1.0)
        close(y, yth, dtype, name)
        y.sum().backward()
        yth.sum().backward()
        tol = 1e-7 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(np.asarray(xt.grad.data), xth.grad.numpy(), rtol=tol,
                                   atol=tol)
        return
    compare_module(tm, thm, _rand(shape, dtype, scale=4.0), dtype)


@pytest.mark.parametrize("args,kwargs", [((), {}), ((6,), {"init": 0.5}),
                                         ((), {"num_parameters": 2})])
def test_prelu_parameter(args, kwargs):
    m, mt = tg.nn.PReLU(*args, **kwargs), torch.nn.PReLU(*args, **kwargs)
    assert isinstance(m.weight, tg.nn.Parameter)
    close(m.weight, mt.weight, np.float32)
    assert m.weight.dtype == tg.float32
    tg.nn.init.zeros_(m.weight)
    assert not m.weight.data.any()
    m.reset_parameters()
    close(m.weight, mt.weight, np.float32)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in mt.named_parameters()]


def test_rmsnorm_parameter_and_dtype():
    m = tg.nn.RMSNorm([2, 3], dtype=tg.float64)
    assert m.weight.dtype == tg.float64 and tuple(m.weight.shape) == (2, 3)
    assert tg.nn.RMSNorm(3, elementwise_affine=False).weight is None
    assert list(tg.nn.RMSNorm(3, elementwise_affine=False).parameters()) == []


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,shapes", [
    ("CosineSimilarity", (), [(3, 4), (3, 4)]),
    ("CosineSimilarity", (0, 1e-6), [(3, 4), (1, 4)]),
    ("CosineSimilarity", (-1,), [(2, 3, 4), (2, 3, 4)]),
    ("PairwiseDistance", (), [(3, 4), (3, 4)]),
    ("PairwiseDistance", (1.0, 1e-3, True), [(3, 4), (3, 4)]),
    ("PairwiseDistance", (3.0,), [(5,), (5,)]),
])
def test_distance_modules(name, args, shapes, dtype):
    tm, thm = getattr(tg.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(tm) == repr(thm)
    _both(lambda L, a, b: (tm if L is F else thm)(a, b),
          [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)], dtype)


def test_softmin_implicit_dim_warns_like_torch():
    a = _rand((3, 4), np.float64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = F.softmin(tg.tensor(a))
    assert "Implicit dimension choice for softmin" in str(w[0].message)
    close(y, TF.softmin(torch.tensor(a), 1), np.float64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tg.nn.Softmin()(tg.tensor(a))
    assert len(w) == 1


def test_inplace_forms_return_input():
    for fn in (lambda x: F.selu_(x), lambda x: F.celu_(x), lambda x: F.elu_(x),
               lambda x: F.hardtanh_(x), lambda x: F.threshold_(x, 0.0, 1.0),
               lambda x: F.rrelu_(x), lambda x: F.mish(x, inplace=True),
               lambda x: F.hardswish(x, True), lambda x: F.hardsigmoid(x, inplace=True)):
        t = tg.tensor(_rand((3,), np.float64))
        assert fn(t) is t


# ---- errors --------------------------------------------------------------------------------
def _f(L):
    return TF if L is torch else F


ERRORS = [
    lambda L: _f(L).normalize(L.tensor(1.0)),
    lambda L: _f(L).normalize(L.ones(3, 4), dim=3),
    lambda L: _f(L).normalize(L.ones(3)),
    lambda L: _f(L).rms_norm(L.ones(3, 4), (3,)),
    lambda L: _f(L).rms_norm(L.ones(3, 4), [2, 4]),
    lambda L: _f(L).rms_norm(L.ones(4), (4,), weight=L.ones(3)),
    lambda L: _f(L).rms_norm(L.ones(4), ()),
    lambda L: L.nn.RMSNorm(4)(L.ones(3, 5)),
    lambda L: _f(L).glu(L.ones(3, 5)),
    lambda L: _f(L).glu(L.tensor(1.0)),
    lambda L: _f(L).glu(L.ones(3, 4), dim=2),
    lambda L: L.nn.GLU(0)(L.ones(3, 4)),
    lambda L: _f(L).prelu(L.ones(3, 4), L.ones(3)),
    lambda L: _f(L).prelu(L.ones(3, 4), L.ones(1, 4)),
    lambda L: _f(L).prelu(L.tensor(1.0), L.ones(4)),
    lambda L: _f(L).prelu(L.ones(5), L.ones(5)),  # a 1-d input has one channel
    lambda L: _f(L).rms_norm(L.ones(3, 4), 4),
    lambda L: L.nn.PReLU(3)(L.ones(2, 4)),
    lambda L: _f(L).rrelu(L.ones(3), 0.5, 0.2, training=True),
    lambda L: _f(L).rrelu(L.ones(3), 0.5, 0.2),
    lambda L: L.nn.RReLU(0.4, 0.1)(L.ones(3)),
    lambda L: _f(L).softshrink(L.ones(3), -1),
    lambda L: _f(L).softshrink(L.ones(3, dtype=L.float64), -0.5),
    lambda L: _f(L).celu(L.ones(3), alpha=0),
    lambda L: L.nn.Softmax2d()(L.ones(4)),
    lambda L: L.nn.Softmax2d()(L.ones(1, 2, 3, 4, 5)),
    lambda L: _f(L).selu_(L.ones(3, requires_grad=True)),
    lambda L: _f(L).threshold_(L.ones(3, requires_grad=True), 0.1, 1.0),
    lambda L: L.nn.SELU(inplace=True)(L.ones(3, requires_grad=True)),
]


@pytest.mark.parametrize("fn", ERRORS, ids=[f"err{i}" for i in range(len(ERRORS))])
def test_errors_as_torch(fn):
    assert_raises_as_torch(fn, tg, chars=60)


def test_new_names_exported():
    for n in ("normalize", "rms_norm", "glu", "mish", "hardswish", "hardsigmoid", "selu",
              "celu", "softsign", "softshrink", "hardshrink", "tanhshrink", "logsigmoid",
              "softmin", "threshold", "prelu", "rrelu", "gumbel_softmax", "selu_", "celu_",
              "elu_", "hardtanh_", "threshold_", "rrelu_"):
        assert callable(getattr(F, n)), n
    for n in ("GLU", "Mish", "Hardswish", "Hardsigmoid", "SELU", "CELU", "Softsign",
              "Softshrink", "Hardshrink", "Tanhshrink", "LogSigmoid", "Softmin", "Threshold",
              "PReLU", "Softmax2d", "RReLU", "RMSNorm", "CosineSimilarity", "PairwiseDistance"):
        assert issubclass(getattr(tg.nn, n), tg.nn.Module), n


def test_torch_nn_modules_import_paths():
    # torch.nn.modules.activation / normalization / distance hold these classes too
    import importlib
    for mod, names in (("activation", ("GLU", "PReLU", "RReLU", "Softmax2d", "ReLU")),
                       ("normalization", ("RMSNorm", "LayerNorm")),
                       ("distance", ("CosineSimilarity", "PairwiseDistance"))):
        tm = importlib.import_module(f"tapegrad.nn.modules.{mod}")
        thm = importlib.import_module(f"torch.nn.modules.{mod}")
        for n in names:
            assert hasattr(thm, n) and getattr(tm, n) is getattr(tg.nn, n), (mod, n)
            assert n in tm.__all__, (mod, n)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf * 0 warnings
@pytest.mark.parametrize("name", ["mish", "hardswish", "hardsigmoid", "selu", "celu",
                                  "softsign", "softshrink", "hardshrink", "tanhshrink",
                                  "logsigmoid", "rrelu", "softmin", "threshold"])
def test_non_finite_values_as_torch(name):
    # NaN passes through and +-inf gives torch's values (hardswish(-inf) is NaN there)
    a = np.array([-np.inf, -5.0, -3.0, -0.5, 0.0, 0.5, 3.0, 5.0, np.inf, np.nan])
    args = {"softmin": (0,), "threshold": (0.5, 2.0)}.get(name, ())
    got = getattr(F, name)(tg.tensor(a), *args)
    want = getattr(TF, name)(torch.tensor(a), *args)
    np.testing.assert_allclose(np.asarray(got.data), want.numpy(), equal_nan=True)


@pytest.mark.parametrize("name", ["mish", "hardswish", "hardsigmoid", "selu", "celu",
                                  "softshrink", "hardshrink", "logsigmoid", "rrelu"])
def test_integer_input_refused_as_torch(name):
    assert_raises_as_torch(lambda L: getattr(_f(L), name)(L.arange(3)), tg, chars=60)


def test_integer_inputs_that_torch_accepts():
    assert_raises_as_torch(lambda L: _f(L).rms_norm(L.arange(3), [3]), tg, chars=60)
    for fn in (lambda L, x: _f(L).threshold(x, 1, 5.7), lambda L, x: _f(L).softsign(x),
               lambda L, x: _f(L).tanhshrink(x)):
        got, want = fn(tg, tg.arange(4)), fn(torch, torch.arange(4))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(got.data), want.numpy(), rtol=1e-6)

"""Strict mode: every rule checked once against float64 finite differences (and its
gradient's shape/dtype); it must fire on wrong rules and stay quiet on the table."""
import sys

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.core.record import apply
from tapegrad.core.state import state
from tapegrad.autograd.strict import StrictModeError, reset_strict_cache
from tapegrad.ops.registry import OPS, defop

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from opdb import OP_DB  # noqa: E402
from test_opdb import _flat, _inputs  # noqa: E402


@pytest.fixture
def bad_ops():
    """Ops with deliberately wrong rules, kept out of the table (OPS) after creation."""
    made = {}

    def make(name, *a, **kw):
        op = defop(name, *a, **kw)
        OPS.pop(name)
        made[name] = op
        return op
    reset_strict_cache()
    yield make
    reset_strict_cache()


def _call(op, *xs):
    return apply(op, *xs)


def test_wrong_value_names_op_and_argument(bad_ops):
    # d/dy (x*y) = x, but this rule says 2x (and the x rule is right)
    op = bad_ops("bad_mul", np.multiply, inputs=("x", "y"), partials=[
        lambda xp, ans, x, y: y, lambda xp, ans, x, y: 2 * x])
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.tensor([3.0, -1.0], requires_grad=True)
    with tg.autograd.strict():
        with pytest.raises(StrictModeError) as ei:
            _call(op, x, y).sum().backward()
    msg = str(ei.value)
    assert "'bad_mul' for its argument 1 ('y'" in msg and "disagrees with finite" in msg
    assert "the rule gives 2" in msg and "gives 1" in msg   # 2*x[0] vs x[0] at index (0,)
    # without strict mode the wrong gradient goes through silently
    x.grad = y.grad = None
    _call(op, x, y).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 4.0])


def test_wrong_shape_and_upcast(bad_ops):
    op = bad_ops("bad_shape", lambda x: x * 2, vjp=[lambda xp, g, ans, x: xp.ones((7,))])
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.autograd.strict(), pytest.raises(StrictModeError, match=r"shape \(7,\)"):
        _call(op, x).sum().backward()
    op = bad_ops("bad_dtype", lambda x: x * 2,
                 vjp=[lambda xp, g, ans, x: g * np.full(x.shape, 2.0)])  # float64 constant
    x = tg.tensor([1.0, 2.0], requires_grad=True)  # float32
    with tg.autograd.strict(), pytest.raises(StrictModeError, match="tapegrad.float64 gradient "
                                                                    "from a tapegrad.float32"):
        _call(op, x).sum().backward()
    # the same rule on float64 data is fine
    x = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    with tg.autograd.strict():
        _call(op, x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_checked_once_per_key(bad_ops):
    calls = []
    op = bad_ops("counted", np.sin, partials=[lambda xp, ans, x: (calls.append(1), xp.cos(x))[1]])
    with tg.autograd.strict():
        for _ in range(3):
            x = tg.tensor([0.1, 0.2, 0.3], dtype=tg.float64, requires_grad=True)
            _call(op, x).sum().backward()
        first = len(calls)
        x = tg.tensor([0.1, 0.2], dtype=tg.float64, requires_grad=True)  # new shape: again
        _call(op, x).sum().backward()
    # each backward calls the rule once; the check once more in the first and the last
    assert first == 4 and len(calls) == 6


def test_kinks_are_not_failures():
    # relu(relu(x)) feeds exact zeros into the second relu; max with ties; abs at 0
    with tg.autograd.strict():
        reset_strict_cache()
        x = tg.tensor([-1.0, 0.0, 2.0], dtype=tg.float64, requires_grad=True)
        (tg.relu(tg.relu(x)) + tg.abs(x) + tg.maximum(x, tg.zeros(3, dtype=tg.float64))
         + x.max()).sum().backward()


def test_modes_and_hook_cleanup():
    assert not state.observers
    tg.autograd.set_strict(True)
    assert tg.autograd.is_strict_enabled() and state.observers
    tg.autograd.set_strict(False)
    assert not state.observers
    with tg.autograd.set_strict(True):
        with tg.autograd.detect_anomaly():
            assert state.observers
        assert tg.autograd.is_strict_enabled()
    assert not state.observers and not tg.autograd.is_strict_enabled()


def _table_cases():
    for e in OP_DB:
        if e.differentiable:
            for k, s in enumerate(e.samples(np.random.default_rng(0), e)):
                yield e, s


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quiet_on_the_whole_op_database(dtype):
    """Every table op in the op database (both dtypes) passes strict mode, and the
    gradients equal the ones computed without it (so the check has no side effects)."""
    rng = np.random.default_rng(1)
    checked = 0
    for e, s in _table_cases():
        args, leaves = _inputs(s, tg, dtype)
        if not leaves:
            continue
        try:
            out = e.tg_fn(*args, **s.kwargs)
        except Exception:
            continue  # error-case samples
        outs = [o for o in _flat(out) if isinstance(o, tg.Tensor) and o.requires_grad]
        if not outs:
            continue
        gs = [tg.tensor(rng.standard_normal(o.shape).astype(o.dtype)) for o in outs]
        ref = tg.autograd.grad(outs, leaves, gs, retain_graph=True, allow_unused=True)
        reset_strict_cache()
        with tg.autograd.strict():
            got = tg.autograd.grad(outs, leaves, gs, allow_unused=True)
        for a, b in zip(ref, got):
            if a is not None:
                np.testing.assert_array_equal(a.numpy(), b.numpy())
        checked += 1
    assert checked > 150


def test_custom_rule_matching_torch_passes(bad_ops):
    # softplus with its correct rule, checked against torch too
    op = bad_ops("softplus_t", lambda x: np.logaddexp(0, x),
                 partials=[lambda xp, ans, x: 1 / (1 + np.exp(-x))])
    x0 = np.array([-2.0, 0.0, 3.0])
    x = tg.tensor(x0, dtype=tg.float64, requires_grad=True)
    with tg.autograd.strict():
        _call(op, x).sum().backward()
    xt = torch.tensor(x0, requires_grad=True)
    torch.nn.functional.softplus(xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


class GoodMulAdd(tg.autograd.Function):
    """(x*y, x+y): two outputs, correct backward."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x + y

    @staticmethod
    def backward(ctx, g1, g2):
        x, y = ctx.saved_tensors
        return g1 * y + g2, g1 * x + g2


class BadExp(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = x.exp() * scale
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 1.5, None       # wrong by a factor 1.5


def test_custom_functions_checked():
    reset_strict_cache()
    x0, y0 = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -2.0])
    for dt in (tg.float64, tg.float32):
        x = tg.tensor(x0, dtype=dt, requires_grad=True)
        y = tg.tensor(y0, dtype=dt, requires_grad=True)
        with tg.autograd.strict():
            a, b = GoodMulAdd.apply(x, y)
            (a * 2 + b * b).sum().backward()
        xt = torch.tensor(x0, requires_grad=True)
        yt = torch.tensor(y0, requires_grad=True)
        (xt * yt * 2 + (xt + yt) ** 2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
        x = tg.tensor(x0, dtype=dt, requires_grad=True)
        with tg.autograd.strict(), pytest.raises(StrictModeError) as ei:
            BadExp.apply(x, 2.0).sum().backward()
        assert "'BadExpBackward' for its argument 0" in str(ei.value)


def test_quiet_under_create_graph_with_anomaly_mode_too():
    x0 = np.array([0.3, 1.2])
    x = tg.tensor(x0, dtype=tg.float64, requires_grad=True)
    reset_strict_cache()
    with tg.autograd.strict(), tg.autograd.detect_anomaly():
        y = (tg.tanh(x) * x.exp()).sum()
        (g,) = tg.autograd.grad(y, [x], create_graph=True)
        (gg,) = tg.autograd.grad(g.sum(), [x])
    xt = torch.tensor(x0, requires_grad=True)
    (gt,) = torch.autograd.grad((torch.tanh(xt) * xt.exp()).sum(), [xt], create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), [xt])
    np.testing.assert_allclose(gg.numpy(), ggt.numpy(), rtol=1e-12)

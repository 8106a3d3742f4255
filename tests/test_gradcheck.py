"""tg.autograd.gradcheck / gradgradcheck: must pass on correct rules, fire on wrong ones."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import GradcheckError, gradcheck, gradgradcheck
from tapegrad.ops.rules import pointwise as E


def _t(*shape, seed=0):
    return tg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def test_passes_on_correct_rules_multiple_outputs():
    x, y = _t(3, 4), _t(4, seed=1)
    assert gradcheck(lambda a, b: ((a * b).tanh().sum(0), a @ b, a.exp()), (x, y))
    assert gradcheck(lambda a, b: ((a * b).tanh().sum(0), a @ b), (x, y), fast_mode=True)
    assert gradgradcheck(lambda a, b: (a @ b).sigmoid(), (x, y))


def test_non_tensor_and_non_grad_inputs_pass_through():
    x, c = _t(2, 3), tg.tensor(np.ones((2, 3)))
    assert gradcheck(lambda a, k, b: (a * k + b).sin(), (x, 2.5, c))


@pytest.fixture
def broken_sin():
    old = E.sin.vjps
    E.sin.vjps = (lambda xp, g, ans, x: g * xp.cos(x) * 1.01,)
    yield
    E.sin.vjps = old


def test_fires_on_wrong_rule(broken_sin, capsys):
    x = _t(3, 4)
    with pytest.raises(GradcheckError) as ei:
        gradcheck(lambda a: a.sin(), (x,))
    msg = str(ei.value)
    assert isinstance(ei.value, RuntimeError)
    assert "input 0" in msg and "max abs error" in msg and "worst element" in msg
    assert gradcheck(lambda a: a.sin(), (x,), raise_exception=False) is False
    assert "max rel error" in msg
    with pytest.raises(GradcheckError):
        gradcheck(lambda a: a.sin(), (x,), fast_mode=True)


class _TorchBrokenSin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 1.01


def test_raise_exception_false_is_silent_like_torch(broken_sin, capsys):
    # torch returns False and prints nothing; the report only exists in the exception
    xt = torch.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    want = torch.autograd.gradcheck(_TorchBrokenSin.apply, (xt,), raise_exception=False)
    torch_out = capsys.readouterr()
    got = gradcheck(lambda a: a.sin(), (_t(3, 4),), raise_exception=False)
    tg_out = capsys.readouterr()
    assert want is False and got is False
    assert (tg_out.out, tg_out.err) == (torch_out.out, torch_out.err) == ("", "")
    for mode in ({"fast_mode": True}, {"check_forward_ad": True}):
        assert gradcheck(lambda a: a.sin(), (_t(3, 4),), raise_exception=False, **mode) is False
        assert capsys.readouterr().out == ""


def test_gradgradcheck_fires_on_wrong_second_derivative():
    # first derivative right, second wrong: the rule uses a detached cos
    old = E.sin.vjps
    E.sin.vjps = (lambda xp, g, ans, x: g * (xp.cos(x) if xp is np else tg.tensor(np.cos(x.numpy(force=True)))),)
    try:
        x = _t(3)
        assert gradcheck(lambda a: a.sin(), (x,))
        with pytest.raises(GradcheckError):
            gradgradcheck(lambda a: a.sin(), (x,))
    finally:
        E.sin.vjps = old


def test_worst_element_index_reported():
    x = _t(2, 3)

    def f(a):  # wrong only at a[1, 2]: a custom rule via where with a detached part
        mask = np.zeros((2, 3), dtype=bool)
        mask[1, 2] = True
        return tg.where(tg.tensor(mask), a * 2.0 - (a.detach() * 1.0), a)
    with pytest.raises(GradcheckError, match=r"d output0\[1, 2\] / d input0\[1, 2\]"):
        gradcheck(f, (x,))


def test_input_errors():
    with pytest.raises(ValueError, match="float64"):
        gradcheck(lambda a: a.sin(), (tg.randn(3, requires_grad=True),))
    with pytest.raises(ValueError, match="require"):
        gradcheck(lambda a: a.sin(), (tg.randn(3, dtype=tg.float64),))


def test_agrees_with_torch_gradcheck_verdict():
    # the same function passes both; the numbers come from torch's own checker
    xn = np.random.default_rng(3).standard_normal((3, 3))
    tx = torch.tensor(xn, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: (a @ a).logsumexp(1), (tx,))
    assert gradcheck(lambda a: (a @ a).logsumexp(1), (tg.tensor(xn, requires_grad=True),))


def test_custom_function():
    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    class BadCube(Cube):
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3.1 * x ** 2

    x = _t(4)
    assert gradcheck(Cube.apply, (x,)) and gradgradcheck(Cube.apply, (x,))
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(BadCube.apply, (x,))

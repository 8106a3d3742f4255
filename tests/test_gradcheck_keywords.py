"""gradcheck / gradgradcheck with torch's keywords. Each check runs the same function
through torch.autograd.gradcheck and ours: the verdicts must agree (True, or a
GradcheckError), on correct rules and on rules broken in the way the keyword detects."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import GradcheckError
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

LIBS = [pytest.param(tg, id="tapegrad"), pytest.param(torch, id="torch")]
RNG = np.random.default_rng(21)
ERROR = {tg: GradcheckError, torch: TorchGradcheckError}
XA = RNG.standard_normal((3, 3))


def _x(T, a=XA):
    return T.tensor(a, dtype=T.float64, requires_grad=True)


def _fn_class(T, scale=1.0):
    """The forward-AD tutorial's custom Function: exp with a jvp and no backward."""
    class Fn(T.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = T.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result * scale
            del ctx.result
            return gO
    return Fn


@pytest.mark.parametrize("T", LIBS)
def test_forward_ad_tutorial_call(T):
    Fn = _fn_class(T)
    primal = T.randn(10, 10, dtype=T.double, requires_grad=True)
    assert T.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                                check_backward_ad=False, check_undefined_grad=False,
                                check_batched_grad=False)


@pytest.mark.parametrize("T", LIBS)
@pytest.mark.parametrize("fast_mode", [False, True])
def test_check_forward_ad_catches_a_wrong_jvp(T, fast_mode):
    Fn = _fn_class(T, scale=1.01)
    with pytest.raises(ERROR[T]):
        T.autograd.gradcheck(Fn.apply, (_x(T),), check_forward_ad=True,
                             check_backward_ad=False, check_undefined_grad=False,
                             fast_mode=fast_mode)
    assert T.autograd.gradcheck(Fn.apply, (_x(T),), check_forward_ad=True,
                                check_backward_ad=False, check_undefined_grad=False,
                                raise_exception=False) is False


def _square_class(T):
    """The double-backward tutorial's Square (saves its input)."""
    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x
    return Square


def _sinh(T):
    """The double-backward tutorial's Sinh: intermediate results returned as outputs."""
    class Sinh(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = T.exp(x)
            expnegx = T.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input = grad_input + _grad_out_exp * expx
            grad_input = grad_input - _grad_out_negexp * expnegx
            return grad_input
    return lambda x: Sinh.apply(x)[0]


@pytest.mark.parametrize("T", LIBS)
def test_double_backward_tutorial_calls_with_keywords(T):
    x = T.tensor(RNG.random((3, 3)), dtype=T.double, requires_grad=True)
    for f in (_square_class(T).apply, _sinh(T)):
        assert T.autograd.gradcheck(f, x)
        assert T.autograd.gradgradcheck(f, x)
        assert T.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-5, rtol=1e-3, nondet_tol=0.0,
                                    check_undefined_grad=True, check_batched_grad=True,
                                    check_grad_dtypes=True, fast_mode=True)
        assert T.autograd.gradgradcheck(f, (x,), check_undefined_grad=True,
                                        check_batched_grad=True, check_grad_dtypes=True,
                                        gen_non_contig_grad_outputs=True)


@pytest.mark.parametrize("T", LIBS)
def test_all_forward_and_batched_checks_on_table_ops(T):
    x, y = _x(T), T.tensor(RNG.standard_normal(3), dtype=T.float64, requires_grad=True)

    def f(a, b):
        return (a @ b).tanh(), (a.sin() * b).sum(0), a.exp()

    for fast in (False, True):
        assert T.autograd.gradcheck(f, (x, y), check_forward_ad=True, check_batched_grad=True,
                                    check_batched_forward_grad=True, fast_mode=fast,
                                    masked=False)
    assert T.autograd.gradgradcheck(lambda a, b: (a @ b).sigmoid(), (x, y),
                                    check_fwd_over_rev=True, check_batched_grad=True)
    assert T.autograd.gradgradcheck(lambda a, b: (a @ b).sigmoid(), (x, y),
                                    check_fwd_over_rev=True, check_rev_over_rev=False,
                                    check_undefined_grad=False)


def _zero_blind_class(T):
    """Right Jacobian, but a nonzero gradient for an all-zero grad_output."""
    class ZeroBlind(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            if float(g.abs().sum()) == 0:
                return T.ones_like(x)
            return g * 3
    return ZeroBlind


@pytest.mark.parametrize("T", LIBS)
def test_backward_must_be_multiplied_by_grad_output(T):
    f = _zero_blind_class(T).apply
    for kw in (dict(), dict(check_undefined_grad=False)):  # always checked, as in torch
        with pytest.raises(ERROR[T], match="backward not multiplied by grad_output"):
            T.autograd.gradcheck(f, (_x(T),), **kw)


def _undefined_blind_class(T):
    """Two outputs, grads not materialized: the backward mishandles a missing (None)
    gradient for the first output when the second one's is zero."""
    class Two(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            x, = ctx.saved_tensors
            if g1 is None and (g2 is None or float(g2.abs().sum()) == 0):
                return T.ones_like(x)
            res = T.zeros_like(x)
            if g1 is not None:
                res = res + g1 * 2
            if g2 is not None:
                res = res + g2 * 3
            return res
    return Two


@pytest.mark.parametrize("T", LIBS)
def test_check_undefined_grad(T):
    f = _undefined_blind_class(T).apply
    with pytest.raises(ERROR[T], match="Expected .*undefined"):
        T.autograd.gradcheck(f, (_x(T),))
    assert T.autograd.gradcheck(f, (_x(T),), check_undefined_grad=False)


def _noisy_class(T):
    """Right Jacobian up to a relative 1e-9 of noise per backward call: not reentrant."""
    rng = np.random.default_rng(0)

    class Noisy(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 * (1 + T.tensor(rng.standard_normal(tuple(g.shape)) * 1e-9))
    return Noisy


@pytest.mark.parametrize("T", LIBS)
def test_nondet_tol(T):
    f = _noisy_class(T).apply
    with pytest.raises(ERROR[T], match="Backward is not reentrant"):
        T.autograd.gradcheck(f, (_x(T),), check_undefined_grad=False)
    assert T.autograd.gradcheck(f, (_x(T),), nondet_tol=1e-6, check_undefined_grad=False)


@pytest.mark.parametrize("T", LIBS)
def test_flag_combinations_and_keyword_only(T):
    x = _x(T)
    cases = [
        (dict(check_forward_ad=False, check_backward_ad=False),
         "Expected at least one of check_forward_ad or check_backward_ad to be True"),
        (dict(check_backward_ad=False, check_forward_ad=True, check_batched_grad=True),
         "Setting check_batched_grad=True requires check_backward_ad to be True"),
        (dict(check_batched_forward_grad=True),
         "Setting check_batched_forward_grad=True requires check_forward_ad to be True"),
    ]
    for kw, msg in cases:
        with pytest.raises(AssertionError, match=msg):
            T.autograd.gradcheck(T.sin, (x,), **kw)
    with pytest.raises(AssertionError, match="Setting check_undefined_grad=True requires "
                                             "check_rev_over_rev to be True"):
        T.autograd.gradgradcheck(T.sin, (x,), check_rev_over_rev=False, check_fwd_over_rev=True)
    with pytest.raises(TypeError):
        T.autograd.gradcheck(T.sin, (x,), 1e-6)  # eps is keyword-only, as in torch


def test_reports_name_the_mode():
    Fn = _fn_class(tg, scale=1.01)
    with pytest.raises(GradcheckError) as ei:
        tg.autograd.gradcheck(Fn.apply, (_x(tg),), check_forward_ad=True,
                              check_backward_ad=False, check_undefined_grad=False)
    msg = str(ei.value)
    assert "forward mode disagrees" in msg and "Forward-mode Jacobian mismatch" in msg
    assert "worst element" in msg

"""Custom autograd.Function vs torch.autograd.Function: the same class body runs on
both libraries (`L` is tapegrad or torch), values and gradients must agree, and the
errors PyTorch raises (wrong number / shape of gradients, gradient for a non-tensor)
name the Function."""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _helpers import assert_close as _close


def _make_classes(L):
    """The same custom Functions for tapegrad and torch."""

    class MyExp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class ScaleMul(L.autograd.Function):
        """f(x, w, k) = k * x * w with a Python number k (gets None)."""

        @staticmethod
        def forward(ctx, x, w, k):
            ctx.save_for_backward(x, w)
            ctx.k = k
            ctx.flags = ctx.needs_input_grad
            return x * w * k

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            gx = g * w * ctx.k if ctx.needs_input_grad[0] else None
            gw = g * x * ctx.k if ctx.needs_input_grad[1] else None
            return gx, gw, None

    class SinCos(L.autograd.Function):
        """Two outputs."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            return ga * x.cos() - gb * x.sin()

    class ArgmaxAndMax(L.autograd.Function):
        """A non-differentiable output (indices) next to a differentiable one."""

        @staticmethod
        def forward(ctx, x):
            idx = x.argmax(dim=1)
            vals = x.amax(dim=1)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return vals, idx

        @staticmethod
        def backward(ctx, g, gidx):
            x, idx = ctx.saved_tensors
            out = L.zeros_like(x)
            for r in range(x.shape[0]):
                out[r, int(idx[r])] = g[r]
            return out

    class NoMaterialize(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.got_none = (ga is None, gb is None)
            g = 0
            if ga is not None:
                g = g + ga * 2
            if gb is not None:
                g = g + gb * 3
            return g

    class Cube(L.autograd.Function):
        """backward written with differentiable ops: double backward works."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    class Identity(L.autograd.Function):
        """Returns its input unchanged."""

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2  # deliberately not the true derivative: shows the rule is used

    return dict(MyExp=MyExp, ScaleMul=ScaleMul, SinCos=SinCos, ArgmaxAndMax=ArgmaxAndMax,
                NoMaterialize=NoMaterialize, Cube=Cube, Identity=Identity)


TG, TORCH = _make_classes(tg), _make_classes(torch)
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
W = rng.standard_normal((3, 4))
U = rng.standard_normal((3, 4))


def _both(fn):
    """fn(L, classes, x, w) -> loss; returns ((x.grad, w.grad, loss) for tg, for torch)."""
    out = []
    for L, C in ((tg, TG), (torch, TORCH)):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        loss = fn(L, C, x, w)
        loss.backward()
        out.append((x.grad, w.grad, loss))
    return out


CASES = {
    "exp": lambda L, C, x, w: (C["MyExp"].apply(x * w) * L.tensor(U)).sum(),
    "scale_mul": lambda L, C, x, w: (C["ScaleMul"].apply(x, w, 2.5) ** 2).sum(),
    "sincos_both": lambda L, C, x, w: (lambda s, c: (s * w + c * c).sum())(
        *C["SinCos"].apply(x)),
    "sincos_one_output_used": lambda L, C, x, w: (C["SinCos"].apply(x)[1] * w).sum(),
    "argmax_and_max": lambda L, C, x, w: (C["ArgmaxAndMax"].apply(x * w)[0] ** 2).sum(),
    "no_materialize_one": lambda L, C, x, w: C["NoMaterialize"].apply(x)[0].sum() + w.sum(),
    "cube_chain": lambda L, C, x, w: C["Cube"].apply(C["MyExp"].apply(x) * w).mean(),
    "identity": lambda L, C, x, w: (C["Identity"].apply(x) * w).sum(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_torch(name):
    (gx, gw, loss), (tgx, tgw, tloss) = _both(CASES[name])
    _close(loss, tloss)
    for a, b in ((gx, tgx), (gw, tgw)):
        if b is None:
            assert a is None
        else:
            _close(a, b)


def test_needs_input_grad_and_non_tensor_args():
    for L, C in ((tg, TG), (torch, TORCH)):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W)
        y = C["ScaleMul"].apply(x, w, 2.0)
        assert y.grad_fn is not None
        y.sum().backward()
        assert w.grad is None
        _close(x.grad, torch.tensor(W * 2.0))
    # no input requires grad: no graph
    y = TG["ScaleMul"].apply(tg.tensor(X), tg.tensor(W), 2.0)
    assert y.grad_fn is None and not y.requires_grad


def test_ctx_attributes():
    x = tg.tensor(X, requires_grad=True)
    y = TG["ScaleMul"].apply(x, tg.tensor(W), 3)
    ctx = y.grad_fn.saved["ctx"]
    assert ctx.flags == (True, False, False)
    vals, idx = TG["ArgmaxAndMax"].apply(x)
    assert vals.requires_grad and not idx.requires_grad and idx.dtype == np.int64
    a, b = TG["NoMaterialize"].apply(x)
    ctx = a.grad_fn.saved["ctx"]  # one node for both outputs
    assert b.grad_fn is a.grad_fn and (a._out, b._out) == (1, 2)  # index + 1
    a.sum().backward()
    assert ctx.got_none == (False, True)
    # torch agrees that the unused output's gradient is None
    tx = torch.tensor(X, requires_grad=True)
    ta, tb = TORCH["NoMaterialize"].apply(tx)
    ta.sum().backward()
    assert ta.grad_fn.got_none == (False, True)


def test_double_backward_through_custom_function():
    res = []
    for L, C in ((tg, TG), (torch, TORCH)):
        x = L.tensor(X[0], requires_grad=True)
        y = C["Cube"].apply(x).sum()
        (g,) = L.autograd.grad(y, x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)
        res.append((g, gg))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


def _bad(L, backward_result):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            return x * w

        @staticmethod
        def backward(ctx, g):
            return backward_result(L, g)

    return Bad


@pytest.mark.parametrize("result,pattern", [
    (lambda L, g: g, r"BadBackward returned an incorrect number of gradients \(expected 2, "
                     r"got 1\)"),
    (lambda L, g: (g, g, g[0]), r"incorrect number of gradients \(expected 2, got 3\)"),
    (lambda L, g: (g[0:1, 0:1].expand(2, 2).contiguous(), g),
     r"BadBackward returned an invalid gradient at index 0 - got \[2, 2\] but expected "
     r"shape compatible with \[3, 4\]"),
])
def test_backward_errors_name_the_function(result, pattern):
    for L in (tg, torch):
        Bad = _bad(L, result)
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        with pytest.raises(RuntimeError, match=pattern):
            Bad.apply(x, w).sum().backward()


def test_extra_none_gradients_are_allowed():
    for L in (tg, torch):
        Ok = _bad(L, lambda L, g: (g, g, None))
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        Ok.apply(x, w).sum().backward()
        assert x.grad is not None


def test_gradient_for_non_tensor_input_raises():
    for L in (tg, torch):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g

        x = L.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="returned a gradient different than None at "
                                               "position 2"):
            F.apply(x, 2.0).sum().backward()


def test_broadcastable_gradient_is_summed():
    # a gradient of a broadcast shape is summed back to the input (PyTorch: sum_to)
    for L in (tg, torch):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                return b * 1.0

            @staticmethod
            def backward(ctx, g):
                return g.expand(2, 4).contiguous()

        b = L.tensor(X[0], requires_grad=True)
        F.apply(b).sum().backward()
        _close(b.grad, torch.full((4,), 2.0, dtype=torch.float64))


def test_saved_tensor_modified_in_place_raises():
    for L, C in ((tg, TG), (torch, TORCH)):
        x = L.tensor(X, requires_grad=True)
        h = x * 1
        y = C["ScaleMul"].apply(h, L.tensor(W), 2.0)
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_second_backward_without_retain_graph_raises():
    x = tg.tensor(X, requires_grad=True)
    y = TG["MyExp"].apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    _close(x.grad, torch.tensor(2 * np.exp(X)))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_setup_context_style_and_hooks():
    class Mul(tg.autograd.Function):
        @staticmethod
        def forward(x, w):
            return x * w

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

    x = tg.tensor(X, requires_grad=True)
    w = tg.tensor(W, requires_grad=True)
    y = Mul.apply(x, w)
    seen = []
    y.register_hook(lambda g: seen.append(g) or g * 10)
    y.sum().backward()
    assert len(seen) == 1
    _close(x.grad, torch.tensor(W * 10))


def test_forward_mode_custom_jvp():
    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not used")

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_for_forward
            return 2 * x * t

    class TSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t

    a, v = X[0], U[0]
    _, t = tg.func.jvp(lambda x: Square.apply(x).sin(), (tg.tensor(a),), (tg.tensor(v),))
    import torch.autograd.forward_ad as tfw
    with tfw.dual_level():
        ty = TSquare.apply(tfw.make_dual(torch.tensor(a), torch.tensor(v))).sin()
        tt = tfw.unpack_dual(ty).tangent
    _close(t, tt)
    # a Function without jvp, under forward mode, says so
    with pytest.raises(NotImplementedError, match="MyExp"):
        tg.func.jvp(lambda x: TG["MyExp"].apply(x), (tg.tensor(a),), (tg.tensor(v),))


def test_legacy_call_raises():
    with pytest.raises(RuntimeError, match="static forward"):
        TG["MyExp"]()(tg.tensor(X))


def test_mark_dirty_in_place_forward():
    res = []
    for L in (tg, torch):
        class AddOne(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 1

        a = L.tensor(X, requires_grad=True)
        h = a * 2
        before = (h * 3).sum()  # used before the change: follows the old history
        y = AddOne.apply(h)
        assert y is h and not y.is_leaf
        (before + (y * y).sum()).backward()
        res.append((y, a.grad))
        leaf = L.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            AddOne.apply(leaf)
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])

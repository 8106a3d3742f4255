"""Bad input and misuse of the core: same exception type as PyTorch, a sentence that
names the op and the shapes; NaN/inf propagate (as NumPy / PyTorch) and never crash."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _both_raise(fn, exc):
    """fn(lib) raises `exc` in tapegrad and in torch; returns tapegrad's message."""
    with pytest.raises(exc):
        fn(torch)
    with pytest.raises(exc) as ei:
        fn(tg)
    return str(ei.value)


@pytest.mark.parametrize("name,f", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("maximum", lambda a, b: a.maximum(b)),
    ("add", lambda a, b: a.add(b)), ("pow", lambda a, b: a ** b)])
def test_shape_mismatch_names_op_and_shapes(name, f):
    msg = _both_raise(lambda lib: f(lib.ones(2, 3), lib.ones(4)), RuntimeError)
    assert name in msg and "(2, 3)" in msg and "(4,)" in msg, msg


def test_matmul_shape_mismatch():
    msg = _both_raise(lambda lib: lib.ones(2, 3) @ lib.ones(4, 5), RuntimeError)
    assert "matmul" in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg
    _both_raise(lambda lib: lib.matmul(lib.tensor(2.0), lib.ones(3)), RuntimeError)


def test_int_tensor_cannot_require_grad():
    msg = _both_raise(lambda lib: lib.tensor([1, 2, 3], requires_grad=True), RuntimeError)
    assert "floating point" in msg
    _both_raise(lambda lib: lib.arange(3).requires_grad_(), RuntimeError)


def test_non_scalar_backward_needs_gradient():
    def f(lib):
        x = lib.ones(3, requires_grad=True)
        (x * 2).backward()
    msg = _both_raise(f, RuntimeError)
    assert "scalar" in msg and "(3,)" in msg


def test_backward_gradient_shape_mismatch():
    def f(lib):
        x = lib.ones(3, requires_grad=True)
        (x * 2).backward(lib.ones(4))
    msg = _both_raise(f, RuntimeError)
    assert "(4,)" in msg and "(3,)" in msg


def test_second_backward_through_freed_graph():
    def f(lib):
        x = lib.ones(3, requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    msg = _both_raise(f, RuntimeError)
    assert "second time" in msg and "retain_graph=True" in msg


def test_retain_graph_allows_second_backward():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])


def test_requires_grad_false_on_non_leaf():
    def f(lib):
        x = lib.ones(3, requires_grad=True)
        (x * 2).requires_grad = False
    msg = _both_raise(f, RuntimeError)
    assert "leaf" in msg


def test_backward_of_tensor_without_grad():
    msg = _both_raise(lambda lib: lib.ones(2).sum().backward(), RuntimeError)
    assert "does not require grad" in msg


def test_grad_of_unused_input():
    def f(lib):
        x, z = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        lib.autograd.grad((x * 2).sum(), [x, z])
    _both_raise(f, RuntimeError)
    x, z = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    gx, gz = tg.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [2.0, 2.0]


def test_dim_out_of_range():
    msg = _both_raise(lambda lib: lib.ones(2, 3).sum(dim=2), IndexError)
    assert "range" in msg
    _both_raise(lambda lib: lib.ones(2, 3).softmax(dim=-3), IndexError)


def test_item_of_many_elements():
    _both_raise(lambda lib: lib.ones(2).item(), RuntimeError)


def test_bad_input_types():
    with pytest.raises(TypeError):
        tg.tensor("abc")
    with pytest.raises(TypeError):
        tg.tensor(np.array([1 + 2j]))
    with pytest.raises((TypeError, ValueError)):
        tg.tensor([[1.0, 2.0], [3.0]])


def test_nothing_recorded_without_requires_grad_or_under_no_grad():
    a, b = tg.ones(2), tg.ones(2, requires_grad=True)
    assert (a * 2 + a).grad_fn is None
    with tg.no_grad():
        y = b * 2
    assert y.grad_fn is None and not y.requires_grad

    @tg.no_grad()
    def f(t):
        return t * 3
    assert f(b).grad_fn is None
    with tg.no_grad():
        with tg.enable_grad():
            assert (b * 2).grad_fn is not None
    with tg.set_grad_enabled(False):
        assert (b * 2).grad_fn is None
    assert (b * 2).grad_fn is not None


def test_non_leaf_grad_is_none_unless_retained():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    k = x * 4
    k.retain_grad()
    (h * k).sum().backward()
    assert h.grad is None and not h.is_leaf
    np.testing.assert_array_equal(k.grad.numpy(), h.detach().numpy())


def test_grad_output_is_cast_to_output_dtype():
    # PyTorch casts a float64 grad_output to a float32 output's dtype before backward
    x = tg.tensor([1.0], dtype=tg.float64, requires_grad=True)
    (g,) = tg.autograd.grad(x.float(), x, tg.tensor(np.array([0.1])))
    tx = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    (tg_,) = torch.autograd.grad(tx.float(), tx, torch.tensor([0.1], dtype=torch.float64))
    assert g.dtype == tg.float64 and g.item() == tg_.item() != 0.1


def test_nan_and_inf_propagate_like_torch():
    vals = np.array([-1.0, 0.0, 1.0, np.inf, np.nan])
    for name in ["log", "sqrt", "exp", "rsqrt", "tanh", "sigmoid", "abs", "relu"]:
        x = tg.tensor(vals, requires_grad=True)
        tx = torch.tensor(vals, requires_grad=True)
        with np.errstate(all="ignore"):
            y = getattr(tg, name)(x)
            y.sum().backward()
        ty = getattr(torch, name)(tx)
        ty.sum().backward()
        np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy(),
                                      err_msg=name)
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy(), err_msg=name)

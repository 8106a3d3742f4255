"""grad_fn's saved values through torch's attribute names (core/saved.py), against torch:
for each op, the same `_saved_self` / `_saved_other` / `_saved_result` (and pow's
`_saved_exponent`, mm's `_saved_mat2`, ...) exist, hold the same values, an input is the
tensor itself, and after backward reading one raises torch's RuntimeError."""
import numpy as np
import pytest
import torch

import tapegrad as tg

# the names both libraries may have: torch's full list also holds sizes, alpha, dim, ...
COMPARED = {"_saved_self", "_saved_other", "_saved_result", "_saved_exponent",
            "_saved_mat2", "_saved_vec", "_saved_tensor", "_saved_condition"}

CASES = {
    "mul": lambda L, x, y: x * y, "div": lambda L, x, y: x / y,
    "mul_number": lambda L, x, y: x * 2.0, "add": lambda L, x, y: x + y,
    "sub": lambda L, x, y: x - y, "rsub": lambda L, x, y: 1 - x, "neg": lambda L, x, y: -x,
    "exp": lambda L, x, y: x.exp(), "tanh": lambda L, x, y: x.tanh(),
    "sigmoid": lambda L, x, y: x.sigmoid(), "sin": lambda L, x, y: x.sin(),
    "cos": lambda L, x, y: x.cos(), "log": lambda L, x, y: x.log(),
    "log1p": lambda L, x, y: x.log1p(), "sqrt": lambda L, x, y: x.sqrt(),
    "rsqrt": lambda L, x, y: x.rsqrt(), "relu": lambda L, x, y: x.relu(),
    "abs": lambda L, x, y: x.abs(), "pow_number": lambda L, x, y: x ** 2,
    "pow_tensor": lambda L, x, y: x ** y, "sum": lambda L, x, y: x.sum(),
    "mean": lambda L, x, y: x.mean(), "max": lambda L, x, y: x.max(),
    "maximum": lambda L, x, y: L.maximum(x, y), "softmax": lambda L, x, y: x.softmax(-1),
    "log_softmax": lambda L, x, y: x.log_softmax(-1), "reshape": lambda L, x, y: x.reshape(-1),
    "clamp": lambda L, x, y: x.clamp(0.5, 1.5), "where": lambda L, x, y: L.where(x > 1, x, y),
    "gelu": lambda L, x, y: L.nn.functional.gelu(x), "mm": lambda L, x, y: x @ y.T,
    "mv": lambda L, x, y: x @ y[0], "dot": lambda L, x, y: x[0] @ y[0],
    "vec_mat": lambda L, x, y: x[0] @ y, "bmm": lambda L, x, y: x.expand(3, 2, 2) @ y,
}


def _pair(L, dtype):
    x = L.tensor([[1.0, 2.0], [3.0, 0.5]], dtype=dtype, requires_grad=True)
    y = L.tensor([[3.0, 4.0], [0.2, 1.5]], dtype=dtype, requires_grad=True)
    return x, y


def _saved(fn):
    return sorted(a for a in dir(fn) if a in COMPARED)


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_saved_names_and_values_as_torch(case):
    tx, ty = _pair(torch, torch.float64)
    gx, gy = _pair(tg, tg.float64)
    tz, gz = CASES[case](torch, tx, ty), CASES[case](tg, gx, gy)
    assert repr(gz.grad_fn).split()[0] == repr(tz.grad_fn).split()[0]
    names = _saved(tz.grad_fn)
    assert _saved(gz.grad_fn) == names
    for name in names:
        want, got = getattr(tz.grad_fn, name), getattr(gz.grad_fn, name)
        if isinstance(want, torch.Tensor):
            np.testing.assert_allclose(np.asarray(got._data), want.detach().numpy(),
                                       rtol=1e-15, atol=0)
            for t, g in ((tx, gx), (ty, gy)):    # an input comes back as itself
                assert (want is t) == (got is g), name
        else:
            assert got == want, name


def test_saved_input_is_the_tensor_and_result_holds_the_output():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is w
    e = x.exp()
    r = e.grad_fn._saved_result
    assert isinstance(r, tg.Tensor) and tg.equal(r, e) and r.dtype == e.dtype


def test_missing_saved_name_is_torchs_attribute_error():
    for lib in (torch, tg):
        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(AttributeError, match="'AddBackward0' object has no attribute "
                                                 "'_saved_self'"):
            (x + x).grad_fn._saved_self
        with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute "
                                                 "'_saved_bogus'"):
            (x * x).grad_fn._saved_bogus


@pytest.mark.parametrize("case", ["mul", "exp", "pow_tensor", "mm"])
def test_reading_after_backward_raises_torchs_error(case):
    msgs = []
    for L, dt in ((torch, torch.float64), (tg, tg.float64)):
        x, y = _pair(L, dt)
        z = CASES[case](L, x, y)
        names = _saved(z.grad_fn)
        z.sum().backward()
        for name in names:
            with pytest.raises(RuntimeError) as ei:
                getattr(z.grad_fn, name)
            msgs.append(str(ei.value))
    assert len(set(msgs)) == 1 and "freed" in msgs[0]


def test_retain_graph_keeps_them_readable():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x.tanh()
    y.sum().backward(retain_graph=True)
    assert tg.equal(y.grad_fn._saved_result, y)

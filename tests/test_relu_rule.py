"""relu's backward against torch's threshold_backward where the fast product and the
select differ: inf/nan incoming gradients at blocked and passing entries, nan, -0.0 and
+-inf inputs, float16/32/64, and second order (create_graph)."""
import numpy as np
import pytest
import torch

import tapegrad as tg

_DTYPES = {"float16": (tg.float16, torch.float16), "float32": (tg.float32, torch.float32),
           "float64": (tg.float64, torch.float64)}
_X = [-2.0, -0.0, 0.0, 1.5, np.inf, -np.inf, np.nan, 3.0, -1.0, 0.5]
_G = [
    [1.0] * 10,                                                            # all finite
    [np.inf, -np.inf, np.nan, np.inf, 2.0, np.nan, np.inf, -np.inf, np.nan, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, np.inf, 1.0],                 # one, blocked
    [1.0, 1.0, 1.0, np.nan, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],                 # one, passing
    [3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38],           # squares overflow
]


def _both(x, g, dtype):
    tgd, thd = _DTYPES[dtype]
    a = tg.tensor(np.array(x), dtype=tgd, requires_grad=True)
    b = torch.tensor(np.array(x), dtype=thd, requires_grad=True)
    with np.errstate(all="ignore"):
        ga = tg.tensor(np.array(g), dtype=tgd)
        a.relu().backward(ga)
    b.relu().backward(torch.tensor(np.array(g), dtype=thd))
    return a.grad.numpy(), b.grad.numpy()


@pytest.mark.parametrize("dtype", list(_DTYPES))
@pytest.mark.parametrize("k", range(len(_G)))
def test_relu_gradient_equals_torch_with_nonfinite_values(dtype, k):
    with np.errstate(all="ignore"):
        mine, theirs = _both(_X, _G[k], dtype)
    np.testing.assert_array_equal(mine, theirs)
    assert np.array_equal(np.signbit(mine), np.signbit(theirs))


@pytest.mark.parametrize("shape", [(), (1,), (3, 1, 4), (0, 5)])
def test_relu_gradient_shapes_with_an_inf_at_a_blocked_entry(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(shape)
    if x.size:
        x.flat[0], g.flat[0] = -1.0, np.inf
    with np.errstate(all="ignore"):
        mine, theirs = _both(x, g, "float64")
    np.testing.assert_array_equal(mine, theirs)


def test_relu_second_order_equals_torch_with_an_inf_gradient():
    x = np.array([-1.0, 2.0, 0.0, 3.0])
    gv = np.array([np.inf, 1.0, 2.0, 0.5])
    a = tg.tensor(x, requires_grad=True)
    ga = tg.tensor(gv, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    gb = torch.tensor(gv, requires_grad=True)
    with np.errstate(all="ignore"):
        (da,) = tg.autograd.grad(a.relu() * a, a, ga, create_graph=True)
        (da * da).sum().backward()
    (db,) = torch.autograd.grad(b.relu() * b, b, gb, create_graph=True)
    (db * db).sum().backward()
    np.testing.assert_array_equal(da.detach().numpy(), db.detach().numpy())
    np.testing.assert_array_equal(ga.grad.numpy(), gb.grad.numpy())
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())

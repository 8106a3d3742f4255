"""torch.div(..., rounding_mode="trunc"|"floor") against torch: values in every dtype,
zero gradients, integer division by zero, bool refused, `x / y` unchanged."""
import numpy as np
import pytest
import torch

import tapegrad as tg

MODES = ("trunc", "floor")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "int8", "uint8"])
def test_values_match_torch(mode, dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-50, 50, (4, 5)) if dtype != "uint8" else rng.integers(0, 200, (4, 5))
    b = rng.integers(1, 9, (5,)) * (1 if dtype == "uint8" else rng.choice([-1, 1], 5))
    if dtype.startswith("float"):
        a = a * rng.random((4, 5))
        b = b * rng.random(5) + 0.25 * np.sign(b)
    a, b = a.astype(dtype), b.astype(dtype)
    want = torch.div(torch.from_numpy(a), torch.from_numpy(b), rounding_mode=mode)
    got = tg.div(tg.tensor(a), tg.tensor(b), rounding_mode=mode)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # method form, scalar divisor
    np.testing.assert_array_equal(tg.tensor(a).div(3, rounding_mode=mode).numpy(),
                                  torch.from_numpy(a).div(3, rounding_mode=mode).numpy())


@pytest.mark.parametrize("mode", MODES)
def test_float_edges_match_torch(mode):
    a = np.array([1., -1., 0., 5., -5., np.inf, -np.inf, np.nan, 7., -7., 0.3])
    b = np.array([0., 0., 0., -0., 0., 2., 3., 1., 2., 2., 0.1])
    want = torch.div(torch.from_numpy(a), torch.from_numpy(b), rounding_mode=mode)
    got = tg.div(tg.tensor(a), tg.tensor(b), rounding_mode=mode)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_int64_exact_beyond_float_precision():
    a = np.array([2**62 + 1, -(2**62) - 3], dtype=np.int64)
    for mode in MODES:
        want = torch.div(torch.from_numpy(a), 3, rounding_mode=mode)
        np.testing.assert_array_equal(tg.div(tg.tensor(a), 3, rounding_mode=mode).numpy(),
                                      want.numpy())


@pytest.mark.parametrize("mode", MODES)
def test_gradient_is_zero_like_torch(mode):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4) + 3.0
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    ga, gb = (tg.tensor(v, requires_grad=True) for v in (a, b))
    torch.div(ta, tb, rounding_mode=mode).sum().backward()
    out = tg.div(ga, gb, rounding_mode=mode)
    assert repr(out.grad_fn).split()[0] == repr(torch.div(ta, tb, rounding_mode=mode).grad_fn).split()[0]
    out.sum().backward()
    np.testing.assert_array_equal(ga.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(gb.grad.numpy(), tb.grad.numpy())
    assert gb.grad.shape == (4,)


def test_refusals_match_torch():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.div(torch.tensor([1]), torch.tensor([0]), rounding_mode="trunc")
    for mode in MODES:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            tg.div(tg.tensor([1]), tg.tensor([0]), rounding_mode=mode)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        torch.div(torch.tensor([1.]), 2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="rounding_mode"):
        tg.div(tg.tensor([1.]), 2, rounding_mode="round")
    with pytest.raises(NotImplementedError):
        torch.div(torch.tensor([True]), torch.tensor([True]), rounding_mode="floor")
    with pytest.raises((NotImplementedError, RuntimeError)):
        tg.div(tg.tensor([True]), tg.tensor([True]), rounding_mode="floor")


def test_out_and_plain_division():
    out = tg.empty(3)
    tg.div(tg.tensor([7., -7., 2.]), 2., rounding_mode="floor", out=out)
    np.testing.assert_array_equal(out.numpy(), [3., -4., 1.])
    x = tg.tensor([1., 2.], requires_grad=True)
    assert repr((x / 2).grad_fn).startswith("<DivBackward0")
    np.testing.assert_array_equal(tg.div(x, 4).detach().numpy(), [0.25, 0.5])
    assert tg.divide is tg.div or tg.divide.__name__ in ("div", "divide")

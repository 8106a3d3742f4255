"""Integer edges against torch: division by zero raises (//, %, fmod, remainder and
their in-place forms), float operands still give inf / nan; hardtanh / relu6 keep an
integer dtype with the bounds truncated."""
import numpy as np
import pytest
import torch

import tapegrad as tg

F, TF = tg.nn.functional, torch.nn.functional


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 (the exception is the result compared)
        return type(e), str(e)
    return r.dtype if isinstance(r, (torch.Tensor, tg.Tensor)) else None, r.tolist()


def _same(f):
    t, g = _outcome(lambda: f(torch)), _outcome(lambda: f(tg))
    if isinstance(t[0], type):
        assert g[0] is t[0] and t[1] in g[1], (g, t)
    else:
        assert str(g[0]).split(".")[-1] == str(t[0]).split(".")[-1], (g, t)
        np.testing.assert_array_equal(np.array(g[1], dtype=float), np.array(t[1], dtype=float))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
@pytest.mark.parametrize("case", [
    lambda L, d: L.tensor([5, 7], dtype=d) // 0,
    lambda L, d: L.tensor([5, 7], dtype=d) % 0,
    lambda L, d: L.fmod(L.tensor([5, 7], dtype=d), 0),
    lambda L, d: L.remainder(L.tensor([5, 7], dtype=d), L.tensor([1, 0], dtype=d)),
    lambda L, d: L.floor_divide(L.tensor([5, 7], dtype=d), L.tensor([0, 2], dtype=d)),
    lambda L, d: 5 % L.tensor([0], dtype=d),
    lambda L, d: L.tensor([5, 7], dtype=d).fmod_(0),
    lambda L, d: L.tensor([5, 7], dtype=d).remainder_(L.tensor(0, dtype=d)),
    lambda L, d: L.tensor([5, 7], dtype=d).floor_divide_(0),
    lambda L, d: L.tensor([5, 7], dtype=d).div_(0, rounding_mode="floor"),
    # nonzero divisors and float operands keep working
    lambda L, d: L.tensor([5, 7], dtype=d) // L.tensor([2, 3], dtype=d),
    lambda L, d: L.tensor([5, 7], dtype=d) % 0.0,
    lambda L, d: L.fmod(L.tensor([5, 7], dtype=d), 0.0),
    lambda L, d: L.tensor([5.0, -5.0]) // 0,
])
def test_integer_division_by_zero(case, dtype):
    _same(lambda L: case(L, getattr(L, dtype)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (-1.5, 2.5), (0.5, 2.5), (0.0, 6.0), (2, 1)])
def test_hardtanh_integer(dtype, bounds):
    vals = [0, 1, 2, 3, 7, 100] if dtype == "uint8" else [-100, -3, -1, 0, 1, 2, 3, 100]
    _same(lambda L: L.nn.functional.hardtanh(L.tensor(vals, dtype=getattr(L, dtype)), *bounds))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float64", "float32"])
def test_relu6_keeps_dtype(dtype):
    vals = [0, 3, 6, 7, 200] if dtype == "uint8" else [-8, -1, 0, 3, 6, 7, 200]
    _same(lambda L: L.nn.functional.relu6(L.tensor(vals, dtype=getattr(L, dtype))))


def test_hardtanh_refusals():
    _same(lambda L: L.nn.functional.hardtanh(L.tensor([True, False])))
    _same(lambda L: L.nn.functional.hardtanh(L.tensor([1.0]), 2.0, 1.0))


def test_hardtanh_inplace_integer():
    for L in (torch, tg):
        x = L.tensor([-5, 0, 5])
        L.nn.functional.hardtanh(x, -2.7, 3.9, inplace=True)
        assert x.tolist() == [-2, 0, 3]


@pytest.mark.parametrize("case", [
    lambda L: L.tensor(300, dtype=L.int8),
    lambda L: L.tensor([300, 1], dtype=L.uint8),
    lambda L: L.tensor([-1, -255], dtype=L.uint8),
    lambda L: L.tensor([-256], dtype=L.uint8),
    lambda L: L.tensor([-255.5], dtype=L.uint8),
    lambda L: L.tensor([127.9], dtype=L.int8),
    lambda L: L.tensor([127.0, -128.0], dtype=L.int8),
    lambda L: L.tensor([float("nan")], dtype=L.int32),
    lambda L: L.tensor([2 ** 40], dtype=L.int32),
    lambda L: L.tensor([[True, 300]], dtype=L.int8),
    lambda L: L.tensor(3.7, dtype=L.int8),
    lambda L: L.tensor([2 ** 63]),
    lambda L: L.tensor(2 ** 64),
    lambda L: L.tensor([[1, 2], [3, 2 ** 70]]),
    lambda L: L.tensor([-2 ** 63 - 1]),
    lambda L: L.tensor([2 ** 63], dtype=L.int64),
    lambda L: L.tensor([2 ** 63 - 1, -2 ** 63]),
    lambda L: L.tensor([2 ** 63], dtype=L.float64),
    lambda L: L.tensor([[1], [-2 ** 64]], dtype=L.float32),
    lambda L: L.tensor([2 ** 63, 1.5]),
    lambda L: L.tensor([2 ** 63], dtype=L.bool),
])
def test_tensor_integer_overflow(case):
    _same(case)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8"])
def test_integer_pow_negative_tensor_exponent(dtype):
    b, e = [1, -1, 2, 0, -1, 3, -2, 5], [-1, -2, -2, -1, -3, 2, 3, 0]
    _same(lambda L: L.tensor(b, dtype=getattr(L, dtype)) ** L.tensor(e, dtype=getattr(L, dtype)))
    _same(lambda L: L.pow(2, L.tensor(e, dtype=getattr(L, dtype))))
    _same(lambda L: L.tensor(b[:3], dtype=getattr(L, dtype)) ** L.tensor([[-1], [2]]))
    _same(lambda L: L.tensor(b, dtype=getattr(L, dtype)) ** -1)  # a Python exponent: refused

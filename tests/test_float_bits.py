"""The floating-point construction functions against torch: frexp (mantissa, int32
exponent), ldexp, nextafter, float_power (computed in float64): values, dtypes, out= and
in-place forms, refusals, gradients (ldexp's checked against the derivative 2**other,
where torch's is 0 for negative integer exponents)."""
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch, assert_same_result, grads_of

# torch's ldexp writes a broadcast result through an out= of the input's shape and warns
pytestmark = pytest.mark.filterwarnings("ignore:An output with one or more elements")

VALUES = {
    "frexp float32": lambda L: tuple(L.frexp(L.tensor([3.0, -0.1, 0.0, -0.0, 1e30, 7.5e-39]))),
    "frexp float16": lambda L: tuple(L.frexp(L.tensor([3.0, -0.1, 0.0, 1e-5], dtype=L.float16))),
    "frexp float64 subnormal": lambda L: tuple(L.frexp(L.tensor([1e-310, -4e-320, 5e-324],
                                                                dtype=L.float64))),
    "frexp inf nan": lambda L: tuple(L.frexp(L.tensor([float("inf"), -float("inf"),
                                                       float("nan")]))),
    "frexp 0-d and empty": lambda L: (tuple(L.frexp(L.tensor(12.5))),
                                      tuple(L.frexp(L.zeros(2, 0)))),
    "frexp fields and method": lambda L: (L.tensor([6.0]).frexp().mantissa,
                                          L.tensor([6.0]).frexp().exponent),
    "frexp out": lambda L: tuple(L.frexp(L.tensor([3.0]),
                                         out=(L.zeros(1), L.zeros(1, dtype=L.int32)))),
    "ldexp int int": lambda L: L.ldexp(L.tensor([1, 3], dtype=L.int32), L.tensor([2, -1])),
    "ldexp float16 keeps float16": lambda L: L.ldexp(L.tensor([1.5], dtype=L.float16),
                                                     L.tensor([3])),
    "ldexp float32 float64": lambda L: L.ldexp(L.tensor([1.5]), L.tensor([3.0], dtype=L.float64)),
    "ldexp broadcast": lambda L: L.ldexp(L.tensor([[1.0], [2.0]]), L.tensor([0, 1, -3])),
    "ldexp bool": lambda L: L.ldexp(L.tensor([True]), L.tensor([2])),
    "ldexp_ and method": lambda L: (L.tensor([1.5]).ldexp_(L.tensor([2])),
                                    L.tensor([1.5]).ldexp(L.tensor([-2]))),
    "nextafter": lambda L: L.nextafter(L.tensor([1.0, 0.0, -1.0, 2.0]),
                                       L.tensor([2.0, -1.0, -1.0, float("inf")])),
    "nextafter float16": lambda L: L.nextafter(L.tensor([1.0, 0.0], dtype=L.float16),
                                               L.tensor([2.0, -1.0], dtype=L.float16)),
    "nextafter float64": lambda L: L.nextafter(L.tensor([1.0], dtype=L.float64),
                                               L.tensor([0.0], dtype=L.float64)),
    "nextafter promotes": lambda L: L.nextafter(L.tensor([1.0]), L.tensor([2.0], dtype=L.float64)),
    "nextafter_": lambda L: L.tensor([1.0]).nextafter_(L.tensor([2.0])),
    "float_power float32": lambda L: L.float_power(L.tensor([2.0, 3.0]), 2),
    "float_power ints": lambda L: L.float_power(L.tensor([2, 3]), L.tensor([0.5, -1])),
    "float_power number base": lambda L: L.float_power(2, L.tensor([1, 2])),
    "float_power bool": lambda L: L.float_power(L.tensor([True, False]), 2),
    "float_power_": lambda L: L.tensor([2.0], dtype=L.float64).float_power_(3),
    "float_power out": lambda L: L.float_power(L.tensor([2.0]), 2,
                                               out=L.zeros(1, dtype=L.float64)),
}


@pytest.mark.parametrize("case", list(VALUES))
def test_values_as_torch(case):
    assert_same_result(VALUES[case](tg), VALUES[case](torch), rtol=0)


REFUSALS = {
    "frexp of ints": lambda L: L.frexp(L.tensor([1])),
    "nextafter of ints": lambda L: L.nextafter(L.tensor([1]), L.tensor([2])),
    "nextafter with a number": lambda L: L.nextafter(L.tensor([1.0]), 2.0),
    "ldexp with a number": lambda L: L.ldexp(L.tensor([1.0]), 2),
    "float_power_ of float32": lambda L: L.tensor([1.0]).float_power_(2),
    "float_power of numbers": lambda L: L.float_power(2, 3),
    "float_power into a float32 out": lambda L: L.float_power(L.tensor([2.0]), 2, out=L.zeros(1)),
    "frexp into a float exponent": lambda L: L.frexp(L.tensor([3.0]), out=(L.zeros(1), L.zeros(1))),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusals_as_torch(case):
    assert_raises_as_torch(REFUSALS[case], tg, chars=0)




GRADS = {
    "frexp mantissa: g / 2**exponent": (lambda L, x: L.frexp(x).mantissa,
                                        [3.0, -0.1, 100.0, 0.7]),
    "nextafter: g to input, zeros to other": (lambda L, x, y: L.nextafter(x, y),
                                              [1.0, 2.0, -3.0], [[0.0], [5.0]]),
    "float_power": (lambda L, x, y: L.float_power(x, y), [1.5, 2.0, 0.5], [[2.0], [-0.5]]),
    "ldexp, float exponent": (lambda L, x, y: L.ldexp(x, y), [1.5, 2.0], [[1.0], [-2.0]]),
}


@pytest.mark.parametrize("case", list(GRADS))
def test_gradients_as_torch(case):
    fn, *arrays = GRADS[case]
    for g, w in zip(grads_of(tg, fn, *arrays), grads_of(torch, fn, *arrays)):
        assert_same_result(g, w, rtol=1e-12)


def test_ldexp_gradient_is_two_to_the_integer_exponent():
    # torch computes its 2**other in integers (0 for a negative exponent); the derivative
    # of x * 2**e is 2**e
    x = tg.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=tg.float64, requires_grad=True)
    e = tg.tensor([[-2], [3]])
    tg.ldexp(x, e).sum().backward()
    assert x.grad.tolist() == [[0.25, 0.25], [8.0, 8.0]]


def test_second_order_of_float_power_and_frexp():
    for fn in (lambda L, x: L.float_power(x, 3), lambda L, x: L.frexp(x * 5.0).mantissa ** 2):
        res = []
        for L in (tg, torch):
            x = L.tensor([1.5, 0.7, -2.0], dtype=L.float64, requires_grad=True)
            (g,) = L.autograd.grad(fn(L, x).sum(), x, create_graph=True)
            res.append(L.autograd.grad(g.sum(), x)[0])
        assert_same_result(*res, rtol=1e-12)

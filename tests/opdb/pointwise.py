"""Op-database entries: pointwise ops: arithmetic, powers, exponentials and logarithms,
rounding, abs/sign, sin/cos/tanh, sigmoid/relu, clamp, where, dtype casts and copies.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import (Domain, NONZERO, POSITIVE, REAL, SEPARATED, SEPARATED_OFF, Sample,
                     binary_samples, hyp_elementwise, op, unary_samples)
from opdb.samples import E1, E2, _fixed, _ties_full


# ---- sample generators for particular ops ---------------------------------------------
def _scalar_operand(rng, info):
    return [Sample((info.domain_for(0).sample(rng, s),)) for s in [(), (3,), (2, 3)]]


def _pow_scalar(rng, info):
    pos = lambda s: rng.uniform(0.5, 2.0, s)  # noqa: E731
    real = lambda s: rng.uniform(-2.0, 2.0, s)  # noqa: E731
    nz = lambda s: NONZERO.sample(rng, s)  # noqa: E731
    return [
        Sample((real((2, 3)), 2)), Sample((real(()), 3)), Sample((pos((3,)), 0.5)),
        Sample((pos((2, 2)), -1.5)), Sample((real((3,)), 0)), Sample((real((3, 1)), 1)),
        Sample((pos((4,)), 2.5)),
        # negative bases with integer exponents (real results)
        Sample((-pos((3,)), 3), note="negbase"), Sample((nz((2, 3)), -2), note="negbase"),
        Sample((-pos(()), 2.0), note="negbase"),
    ]


def _pow_base0(rng, info):
    b = np.array([0.0, 0.0, 1.5, -1.25])
    return [
        Sample((b, 2), note="base0"), Sample((b, 3), note="base0"),
        Sample((b, 1), note="base0"), Sample((b, 0), note="base0"),
        # sqrt-like: d/dx at 0 is inf in PyTorch too; not differentiable there
        Sample((np.abs(b), 0.5), gradcheck=False, note="base0"),
        Sample((b, -1.0), gradcheck=False, note="base0"),
    ]


def _pow_tensor(rng, info):
    out = [Sample((rng.uniform(0.5, 2.0, a), rng.uniform(-2.0, 2.0, b)))
           for a, b in [((), ()), ((2, 3), (2, 3)), ((2, 3), (3,)), ((3, 1), (1, 2)),
                        ((), (2, 2)), ((4,), ())]]
    # base 0 with a tensor exponent: d/dy of 0**y is 0 where y >= 0 (PyTorch's convention)
    out.append(Sample((np.array([0.0, 0.0, 1.5, 0.0]), np.array([2.0, 0.0, 1.5, 3.0])),
                      gradcheck=False, note="base0"))
    # negative base with integer exponent: d/dx is real, d/dy is nan (log of a negative)
    out.append(Sample((np.array([-2.0, -1.5, -0.5]), np.array([2.0, 3.0, -1.0])),
                      gradcheck=False, note="negbase"))
    return out


def _where_samples(rng, info):
    c = lambda s: rng.random(s) > 0.5  # noqa: E731
    x = lambda s: rng.uniform(-2.0, 2.0, s)  # noqa: E731
    return [Sample((c((2, 3)), x((2, 3)), x((2, 3)))), Sample((c((2, 3)), x((3,)), x(()))),
            Sample((c(()), x((2,)), x((2,)))), Sample((c((3, 1)), x((1, 4)), x((3, 4)))),
            Sample((np.array([True, False, True]), x((2, 1)), x((3,))))]


def _clamp_tensor_samples(rng, info):
    return [Sample((SEPARATED.sample(rng, (3, 4)), -np.abs(SEPARATED_OFF.sample(rng, (3, 4))),
                    np.abs(SEPARATED_OFF.sample(rng, (4,))))),
            Sample((SEPARATED.sample(rng, (2, 3)), -np.abs(SEPARATED_OFF.sample(rng, ())),
                    np.abs(SEPARATED_OFF.sample(rng, (2, 1)))))]


def _cast(lib, x):
    return x.to(lib.float32) if x.dtype == lib.float64 else x.to(lib.float64)


def _hyp_clamp(draw, info):
    from hypothesis import strategies as st
    s = hyp_elementwise(1)(draw, info)
    lo = draw(st.one_of(st.none(), st.floats(-2, 1).map(lambda v: round(v, 1))))
    hi = draw(st.one_of(st.none(), st.floats(-1, 2).map(lambda v: round(v, 1))))
    if lo is None and hi is None:
        lo = -0.5
    s.kwargs = {"min": lo, "max": hi}
    return s


def _hyp_scalar_exp(draw, info):
    from hypothesis import strategies as st
    from _opinfo import draw_array
    from hypothesis.extra import numpy as hnp
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    e = draw(st.sampled_from([0, 1, 2, 3, -1, -2, 0.5, 1.5, -0.5, 2.0]))
    dom = POSITIVE if (isinstance(e, float) or e < 0) else REAL
    return Sample((draw_array(draw, shape, dom), e))


# frac: away from the integers, where trunc jumps
NON_INTEGER = Domain("non-integer", -3.0, 3.0,
                     lambda rng, s: np.floor(rng.uniform(-3, 3, s)) + rng.uniform(0.1, 0.9, s))


_NAN_INF = np.array([1.5, np.nan, np.inf, -np.inf, -0.5])


ENTRIES = [
    # ---- binary arithmetic ----
    op("add", lambda lib, x, y: lib.add(x, y), binary_samples(), hyp=E2),
    op("add", lambda lib, x, y: x + y, binary_samples(), variant="operator", hyp=E2),
    op("add", lambda lib, x, y: lib.add(x, y, alpha=2.5), binary_samples(), variant="alpha"),
    op("add", lambda lib, x: (x + 2.5, 2.5 + x), _scalar_operand, variant="scalar", hyp=E1),
    op("sub", lambda lib, x, y: lib.sub(x, y), binary_samples(), hyp=E2),
    op("sub", lambda lib, x, y: x - y, binary_samples(), variant="operator"),
    op("sub", lambda lib, x: (x - 2.5, 1.5 - x), _scalar_operand, variant="scalar", hyp=E1),
    op("mul", lambda lib, x, y: lib.mul(x, y), binary_samples(), hyp=E2),
    op("mul", lambda lib, x, y: x * y, binary_samples(), variant="operator"),
    op("mul", lambda lib, x: (x * -1.5, 3 * x), _scalar_operand, variant="scalar", hyp=E1),
    op("div", lambda lib, x, y: lib.div(x, y), binary_samples(), domain=(REAL, NONZERO),
       hyp=E2),
    op("div", lambda lib, x, y: x / y, binary_samples(), domain=(REAL, NONZERO),
       variant="operator"),
    op("div", lambda lib, x: (x / 4.0, 2.0 / x), _scalar_operand, domain=NONZERO,
       variant="scalar", hyp=E1),
    # rounding_mode: piecewise constant, zero gradients (the samples stay off the jumps)
    op("div", lambda lib, x, y: (lib.div(x, y, rounding_mode="floor"),
                                 x.div(y, rounding_mode="trunc")),
       binary_samples(), domain=(REAL, NONZERO), variant="rounding_mode",
       covers=("div_rounded",)),
    op("neg", lambda lib, x: lib.neg(x), unary_samples(), hyp=E1),
    op("neg", lambda lib, x: -x, unary_samples(), variant="operator"),
    # ---- pow: scalar exponent, tensor exponent, base 0, negative bases ----
    op("pow", lambda lib, x, e: x ** e, _pow_scalar, variant="scalar_exp", hyp=_hyp_scalar_exp),
    op("pow", lambda lib, x, e: lib.pow(x, e), _pow_base0, variant="base0"),
    op("pow", lambda lib, x, y: x ** y, _pow_tensor, domain=(POSITIVE, REAL),
       variant="tensor_exp", hyp=E2),
    op("pow", lambda lib, x: (2.0 ** x, 0.5 ** x), _scalar_operand, variant="rpow", hyp=E1),
    # ---- unary ----
    op("exp", lambda lib, x: lib.exp(x), unary_samples(), hyp=E1),
    op("log", lambda lib, x: lib.log(x), unary_samples(), domain=POSITIVE, hyp=E1),
    op("log2", lambda lib, x: lib.log2(x), unary_samples(), domain=POSITIVE, hyp=E1),
    op("remainder", lambda lib, x, y: lib.remainder(x, y), binary_samples(),
       domain=(REAL, NONZERO)),
    op("remainder", lambda lib, x, y: x % y, binary_samples(), domain=(REAL, NONZERO),
       variant="operator"),
    op("remainder", lambda lib, x: (x % 0.7, x.remainder(-1.3)), _scalar_operand,
       variant="scalar"),
    op("fmod", lambda lib, x, y: lib.fmod(x, y), binary_samples(), domain=(REAL, NONZERO)),
    op("fmod", lambda lib, x: x.fmod(0.7), _scalar_operand, variant="scalar"),
    op("mul", lambda lib, x: lib.outer(x.reshape(-1), x.reshape(-1)[:2] * 2),
       unary_samples([(3,), (2, 2)]), variant="outer"),
    op("log2", lambda lib, x: x.log2(), unary_samples([(2, 3)]), domain=POSITIVE,
       variant="method"),
    op("log10", lambda lib, x: lib.log10(x), unary_samples(), domain=POSITIVE, hyp=E1),
    op("log1p", lambda lib, x: lib.log1p(x), unary_samples(), domain=POSITIVE, hyp=E1),
    op("log1p", lambda lib, x: x.log1p(), unary_samples([(2, 3)]), domain=POSITIVE,
       variant="method"),
    op("expm1", lambda lib, x: lib.expm1(x), unary_samples(), hyp=E1),
    op("expm1", lambda lib, x: x.expm1(), unary_samples([(2, 3)]), variant="method"),
    op("floor", lambda lib, x: lib.floor(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("ceil", lambda lib, x: lib.ceil(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("trunc", lambda lib, x: lib.trunc(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("trunc", lambda lib, x: (x.trunc(), x.floor(), x.ceil()), unary_samples([(2, 3)]),
       domain=SEPARATED, variant="methods"),
    op("sqrt", lambda lib, x: lib.sqrt(x), unary_samples(), domain=POSITIVE, hyp=E1),
    op("rsqrt", lambda lib, x: lib.rsqrt(x), unary_samples(), domain=POSITIVE, hyp=E1),
    op("reciprocal", lambda lib, x: lib.reciprocal(x), unary_samples(), domain=NONZERO,
       hyp=E1),
    op("reciprocal", lambda lib, x: (1.0 / x, 3 / x, x.reciprocal()), unary_samples([(2, 3)]),
       domain=NONZERO, variant="rdiv"),
    op("abs", lambda lib, x: lib.abs(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("abs", lambda lib, x: abs(x), _ties_full, variant="at0"),
    op("sign", lambda lib, x: lib.sign(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("sin", lambda lib, x: lib.sin(x), unary_samples(), hyp=E1),
    op("cos", lambda lib, x: lib.cos(x), unary_samples(), hyp=E1),
    op("tanh", lambda lib, x: lib.tanh(x), unary_samples(), hyp=E1),
    op("sigmoid", lambda lib, x: lib.sigmoid(x), unary_samples(), hyp=E1),
    op("sigmoid", lambda lib, x: lib.sigmoid(x * 40.0),
       lambda rng, info: [Sample((np.array([-3.0, -1.0, 0.0, 1.0, 3.0]),))], variant="large"),
    op("relu", lambda lib, x: lib.relu(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("relu", lambda lib, x: lib.relu(x),
       lambda rng, info: [Sample((np.array([-1.0, 0.0, 0.0, 2.0]),), gradcheck=False,
                                 note="at0")], variant="at0"),
    # ---- clamp ----
    op("clamp", lambda lib, x, **kw: lib.clamp(x, **kw),
       lambda rng, info: [
           Sample((SEPARATED.sample(rng, (3, 4)),), {"min": -0.5, "max": 0.5}),
           Sample((SEPARATED.sample(rng, (5,)),), {"min": -0.2}),
           Sample((SEPARATED.sample(rng, ()),), {"max": 0.1}),
           Sample((SEPARATED.sample(rng, (2, 3)),), {"min": 0.5, "max": -0.5}, note="min>max"),
           Sample((np.array([-1.0, -0.5, 0.0, 0.5, 1.0]),), {"min": -0.5, "max": 0.5},
                  gradcheck=False, note="at bounds")],
       domain=SEPARATED, hyp=_hyp_clamp),
    op("clamp", lambda lib, x, lo, hi: lib.clamp(x, min=lo, max=hi), _clamp_tensor_samples,
       variant="tensor_bounds", covers=("where",)),
    # ---- where ----
    op("where", lambda lib, c, x, y: lib.where(c, x, y), _where_samples),
    op("where", lambda lib, x: lib.where(x > 0, x, 0.0), unary_samples(), variant="scalar",
       domain=SEPARATED),
    # ---- dtype cast and copy ----
    # NOTE: the float32 round trip loses ~1e-7: gradcheck with a larger step (the map is
    # linear, so the step adds no truncation error).
    op("cast", _cast, unary_samples(), gradcheck_kw={"eps": 1e-2, "atol": 1e-4}, hyp=E1),
    op("cast", lambda lib, x: (x.double() * 2, x.float() + 1), unary_samples([(3,), (2, 3)]),
       variant="methods", gradcheck_kw={"eps": 1e-2, "atol": 1e-4}),
    op("clone", lambda lib, x: lib.clone(x) * 1.0, unary_samples(), hyp=E1),
    op("clone", lambda lib, x: x.clone(), unary_samples([(2, 3)]), variant="method"),
    op("logaddexp", lambda lib, a, b: lib.logaddexp(a, b), binary_samples()),
    op("logaddexp2", lambda lib, a, b: a.logaddexp2(b), binary_samples()),
    op("frac", lambda lib, x: lib.frac(x), unary_samples(), domain=NON_INTEGER),
    op("hypot", lambda lib, x, y: lib.hypot(x, y), binary_samples(), domain=NONZERO, hyp=E2),
    op("deg2rad", lambda lib, x: lib.deg2rad(x), unary_samples(), hyp=E1),
    op("rad2deg", lambda lib, x: x.rad2deg(), unary_samples()),
    op("exp2", lambda lib, x: x.exp2(), unary_samples(), hyp=E1),
    op("copysign", lambda lib, x, y: lib.copysign(x, y), binary_samples(), domain=NONZERO,
       hyp=E2),
    op("copysign", lambda lib, x: x.copysign(-1.0), unary_samples(), domain=NONZERO,
       variant="number"),
    op("true_divide", lambda lib, a, b: a.true_divide(b), binary_samples(), domain=(REAL, NONZERO)),
    op("round", lambda lib, x: lib.round(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("round", lambda lib, x, **kw: lib.round(x * 3.0, **kw), unary_samples([(5,), (2, 3)],
                                                                          decimals=1),
       domain=SEPARATED, variant="decimals"),
    op("round", lambda lib, x: (x.round(), (x * 40.0).round(decimals=-1)),
       lambda rng, info: [Sample((np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.0625, 0.1375]),),
                                 gradcheck=False, note="halves")],
       variant="half_even"),
    # ---- nan_to_num (where) ----
    op("where", lambda lib, x: lib.nan_to_num(x), unary_samples([(3,), (2, 3)]),
       variant="nan_to_num"),
    op("where", lambda lib, x: (lib.nan_to_num(x), x.nan_to_num(nan=2.0, posinf=9.0,
                                                               neginf=-9.0)),
       _fixed(_NAN_INF), variant="nan_to_num_nan"),
    # ---- nextafter (g to input, zeros to other), float_power, ldexp, frexp ----
    op("nextafter", lambda lib, x, y: lib.nextafter(x, y), binary_samples()),
    op("pow", lambda lib, x, y: lib.float_power(x.abs() + 0.5, y), binary_samples(),
       variant="float_power"),
    # (non-negative exponents: torch's gradient is 0 for a negative integer exponent, its
    # 2**other computed in integers; tests/test_float_bits.py checks tapegrad's 2**other)
    op("mul", lambda lib, x: lib.ldexp(x, lib.tensor([[1], [0], [3]])),
       unary_samples([(3, 4), (1,)]), variant="ldexp"),
    op("mul", lambda lib, x: lib.frexp(x * 37.0).mantissa, unary_samples([(), (3, 4)]),
       variant="frexp"),
]

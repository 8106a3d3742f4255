"""Op-database entries for the trigonometric and hyperbolic functions of ops/rules/pointwise.py:
tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh (values and gradients
against torch, gradcheck, second order, forward mode: tests/test_opdb.py)."""
from _opinfo import NONZERO, REAL, Domain, binary_samples, hyp_elementwise, op, unary_samples

E1 = hyp_elementwise(1)
# inside (-1, 1), away from the infinite derivatives at +-1
OPEN_UNIT = Domain("open unit", -0.9, 0.9, lambda rng, s: rng.uniform(-0.9, 0.9, s))
# acosh: above 1, away from its infinite derivative at 1
ABOVE_ONE = Domain("above one", 1.2, 4.0, lambda rng, s: rng.uniform(1.2, 4.0, s))
# tan: inside (-pi/2, pi/2), away from its poles
NO_POLE = Domain("no pole", -1.2, 1.2, lambda rng, s: rng.uniform(-1.2, 1.2, s))

ENTRIES = [
    op("tan", lambda lib, x: lib.tan(x), unary_samples(), domain=NO_POLE, hyp=E1),
    op("asin", lambda lib, x: lib.asin(x), unary_samples(), domain=OPEN_UNIT, hyp=E1),
    op("acos", lambda lib, x: lib.acos(x), unary_samples(), domain=OPEN_UNIT, hyp=E1),
    op("atan", lambda lib, x: lib.atan(x), unary_samples(), domain=REAL, hyp=E1),
    op("atan2", lambda lib, y, x: lib.atan2(y, x), binary_samples(), domain=(REAL, NONZERO)),
    op("sinh", lambda lib, x: lib.sinh(x), unary_samples(), domain=REAL, hyp=E1),
    op("cosh", lambda lib, x: lib.cosh(x), unary_samples(), domain=REAL, hyp=E1),
    op("asinh", lambda lib, x: lib.asinh(x), unary_samples(), domain=REAL, hyp=E1),
    op("acosh", lambda lib, x: lib.acosh(x), unary_samples(), domain=ABOVE_ONE, hyp=E1),
    op("atanh", lambda lib, x: lib.atanh(x), unary_samples(), domain=OPEN_UNIT, hyp=E1),
]

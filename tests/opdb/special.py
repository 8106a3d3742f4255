"""Op-database entries: the special functions (torch.special): erf, erfc, erfinv, xlogy, sinc,
logit, lgamma, digamma, polygamma, mvlgamma.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import Domain, POSITIVE, REAL, Sample, binary_samples, op, unary_samples
from opdb.samples import E1, E2, _shapes


UNIT = Domain("(0, 1)", 0.05, 0.95, lambda rng, s: rng.uniform(0.1, 0.9, s))


# sinc: away from 0, where torch's second derivative is a limit
AWAY0 = Domain("away from 0", -3.0, 3.0,
               lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.2, 2.0, s))


OPEN_UNIT = Domain("open unit", -0.9, 0.9, lambda rng, s: rng.uniform(-0.9, 0.9, s))


WIDE = np.concatenate([np.linspace(-6.0, 6.0, 49), [-27.0, -9.5, 9.5, 27.0, 1e-8, -1e-300]])


ENTRIES = [
    op("xlogy", lambda lib, x, y: lib.xlogy(x, y), binary_samples(),
       domain=(REAL, POSITIVE), hyp=E2),
    op("xlogy", lambda lib, x, y: x.xlogy(y) + lib.xlogy(2.0, y), _shapes(
        (((2, 3), (3,)), {})), domain=(REAL, POSITIVE), variant="number"),
    op("sinc", lambda lib, x: lib.sinc(x), unary_samples(), domain=AWAY0, hyp=E1,
       # near 0 the float32 gradient is a difference of near-equal terms in both libraries
       # (each in its own order): a few 1e-5 apart relatively
       f32_tol=(1e-3, 1e-5)),
    op("logit", lambda lib, x: lib.logit(x), unary_samples(), domain=UNIT, hyp=E1),
    op("logit", lambda lib, x: x.logit(eps=0.2), unary_samples(), domain=UNIT, variant="eps",
       gradgrad=False),  # torch's logit_backward with eps has no second derivative
    # ---- special functions ----
    op("erf", lambda lib, x: lib.erf(x), unary_samples(), hyp=E1),
    op("erf", lambda lib, x: (x.erf(), x.erfc(), (x * 0.4).erfinv()), unary_samples([(2, 3)]),
       variant="methods", covers=("erfc", "erfinv")),
    op("erf", lambda lib, x: lib.erf(x), lambda rng, info: [Sample((WIDE,), note="wide")],
       variant="wide"),
    # the gamma family (SciPy forwards); trigamma (digamma's derivative, lgamma's second)
    # at 1e-8: torch's own kernel is off by up to ~5e-10 relative (SciPy agrees with mpmath)
    op("lgamma", lambda lib, x: lib.lgamma(x), unary_samples(), domain=POSITIVE,
       f64_tol=(1e-8, 1e-10)),
    op("digamma", lambda lib, x: lib.digamma(x), unary_samples(), domain=POSITIVE,
       f64_tol=(1e-8, 1e-10)),
    op("polygamma", lambda lib, x: (lib.polygamma(1, x), x.polygamma(2)), unary_samples(),
       domain=POSITIVE, f64_tol=(1e-8, 1e-10), f32_tol=(1e-4, 1e-5)),
    op("lgamma", lambda lib, x: lib.mvlgamma(x + 1.5, 3), unary_samples(), domain=POSITIVE,
       variant="mvlgamma", f64_tol=(1e-8, 1e-10)),
    op("erfc", lambda lib, x: lib.erfc(x), unary_samples(), hyp=E1),
    op("erfc", lambda lib, x: x.erfc(), lambda rng, info: [Sample((WIDE,), note="wide")],
       variant="wide"),
    op("erfinv", lambda lib, x: lib.erfinv(x), unary_samples(), domain=OPEN_UNIT, hyp=E1),
    op("erfinv", lambda lib, x: x.erfinv(),
       lambda rng, info: [Sample((np.array([-0.999999, -0.75, -1e-9, 0.0, 0.3, 0.5, 0.51,
                                            0.9999]),), note="edges")],
       variant="edges", gradcheck_kw={"eps": 1e-9, "atol": 1e-4, "rtol": 1e-4}),
]

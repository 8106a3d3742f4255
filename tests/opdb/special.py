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


# ---- torch.special: Bessel, normal distribution, entr, erfcx, xlog1py, igamma, zeta, the
# orthogonal polynomials (tapegrad/ops/rules/bessel.py, special.py, orthogonal_polynomials.py)
def _sp(name):
    """lib.special.<name> (torch.i0 and igamma/igammac live at the root too)."""
    return lambda lib, *a: getattr(lib.special, name)(*a)


def _with_nograd(samples, nograd):
    """`samples`, each with the arguments at `nograd` constant (torch differentiates
    igamma and zeta w.r.t. their second argument only)."""
    def gen(rng, info):
        out = samples(rng, info)
        for s in out:
            s.nograd = nograd
        return out
    return gen


ABOVE1 = Domain("(1.5, 4)", 1.5, 4.0, lambda rng, s: rng.uniform(1.5, 4.0, s))
ABOVE_M1 = Domain("> -1", -0.5, 3.0, lambda rng, s: rng.uniform(-0.5, 2.0, s))
AWAY_POLES = Domain("away from 0", 0.25, 3.0, lambda rng, s: rng.uniform(0.5, 3.0, s))
# degrees: integer tensors (constants: torch gives the polynomials no derivative)
DEGREES = np.array([0, 1, 2, 3, 5, 7, 9, 12])
# the polynomial's points: +-1 and 0 (torch's exact endpoint values), inside and outside
POINTS = np.array([-1.3, -1.0, -0.7, -0.2, 0.0, 0.3, 0.5, 0.9, 1.0, 1.2])


def _poly_samples(rng, info):
    x = rng.uniform(-1.2, 1.2, (3, 1))
    return [Sample((POINTS[:, None], DEGREES), note="int degrees"),
            Sample((x, np.array([2.0, 4.0, 8.5, 10.0, -1.0])), note="float degrees"),
            Sample((POINTS, 6), note="number degree"),
            Sample((np.array(0.4), 11), note="0-d")]


def _unary_entry(name, domain=REAL, **kw):
    return op(name, _sp(name), unary_samples(), domain=domain, **kw)


_NO_GRAD = dict(differentiable=False, gradgrad=False)
_POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")

ENTRIES += [
    op("i0", lambda lib, x: lib.i0(x), unary_samples(), hyp=E1),
    op("i0", lambda lib, x: (x.i0(), lib.special.i0(x * 3)), unary_samples([(2, 3)]),
       variant="method"),
    _unary_entry("i0e", hyp=E1),
    _unary_entry("i1", hyp=E1),
    _unary_entry("i1e", hyp=E1),
    op("i1", lambda lib, x: (lib.special.i1(x), lib.special.i1e(x)),
       lambda rng, info: [Sample((np.array([0.0, -0.0, 1e-20, -3.0, 2.0]),), note="zero")],
       variant="at0", covers=("i1e",), gradcheck_kw={"eps": 1e-9, "atol": 1e-5}),
    _unary_entry("entr", POSITIVE, hyp=E1),
    _unary_entry("erfcx", hyp=E1),
    _unary_entry("ndtr", hyp=E1),
    _unary_entry("ndtri", UNIT, hyp=E1),
    _unary_entry("log_ndtr", hyp=E1),
    op("xlog1py", _sp("xlog1py"), binary_samples(), domain=(REAL, ABOVE_M1), hyp=E2),
    op("xlog1py", lambda lib, x, y: lib.special.xlog1py(x, 0.5) + lib.special.xlog1py(2.0, y),
       _shapes((((2, 3), (3,)), {})), domain=(REAL, ABOVE_M1), variant="number"),
    op("igamma", lambda lib, a, x: lib.igamma(a, x),
       _with_nograd(binary_samples(), (0,)), domain=(POSITIVE, POSITIVE),
       f64_tol=(1e-9, 1e-12)),
    op("igammac", lambda lib, a, x: (lib.igammac(a, x), a.igammac(x),
                                     lib.special.gammaincc(a, x)),
       _with_nograd(binary_samples(), (0,)), domain=(POSITIVE, POSITIVE),
       f64_tol=(1e-9, 1e-12)),
    op("zeta", _sp("zeta"), _with_nograd(binary_samples(), (0,)),
       domain=(ABOVE1, POSITIVE), f64_tol=(1e-9, 1e-12)),
    # ---- no derivative in torch: values only (the results carry no grad_fn there) ----
    *[_unary_entry(n, **_NO_GRAD) for n in (
        "modified_bessel_i0", "modified_bessel_i1", "bessel_j0", "bessel_j1",
        "spherical_bessel_j0", "airy_ai")],
    *[_unary_entry(n, AWAY_POLES, **_NO_GRAD) for n in (
        "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1", "bessel_y0", "bessel_y1")],
    *[op(n, _sp(n), _poly_samples, **_NO_GRAD) for n in _POLYNOMIALS],
]

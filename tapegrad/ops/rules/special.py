"""Table entries of the special functions and rounding: erf, erfc, erfinv, round; and
bernoulli (a step function of its probabilities, so its gradient is 0 as torch's); the
gamma family (lgamma, digamma, polygamma), entr, erfcx, ndtr, ndtri, log_ndtr, xlog1py,
igamma/igammac and zeta (SciPy forwards, imported on first use; the Bessel functions are
in bessel.py, the orthogonal polynomials in orthogonal_polynomials.py).

NumPy has no erf, so erf/erfc/erfinv's forwards are computed here (no SciPy import) in
float64 (then cast back to the input's dtype), vectorized:
  * |x| < 1.5: the everywhere-positive series
        erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_k 2^k x^(2k+1) / (1*3*...*(2k+1)),
    no cancellation between terms; 60 terms reach the float64 rounding level there;
  * |x| >= 1.5: Laplace's continued fraction for erfc,
        erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    evaluated bottom-up at a fixed depth per band of x (100 terms from 1.5, 40 from 3).
Measured against math.erf/math.erfc on [-30, 30] and on 1e-300..25: relative error
below 2e-15 for erf and 2e-13 for erfc (erfc = 1 - erf below 1.5, where erfc > 0.03).
erfinv starts from Winitzki's closed-form approximation (relative error ~2e-3) and takes
three Halley steps on erf(y) = x (on erfc(y) = 1 - |x| for |x| > 0.5, where 1 - |x|
is exact and the residual keeps its relative precision).
"""
import math

import numpy as np

from ..registry import defop
from ._within_rule import within_rule
from .pointwise import _raw, log1p

_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_SQRTPI_2 = math.sqrt(math.pi) / 2.0
_SPLIT = 1.5
_BANDS = ((_SPLIT, 2.0, 100), (2.0, 3.0, 60), (3.0, None, 40))


def _erf_series(a):
    x2 = a * a
    term = a.copy()
    s = a.copy()
    for k in range(1, 30):
        term *= (2.0 / (2 * k + 1)) * x2
        s += term
    return _2_SQRTPI * np.exp(-x2) * s


def _erfc_cf(a, depth):
    f = a.copy()
    for k in range(depth, 0, -1):
        f = a + (0.5 * k) / f
    with np.errstate(invalid="ignore", over="ignore"):
        return np.exp(-a * a) / (math.sqrt(math.pi) * f)


def _erf_erfc(x):
    """(erf(|x|), erfc(|x|)) as float64 arrays; each branch computed on its elements."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    erf, erfc = np.empty_like(a), np.empty_like(a)
    small = a < _SPLIT  # NaN goes to the continued fraction, which keeps it NaN
    if small.any():
        e = _erf_series(a[small])
        erf[small], erfc[small] = e, 1.0 - e
    # the fraction converges faster the larger x: the depth each band needs (measured
    # against math.erfc to 1.5e-15, with a margin)
    for lo, hi, depth in _BANDS:
        band = (a >= lo) & (a < hi) if hi is not None else ~(a < lo)  # NaN: last band
        if band.any():
            c = _erfc_cf(a[band], depth)
            erf[band], erfc[band] = 1.0 - c, c
    return erf, erfc


def _float_out(x, out):
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)  # ints: promoted later
    return out.astype(dt, copy=False)


def erf_forward(x):
    e, _ = _erf_erfc(x)
    return _float_out(x, np.copysign(e, x))


def erfc_forward(x):
    _, c = _erf_erfc(x)
    return _float_out(x, np.where(np.asarray(x) < 0, 2.0 - c, c))


def erfinv_forward(x):
    v = np.asarray(x, dtype=np.float64)
    a = np.abs(v)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ln = np.log1p(-a * a)  # log(1 - x^2)
        c = 2.0 / (math.pi * 0.147) + 0.5 * ln
        y = np.sqrt(np.sqrt(c * c - ln / 0.147) - c)  # Winitzki, for |x|
        tail = a > 0.5
        one_minus = 1.0 - a  # exact for |x| in [0.5, 1] (Sterbenz)
        for _ in range(3):
            e, ec = _erf_erfc(y)
            resid = np.where(tail, one_minus - ec, e - a)  # erf(y) - |x|, accurately
            u = resid / (_2_SQRTPI * np.exp(-y * y))
            step = u / (1.0 + y * u)
            y = np.where(np.isfinite(step), y - step, y)
        y = np.where(a == 1.0, np.inf, np.where(a > 1.0, np.nan, y))
    return _float_out(x, np.copysign(y, v))


def round_forward(x, decimals=0):
    """torch.round: half to even; with decimals, torch's own formula in x's dtype
    (x * 10^d rounded then divided; x / 10^-d rounded then multiplied for d < 0),
    which is not NumPy's (np.round(2.675, 2) is 2.67, torch's float32 gives 2.68)."""
    if decimals == 0 or x.dtype.kind not in "f":
        return np.rint(x) if x.dtype.kind == "f" else x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        if decimals > 0:
            p = x.dtype.type(10.0 ** decimals)
            return np.rint(x * p) / p
        p = x.dtype.type(10.0 ** -decimals)
        return np.rint(x / p) * p


erf = defop("erf", erf_forward, promote="float",
            partials=[lambda xp, ans, x: _2_SQRTPI * xp.exp(-(x * x))], reads=["x"],
            text="dx = g*2/sqrt(pi)*exp(-x**2)",
            hint="erf'(x) = 2/sqrt(pi)*exp(-x**2) is in (0, 1.13]: finite for every x")
erfc = defop("erfc", erfc_forward, promote="float",
             partials=[lambda xp, ans, x: -_2_SQRTPI * xp.exp(-(x * x))], reads=["x"],
             text="dx = -g*2/sqrt(pi)*exp(-x**2)",
             hint="erfc'(x) = -2/sqrt(pi)*exp(-x**2) is in [-1.13, 0): finite for every x")
erfinv = defop("erfinv", erfinv_forward, promote="float",
               partials=[lambda xp, ans, x: _SQRTPI_2 * xp.exp(ans * ans)], reads=["ans"],
               text="dx = g*sqrt(pi)/2*exp(ans**2)",
               hint=("erfinv'(x) = sqrt(pi)/2*exp(erfinv(x)**2) is infinite at x = +-1 "
                     "(nan outside [-1, 1]); clamp the input inside (-1, 1)"))
round = defop("round", round_forward,
              partials=[lambda xp, ans, x, decimals=0: xp.zeros_like(x)], reads=["x"],
              text="dx = 0",
              hint=("round is piecewise constant: its derivative is 0 everywhere (PyTorch's "
                    "choice at the jumps too)"))


def bernoulli_forward(p, draws):
    # `draws` are the uniform numbers the function drew (an argument, so the node records
    # exactly the sample it returned): 1 where draw < p
    return (draws < p).astype(p.dtype)


# NOTE: torch.bernoulli(p) with p requiring grad returns a tensor that requires grad
# (BernoulliBackward0) whose gradient w.r.t. p is 0; a model may put it in a graph.
bernoulli = defop("bernoulli", bernoulli_forward,
                  partials=[lambda xp, ans, x, draws=None: xp.zeros_like(x)], reads=["x"],
                  text="dx = 0",
                  hint=("bernoulli(p) is a 0/1 sample: its derivative w.r.t. p is 0 "
                        "(PyTorch's choice); use a relaxation or REINFORCE for a gradient"))


# ---- the gamma family: lgamma, digamma, polygamma ---------------------------------------
# SciPy's special functions compute the forwards. SciPy is imported on first use only
# (`import tapegrad` stays NumPy-only and fast); float16 is computed in float32 as torch.
def _scipy_special():
    try:
        import scipy.special
    except ImportError as e:  # pragma: no cover - scipy is a dependency
        raise ImportError("tapegrad's gamma-family functions (lgamma, digamma, polygamma, "
                          "tapegrad.special) compute with SciPy: pip install scipy") from e
    return scipy.special


def _in_own_dtype(fn, x, *args):
    a = x.astype(np.float32) if x.dtype == np.float16 else x
    return np.asarray(fn(*args, a)).astype(x.dtype, copy=False)


def _lgamma(x):
    out = _in_own_dtype(lambda a: _scipy_special().gammaln(a), x)
    out[np.isneginf(x)] = np.inf  # log|Gamma(-inf)|: torch says +inf (SciPy -inf)
    return out


def _polygamma(x, n):
    return _in_own_dtype(lambda a: _scipy_special().polygamma(n, a), x)


polygamma = defop("polygamma", _polygamma, promote="float",
                  partials=[lambda xp, ans, x, n: within_rule(xp, polygamma, x, n=n + 1)],
                  reads=["x"], text="dx = g*polygamma(n+1, x)",
                  hint="polygamma(n, x) has poles at x = 0, -1, -2, ...: its derivative "
                       "polygamma(n+1, x) is infinite there")
digamma = defop("digamma", lambda x: _in_own_dtype(lambda a: _scipy_special().psi(a), x),
                promote="float",
                partials=[lambda xp, ans, x: within_rule(xp, polygamma, x, n=1)],
                reads=["x"], text="dx = g*polygamma(1, x)",
                hint="digamma has poles at x = 0, -1, -2, ...: its derivative "
                     "polygamma(1, x) is infinite there")
lgamma = defop("lgamma", _lgamma, promote="float",
               partials=[lambda xp, ans, x: within_rule(xp, digamma, x)],
               reads=["x"], text="dx = g*digamma(x)",
               hint="lgamma'(x) = digamma(x) is infinite at x = 0, -1, -2, ...")


# ---- the normal distribution, entropy, erfcx, xlog1py (torch.special; SciPy forwards) ----
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _scipy_fn(name):
    def forward(*arrays):
        *rest, x = arrays
        return _in_own_dtype(getattr(_scipy_special(), name), x, *rest)
    forward.__name__ = f"{name}_forward"
    return forward


def _entr(x):
    # -x*log(x); 0 at 0, -inf below (SciPy's and torch's)
    return _in_own_dtype(lambda a: _scipy_special().entr(a), x)


entr = defop("entr", _entr, promote="float",
             partials=[lambda xp, ans, x: -(1.0 + xp.log(x))], reads=["x"],
             text="dx = -g*(1 + log(x))", node="SpecialEntrBackward0",
             hint="entr'(x) = -(1 + log(x)) is +inf at x = 0 and nan for x < 0")
erfcx = defop("erfcx", _scipy_fn("erfcx"), promote="float",
              partials=[lambda xp, ans, x: 2.0 * x * ans - _2_SQRTPI], reads=["x ans"],
              text="dx = g*(2*x*erfcx(x) - 2/sqrt(pi))", node="SpecialErfcxBackward0",
              hint="erfcx'(x) = 2*x*erfcx(x) - 2/sqrt(pi) is finite for finite x; erfcx "
                   "overflows to inf below x ~ -26.6")
def _ndtr(x):
    """torch's composite (1 + erf(x/sqrt(2)))/2, each step rounded in x's dtype (float16
    too: the entry declares opmath=False; its result is torch's to the bit), not SciPy's
    ndtr (which keeps the lower tail: 7.6e-24 at x = -10, where torch gives 0)."""
    wide = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
    a = (x.astype(wide) * wide.type(math.sqrt(0.5))).astype(x.dtype)
    e = np.asarray(_scipy_special().erf(a.astype(wide))).astype(x.dtype)
    return ((x.dtype.type(1) + e) * x.dtype.type(0.5)).astype(x.dtype, copy=False)


ndtr = defop("ndtr", _ndtr, promote="float", opmath=False,  # node: torch's last op, * 0.5
             partials=[lambda xp, ans, x: xp.exp(-0.5 * (x * x)) / _SQRT_2PI], reads=["x"],
             text="dx = g*exp(-x**2/2)/sqrt(2*pi)", node="MulBackward1",
             hint="ndtr'(x) = exp(-x**2/2)/sqrt(2*pi) is in [0, 0.4]: finite for every x")
ndtri = defop("ndtri", _scipy_fn("ndtri"), promote="float",
              partials=[lambda xp, ans, x: _SQRT_2PI * xp.exp(0.5 * (ans * ans))],
              reads=["ans"], text="dx = g*sqrt(2*pi)*exp(ndtri(x)**2/2)",
              node="SpecialNdtriBackward0",
              hint="ndtri'(p) = sqrt(2*pi)*exp(ndtri(p)**2/2) is infinite at p = 0 and 1 "
                   "(nan outside [0, 1]); clamp p inside (0, 1)")
log_ndtr = defop("log_ndtr", _scipy_fn("log_ndtr"), promote="float",
                 partials=[lambda xp, ans, x: xp.exp(-(ans + 0.5 * (x * x))) / _SQRT_2PI],
                 reads=["x ans"], text="dx = g*exp(-log_ndtr(x) - x**2/2)/sqrt(2*pi)",
                 node="SpecialLogNdtrBackward0",
                 hint="log_ndtr'(x) = exp(-x**2/2)/(sqrt(2*pi)*ndtr(x)) grows like -x for "
                      "x -> -inf and overflows where ndtr(x) underflows (x < ~-38)")


def _xlog1py_forward(x, y):
    out = _scipy_special().xlog1py(x, y)  # 0 where x == 0 unless y is nan, as torch
    return np.asarray(out).astype(np.result_type(x, y), copy=False)


def _xlog1py_dx(xp, ans, x, y):
    """torch's log1p(y), 0 where x == 0 and y <= -1."""
    xr, yr = _raw(x), _raw(y)
    keep = ~((xr == 0) & (yr <= -1))
    if keep.all():
        return within_rule(xp, log1p, y)
    ly = within_rule(xp, log1p, xp.where(keep, y, xp.zeros_like(y)))
    return xp.where(keep, ly, xp.zeros_like(ly))


xlog1py = defop("xlog1py", _xlog1py_forward, promote="float", inputs=("x", "y"),
                partials=[_xlog1py_dx, lambda xp, ans, x, y: x / (y + 1.0)],
                reads=["x y", "x y"], node="SpecialXlog1PyBackward0",
                text="dx = g*log1p(y) (0 where x == 0, y <= -1) ; dy = g*x/(1+y)",
                hint="xlog1py's y-derivative x/(1+y) is infinite at y = -1")


# ---- incomplete gamma and Hurwitz zeta: torch differentiates the second argument only ----
def _not_implemented(what):
    def vjp(xp, g, ans, *inputs):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return vjp


def _igamma_dx(xp, a, x):
    # d/dx P(a, x) = x**(a-1) * exp(-x) / Gamma(a), in logs as torch's formula
    return xp.exp((a - 1.0) * xp.log(x) - x - within_rule(xp, lgamma, a))


def _incomplete_gamma(upper):
    """SciPy's gammainc (gammaincc if `upper`), with torch's values where an argument is
    nan and the other decides alone (P(nan, 0) = 0, P(nan, inf) = 1, P(inf, nan) = 0;
    Q the complements): torch checks x == 0, then a == inf, then x == inf, before
    computing."""
    def forward(a, x):
        out = np.asarray(getattr(_scipy_special(), "gammaincc" if upper else "gammainc")(a, x))
        out = out.astype(np.result_type(a, x), copy=False)
        a, x = np.broadcast_arrays(a, x)
        at_0, a_inf = (x == 0) & np.isnan(a), np.isposinf(a) & np.isnan(x)
        x_inf = np.isposinf(x) & np.isnan(a)
        if at_0.any() or a_inf.any() or x_inf.any():
            low = np.where(at_0 | a_inf, 0.0, np.where(x_inf, 1.0, np.nan))
            out = np.where(at_0 | a_inf | x_inf, 1.0 - low if upper else low, out)
        return out.astype(np.result_type(a, x), copy=False)
    forward.__name__ = "igammac_forward" if upper else "igamma_forward"
    return forward


igamma = defop("igamma", _incomplete_gamma(False), promote="float", inputs=("a", "x"),
               vjp=[_not_implemented("igamma: input"),
                    lambda xp, g, ans, a, x: g * _igamma_dx(xp, a, x)],
               reads=["", "a x"],
               text="da: not implemented (torch) ; dx = g*x**(a-1)*exp(-x)/Gamma(a)",
               hint="igamma's x-derivative x**(a-1)*exp(-x)/Gamma(a) is infinite at x = 0 for "
                    "a < 1; torch (and tapegrad) have no derivative w.r.t. a")
igammac = defop("igammac", _incomplete_gamma(True), promote="float", inputs=("a", "x"),
                vjp=[_not_implemented("igammac: input"),
                     lambda xp, g, ans, a, x: -g * _igamma_dx(xp, a, x)],
                reads=["", "a x"],
                text="da: not implemented (torch) ; dx = -g*x**(a-1)*exp(-x)/Gamma(a)",
                hint="igammac's x-derivative -x**(a-1)*exp(-x)/Gamma(a) is infinite at x = 0 "
                     "for a < 1; torch (and tapegrad) have no derivative w.r.t. a")


def _zeta(x, q):
    out = np.asarray(_scipy_special().zeta(x, q)).astype(np.result_type(x, q), copy=False)
    # torch's series gives nan at q = +inf (SciPy the limit 0); x = 1 is inf first
    return np.where(np.isposinf(q) & (x != 1), np.nan, out).astype(out.dtype, copy=False)


zeta = defop("zeta", _zeta, promote="float", inputs=("x", "q"),
             vjp=[_not_implemented("zeta"),
                  lambda xp, g, ans, x, q: g * (-x) * within_rule(xp, zeta, x + 1.0, q)],
             reads=["", "x q"], node="SpecialZetaBackward0",
             text="dx: not implemented (torch) ; dq = -g*x*zeta(x+1, q)",
             hint="zeta(x, q)'s q-derivative -x*zeta(x+1, q) is infinite at q = 0, -1, -2, ...; "
                  "torch (and tapegrad) have no derivative w.r.t. x")

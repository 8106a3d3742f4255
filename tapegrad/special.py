"""tapegrad.special: torch.special's namespace. Each name is the op its family file
declares (ops/special.py, ops/pointwise.py, ops/reductions.py) under torch.special's
name, with torch's out= keyword; the gamma, Bessel and normal-distribution families
compute with SciPy, imported on first use."""
from .ops import special as _sp
from .ops.out_arg import with_out
from .ops.pointwise import sigmoid
from .ops.public import EXPORTS as _EXPORTS
from .ops.reductions import log_softmax, softmax
from .ops.special import lgamma, mvlgamma


def _root(name):
    """tg.<name> with torch's out=: its declaration's out= form (a `with_out` wrapper,
    which keeps `__wrapped__`), or one made here where the root has none yet."""
    fn = _EXPORTS[name]
    return fn if hasattr(fn, "__wrapped__") else with_out(fn, name)


# the functions torch also holds at its root
digamma, erf, erfc, erfinv, exp2, expm1, i0, log1p, logit, logsumexp, polygamma, round, \
    sinc, xlogy = (_root(_n) for _n in (
        "digamma", "erf", "erfc", "erfinv", "exp2", "expm1", "i0", "log1p", "logit",
        "logsumexp", "polygamma", "round", "sinc", "xlogy"))

# torch.special's own names for functions tapegrad (and torch) also hold at the root
expit = with_out(sigmoid, "expit")
gammaln = with_out(lgamma, "gammaln")
psi = with_out(digamma, "psi")
gammainc = with_out(_sp.igamma, "gammainc")
gammaincc = with_out(_sp.igammac, "gammaincc")

# the functions only torch.special holds (ops/special.py), each with out= (named as there)
airy_ai = with_out(_sp.airy_ai)
bessel_j0 = with_out(_sp.bessel_j0)
bessel_j1 = with_out(_sp.bessel_j1)
bessel_y0 = with_out(_sp.bessel_y0)
bessel_y1 = with_out(_sp.bessel_y1)
chebyshev_polynomial_t = with_out(_sp.chebyshev_polynomial_t)
chebyshev_polynomial_u = with_out(_sp.chebyshev_polynomial_u)
chebyshev_polynomial_v = with_out(_sp.chebyshev_polynomial_v)
chebyshev_polynomial_w = with_out(_sp.chebyshev_polynomial_w)
entr = with_out(_sp.entr)
erfcx = with_out(_sp.erfcx)
hermite_polynomial_h = with_out(_sp.hermite_polynomial_h)
hermite_polynomial_he = with_out(_sp.hermite_polynomial_he)
i0e = with_out(_sp.i0e)
i1 = with_out(_sp.i1)
i1e = with_out(_sp.i1e)
laguerre_polynomial_l = with_out(_sp.laguerre_polynomial_l)
legendre_polynomial_p = with_out(_sp.legendre_polynomial_p)
log_ndtr = with_out(_sp.log_ndtr)
modified_bessel_i0 = with_out(_sp.modified_bessel_i0)
modified_bessel_i1 = with_out(_sp.modified_bessel_i1)
modified_bessel_k0 = with_out(_sp.modified_bessel_k0)
modified_bessel_k1 = with_out(_sp.modified_bessel_k1)
ndtr = with_out(_sp.ndtr)
ndtri = with_out(_sp.ndtri)
scaled_modified_bessel_k0 = with_out(_sp.scaled_modified_bessel_k0)
scaled_modified_bessel_k1 = with_out(_sp.scaled_modified_bessel_k1)
shifted_chebyshev_polynomial_t = with_out(_sp.shifted_chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = with_out(_sp.shifted_chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = with_out(_sp.shifted_chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = with_out(_sp.shifted_chebyshev_polynomial_w)
spherical_bessel_j0 = with_out(_sp.spherical_bessel_j0)
xlog1py = with_out(_sp.xlog1py)
zeta = with_out(_sp.zeta)


def multigammaln(input, p, *, out=None):
    """torch.special.multigammaln: the multivariate log-gamma (torch.mvlgamma)."""
    return with_out(mvlgamma, "multigammaln")(input, p, out=out)


__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx",
           "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
           "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc",
           "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

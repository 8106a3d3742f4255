"""tapegrad.special: torch.special's namespace. Each name is the op its family file
declares (ops/special.py, ops/pointwise.py, ops/reductions.py) under torch.special's
name, with torch's out= keyword; the gamma, Bessel and normal-distribution families
compute with SciPy, imported on first use."""
from .ops import special as _sp
from .ops.out_arg import with_out
from .ops.pointwise import exp2, expm1, log1p, logit, round, sigmoid, sinc, xlogy
from .ops.reductions import log_softmax, logsumexp, softmax
from .ops.special import digamma, erf, erfc, erfinv, i0, lgamma, mvlgamma, polygamma

# torch.special's own names for functions tapegrad (and torch) also hold at the root
expit = with_out(sigmoid, "expit")
gammaln = with_out(lgamma, "gammaln")
psi = with_out(digamma, "psi")
gammainc = with_out(_sp.igamma, "gammainc")
gammaincc = with_out(_sp.igammac, "gammaincc")

# the functions only torch.special holds (ops/special.py), each with out=
_ONLY_HERE = (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "entr",
    "erfcx", "hermite_polynomial_h", "hermite_polynomial_he", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0", "xlog1py", "zeta")
globals().update({_n: with_out(getattr(_sp, _n), _n) for _n in _ONLY_HERE})


def multigammaln(input, p, *, out=None):
    """torch.special.multigammaln: the multivariate log-gamma (torch.mvlgamma)."""
    return with_out(mvlgamma, "multigammaln")(input, p, out=out)


__all__ = sorted(["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc",
                  "gammaincc", "gammaln", "i0", "log1p", "log_softmax", "logit", "logsumexp",
                  "multigammaln", "polygamma", "psi", "round", "sinc", "softmax", "xlogy",
                  *_ONLY_HERE])

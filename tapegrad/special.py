"""tapegrad.special: torch.special's namespace. Each name is the op its family file
declares (ops/special.py, ops/pointwise.py, ops/reductions.py) under torch.special's
name; the gamma family computes with SciPy, imported on first use."""
from .ops.out_arg import with_out
from .ops.pointwise import exp2, expm1, log1p, logit, round, sigmoid, sinc, xlogy
from .ops.reductions import log_softmax, logsumexp, softmax
from .ops.special import digamma, erf, erfc, erfinv, lgamma, mvlgamma, polygamma

# torch.special's own names for functions tapegrad (and torch) also hold at the root
expit = with_out(sigmoid, "expit")
gammaln = with_out(lgamma, "gammaln")
psi = with_out(digamma, "psi")


def multigammaln(input, p, *, out=None):
    """torch.special.multigammaln: the multivariate log-gamma (torch.mvlgamma)."""
    return with_out(mvlgamma, "multigammaln")(input, p, out=out)


__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "polygamma", "psi",
           "round", "sinc", "softmax", "xlogy"]

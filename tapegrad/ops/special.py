"""torch.special's functions (erf, erfc, erfinv; lgamma, digamma, polygamma, mvlgamma)
and their in-place forms. Derivatives: rules/special.py."""
import math

import numpy as np

from .. import dtypes as _dt
from ..core.record import apply
from ..core.tensor_base import like
from . import _args, reductions as _reductions, shape as _shape
from ._factories import _unary
from .public import public, public_inplace
from .rules import special as SP


# ---- special functions and rounding -----------------------------------------------------
erf = public(_unary(SP.erf), name="erf", out=True)
erfc = public(_unary(SP.erfc), name="erfc", out=True)
erfinv = public(_unary(SP.erfinv), name="erfinv", out=True)
erf_ = public_inplace(erf)
erfc_ = public_inplace(erfc)
erfinv_ = public_inplace(erfinv, function=False)


# ---- the gamma family (SciPy computes the forwards: rules/special.py) --------------------
lgamma = public(_unary(SP.lgamma), name="lgamma", out=True)
digamma = public(_unary(SP.digamma), name="digamma", out=True)
lgamma_ = public_inplace(lgamma, function=False)
digamma_ = public_inplace(digamma, function=False)


@public(out=True, method=False)
def polygamma(n, input):
    """The n-th derivative of digamma (torch.polygamma(n, input); x.polygamma(n))."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return apply(SP.polygamma, _args._tensor(input, "polygamma"), n=int(n))


def polygamma_method(self, n):
    """Tensor.polygamma(n): torch's method takes n after self."""
    return polygamma(n, self)


polygamma_ = public_inplace(polygamma_method, name="polygamma_", function=False)


@public(out=True)
def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p: sum_i lgamma(x - i/2) + p(p-1)/4 log(pi)."""
    x = _args._tensor(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # torch 2.13 no longer refuses x <= (p-1)/2: a pole of lgamma gives inf there
    dt = x._data.dtype if x._data.dtype.kind == "f" else _dt.get_default_dtype().dtype
    shifts = like(x, -np.arange(p, dtype=dt) / 2)
    terms = lgamma(_shape.unsqueeze(x, -1) + shifts)
    return _reductions.sum(terms, -1) + p * (p - 1) / 4 * math.log(math.pi)


mvlgamma_ = public_inplace(mvlgamma, function=False)

"""torch.special's functions (erf, erfc, erfinv) and their in-place forms.
Derivatives: rules/special.py."""

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

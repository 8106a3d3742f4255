"""torch.special's functions (erf, erfc, erfinv) and their in-place forms.
Derivatives: rules/special.py."""

from . import _factories as _factories, pointwise as _pointwise
from .rules import special as SP


# ---- special functions and rounding -----------------------------------------------------
erf = _factories._unary(SP.erf)


erfc = _factories._unary(SP.erfc)


erfinv = _factories._unary(SP.erfinv)


erf_ = _pointwise._unary_2(erf, "erf_")


erfc_ = _pointwise._unary_2(erfc, "erfc_")


erfinv_ = _pointwise._unary_2(erfinv, "erfinv_")

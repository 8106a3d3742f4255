"""torch.special's functions (erf, erfc, erfinv) and their in-place forms.
Derivatives: rules/special.py."""

from .public import public
from . import _factories, pointwise as _pointwise
from .rules import special as SP


# ---- special functions and rounding -----------------------------------------------------
erf = public(_factories._unary(SP.erf), name="erf", out=True)
erfc = public(_factories._unary(SP.erfc), name="erfc", out=True)
erfinv = public(_factories._unary(SP.erfinv), name="erfinv", out=True)
erf_ = public(_pointwise._unary_2(erf, "erf_"), name="erf_")
erfc_ = public(_pointwise._unary_2(erfc, "erfc_"), name="erfc_")
erfinv_ = public(_pointwise._unary_2(erfinv, "erfinv_"), name="erfinv_", function=False)

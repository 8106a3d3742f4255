"""torch.special's functions (erf, erfc, erfinv; lgamma, digamma, polygamma, mvlgamma;
the Bessel family, ndtr/ndtri/log_ndtr, entr, erfcx, xlog1py, zeta, the incomplete gamma
igamma/igammac, the orthogonal polynomials) and their in-place forms. Derivatives:
rules/special.py, rules/bessel.py, rules/orthogonal_polynomials.py; the torch.special-only
names get their out= in tapegrad/special.py."""
import math

import numpy as np

from .. import dtypes as _dt
from ..core.record import apply
from ..core.tensor_base import like
from . import _args, conversion as _conversion, reductions as _reductions, shape as _shape
from ._factories import _unary
from .pointwise import _float_pair
from .public import public, public_inplace
from .rules import bessel as BS, orthogonal_polynomials as OP, special as SP


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


# ---- the Bessel family, the normal distribution, entr, erfcx (rules/bessel.py, special.py)
i0 = public(_unary(BS.i0), name="i0", out=True)
i0_ = public_inplace(i0)


def _check_half(name, x, half):
    """torch has no float16 kernel of most torch.special functions: refuse as it does."""
    if not half and x._data.dtype == np.float16:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Half'")


def _special_unary(op, half=False):
    """A torch.special function of one tensor (the namespace tapegrad/special.py adds
    out=): integers promote to the default float dtype; float16 computes in float32
    where torch has a float16 kernel (`half`), else is refused as torch does."""
    def f(input):
        x = _args._tensor(input, op.name)
        _check_half(op.name, x, half)
        return apply(op, x)
    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = f"torch.special.{op.name} (table entry `{op.name}`)."
    return f


i0e = _special_unary(BS.i0e, half=True)
i1 = _special_unary(BS.i1, half=True)
i1e = _special_unary(BS.i1e, half=True)
modified_bessel_i0 = _special_unary(BS.modified_bessel_i0)
modified_bessel_i1 = _special_unary(BS.modified_bessel_i1)
modified_bessel_k0 = _special_unary(BS.modified_bessel_k0)
modified_bessel_k1 = _special_unary(BS.modified_bessel_k1)
scaled_modified_bessel_k0 = _special_unary(BS.scaled_modified_bessel_k0)
scaled_modified_bessel_k1 = _special_unary(BS.scaled_modified_bessel_k1)
bessel_j0 = _special_unary(BS.bessel_j0)
bessel_j1 = _special_unary(BS.bessel_j1)
bessel_y0 = _special_unary(BS.bessel_y0)
bessel_y1 = _special_unary(BS.bessel_y1)
spherical_bessel_j0 = _special_unary(BS.spherical_bessel_j0)
airy_ai = _special_unary(BS.airy_ai)
entr = _special_unary(SP.entr, half=True)
erfcx = _special_unary(SP.erfcx)
ndtr = _special_unary(SP.ndtr, half=True)
ndtri = _special_unary(SP.ndtri)
log_ndtr = _special_unary(SP.log_ndtr)


# ---- functions of two arguments: xlog1py, zeta, the incomplete gamma, the polynomials ---
def _special_binary(op, doc, tensors_only=False, half=False):
    """f(input, other): tensors or numbers (at least one tensor; both tensors where torch
    has no number overload: igamma), torch's type promotion, integers computed in the
    default float dtype; float16 as `_special_unary`."""
    def f(input, other):
        if tensors_only:
            _args._tensor(input, op.name)
            _args._tensor(other, op.name, "other", 2)
            dt = _dt.as_dtype(_conversion.result_type(input, other))
            if dt.kind != "f":  # torch's kernel has floating dtypes only
                raise NotImplementedError(
                    f"\"{op.name}_cpu\" not implemented for '{_dt.torch_name(dt)}'")
        x, y = _float_pair(op.name, input, other)
        _check_half(op.name, x, half)
        return apply(op, x, y)
    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = doc
    return f


xlog1py = _special_binary(SP.xlog1py, "x * log1p(y), 0 where x == 0 (torch.special.xlog1py).",
                          half=True)
zeta = _special_binary(SP.zeta, "The Hurwitz zeta function sum_k (k + q)**-x "
                                "(torch.special.zeta(input, other)); q-derivative only.")
igamma = public(_special_binary(SP.igamma, "The regularized lower incomplete gamma function "
                                           "P(input, other) (torch.igamma); the derivative "
                                           "w.r.t. other only, as torch's.", tensors_only=True,
                                half=True),
                name="igamma", out=True)
igammac = public(_special_binary(SP.igammac, "The regularized upper incomplete gamma "
                                             "function Q(input, other) (torch.igammac); the "
                                             "derivative w.r.t. other only, as torch's.",
                                 tensors_only=True, half=True),
                 name="igammac", out=True)
igamma_ = public_inplace(igamma, function=False)
igammac_ = public_inplace(igammac, function=False)


def _polynomial(op):
    return _special_binary(op, f"torch.special.{op.name}(input, n): the polynomial of "
                               "degree int(n) at input (no derivative, as torch's).")


chebyshev_polynomial_t = _polynomial(OP.chebyshev_polynomial_t)
chebyshev_polynomial_u = _polynomial(OP.chebyshev_polynomial_u)
chebyshev_polynomial_v = _polynomial(OP.chebyshev_polynomial_v)
chebyshev_polynomial_w = _polynomial(OP.chebyshev_polynomial_w)
shifted_chebyshev_polynomial_t = _polynomial(OP.shifted_chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = _polynomial(OP.shifted_chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = _polynomial(OP.shifted_chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = _polynomial(OP.shifted_chebyshev_polynomial_w)
hermite_polynomial_h = _polynomial(OP.hermite_polynomial_h)
hermite_polynomial_he = _polynomial(OP.hermite_polynomial_he)
laguerre_polynomial_l = _polynomial(OP.laguerre_polynomial_l)
legendre_polynomial_p = _polynomial(OP.legendre_polynomial_p)

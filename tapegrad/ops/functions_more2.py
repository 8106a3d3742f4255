"""Elementwise torch functions that are formulas of existing ops: xlogy, hypot, deg2rad,
rad2deg, sinc, exp2, logit, copysign, fmax, fmin; and the ones torch gives no gradient
(heaviside, signbit).

No table entries of their own: each derivative is its parts' (where, log, sqrt, ...), so
second derivatives and forward mode come for free. Where torch's gradient differs from the
naive formula at a special point (xlogy at x = 0, sinc at 0, copysign at 0) the formula
routes that point through `where` so the gradient is torch's. PyTorch's names, arguments,
dtype rules and error messages (tests/test_methods_more2.py, tests/opdb_methods3.py).
"""
import math

import numpy as np

from .. import dtypes as _dt
from ..core.tensor_base import TensorBase, like
from . import functions as F


def _t(x, name, arg="input", pos=1):
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                    f"{type(x).__name__}")


def _float_pair(name, a, b):
    """Both operands as tensors of torch's result dtype, integers promoted to the default
    float dtype (xlogy, copysign compute in floating point)."""
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        raise TypeError(f"{name}(): expected at least one Tensor argument")
    ref = a if isinstance(a, TensorBase) else b
    dt = _dt.as_dtype(F.result_type(a, b))
    if dt.kind != "f":
        dt = _dt.as_dtype(_dt.get_default_dtype())
    return tuple((x if x._data.dtype == dt else x.to(dt)) if isinstance(x, TensorBase) else
                 like(ref, np.asarray(x, dtype=dt)) for x in (a, b))


def _zeros_like(x):
    return like(x, np.zeros((), x._data.dtype))


def xlogy(input, other):
    """x * log(y), 0 where x == 0 (unless y is nan). torch's gradients: log(y) for x (0
    where x == 0 and y <= 0), x / y for y. Where x == 0 and y <= 0 the log is taken of 1
    instead, so the product is 0 and its x-gradient log(1) = 0."""
    x, y = _float_pair("xlogy", input, other)
    bad = like(x, (x._data == 0) & (y._data <= 0))
    if bad._data.any():
        y = F.where(bad, like(x, np.ones((), x._data.dtype)), y)
    return F.mul(x, F.log(y))


def hypot(input, other):
    """sqrt(x**2 + y**2); floating tensors only, as torch's."""
    x, y = _t(input, "hypot"), _t(other, "hypot", "other", 2)
    dt = _dt.as_dtype(F.result_type(x, y))
    if dt.kind != "f":
        raise NotImplementedError(f'"hypot_cpu" not implemented for \'{_dt.torch_name(dt)}\'')
    return F.sqrt(F.add(F.mul(x, x), F.mul(y, y)))


def _scaled(name, factor):
    def f(input):
        x = _t(input, name)
        if not x._data.dtype.kind == "f":
            x = x.to(_dt.get_default_dtype())
        return F.mul(x, factor)
    f.__name__ = name
    f.__doc__ = f"torch.{name}: x * {factor!r} (integers promote to the default float dtype)."
    return f


deg2rad = _scaled("deg2rad", math.pi / 180.0)
rad2deg = _scaled("rad2deg", 180.0 / math.pi)


def _floating(name, input):
    x = _t(input, name)
    return x if x._data.dtype.kind == "f" else x.to(_dt.get_default_dtype())


def sinc(input):
    """sin(pi x) / (pi x), 1 at x = 0 (gradient 0 there, as torch's, which takes "0" as
    pi x**2 == 0 in x's dtype: a subnormal x too). The quotient is taken at a safe
    stand-in (1) there, so its unused branch has no 0/0."""
    x = _floating("sinc", input)
    with np.errstate(under="ignore"):
        at0 = like(x, x._data * x._data * np.pi == 0)
    px = F.mul(F.where(at0, like(x, np.ones((), x._data.dtype)), x), math.pi)
    return F.where(at0, like(x, np.ones((), x._data.dtype)), F.div(F.sin(px), px))


def exp2(input):
    """2 ** x = exp(x ln 2)."""
    return F.exp(F.mul(_floating("exp2", input), math.log(2.0)))


def logit(input, eps=None):
    """log(x / (1 - x)) = log(x) - log1p(-x), x clamped to [eps, 1 - eps] first when eps
    is given (the gradient is then 0 outside, as torch's)."""
    x = _floating("logit", input)
    if eps is not None:
        x = F.clamp(x, float(eps), 1.0 - float(eps))
    return F.sub(F.log(x), F.log1p(F.neg(x)))


def copysign(input, other):
    """|x| with the sign of y. Gradient for x: +-1 (0 where x == 0, as torch's), none for
    y (the sign is a step)."""
    x = _t(input, "copysign")
    x, y = _float_pair("copysign", x, other)
    shape = np.broadcast_shapes(x._data.shape, y._data.shape)
    flip = like(x, np.signbit(x._data) != np.signbit(y._data))
    val = F.where(flip, F.neg(x), x)
    at0 = like(x, np.broadcast_to(x._data == 0, shape))
    out = F.where(at0, like(x, np.copysign(np.zeros((), x._data.dtype), y._data)), val)
    if y._rg:  # torch's gradient for y is zeros, not None: connect y through a never-taken
        out = F.where(like(x, np.zeros((), bool)), y, out)  # branch of a where
    return out


def _fmaxmin(name, pick_self):
    def f(input, other):
        """NaN-ignoring maximum / minimum: the other operand where one is nan. Ties send the
        gradient to input, as torch's."""
        x, y = _t(input, name), _t(other, name, "other", 2)
        try:
            np.broadcast_shapes(x._data.shape, y._data.shape)
        except ValueError:
            F._check_broadcast(name, x, y)
            raise
        dt = _dt.as_dtype(F.result_type(x, y))
        x = x if x._data.dtype == dt else x.to(dt)
        y = y if y._data.dtype == dt else y.to(dt)
        mask = pick_self(x._data, y._data) | np.isnan(y._data)
        return F.where(like(x, mask), x, y)
    f.__name__ = name
    return f


fmax = _fmaxmin("fmax", lambda a, b: a >= b)
fmin = _fmaxmin("fmin", lambda a, b: a <= b)


def heaviside(input, values):
    """0 where x < 0, 1 where x > 0, `values` where x == 0 (no gradient, as torch's)."""
    x, v = _t(input, "heaviside"), _t(values, "heaviside", "values", 2)
    if x._data.dtype != v._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    a = x._data
    out = np.where(a == 0, v._data, (a > 0).astype(a.dtype))
    return like(x, np.asarray(out, dtype=a.dtype))


def signbit(input):
    """True where the sign bit is set (-0.0 included); no gradient."""
    x = _t(input, "signbit")
    return like(x, np.signbit(x._data))

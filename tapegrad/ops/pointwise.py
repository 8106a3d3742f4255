"""Pointwise ops (torch's "Pointwise Ops"): arithmetic, exp/log, trig and hyperbolic,
rounding, clamp, sign/abs, sigmoid/relu, lerp, addcmul/addcdiv, xlogy, hypot, bitwise and
logical ops, the fills and copies, and their in-place forms. Derivatives: rules/pointwise.py."""
import math

import numpy as np

from .. import dtypes as _dt
from ..core import tape as _tape
from ..core.record import apply
from ..core.state import anywhere, state
from ..core.tensor_base import TensorBase, like, scalar_to, to_array
from . import _args, comparison as _comparison, conversion as _conversion, promotion as P
from ._factories import _binary, _rounding, _unary, _wrapped_ints
from .inplace import _inplace, _needs_old, _other
from .out_arg import with_out
from .public import public, public_inplace
from .return_types import structseq
from .rules import pointwise as E, special as SP
from . import _opmath  # float16 composites in float32, rounded once


_add = _binary(E.add)  # without alpha: the operators use these
_sub = _binary(E.sub, P.SUB)


@public(out=True)
def add(input, other, *, alpha=1):
    return _add(input, other if alpha == 1 else other * alpha)


@public(out=True, aliases=('subtract',))
def sub(input, other, *, alpha=1):
    return _sub(input, other if alpha == 1 else other * alpha)


subtract = sub
mul = multiply = public(_binary(E.mul), name="mul", out=True, aliases=('multiply',))
# `x / y` (Tensor.__truediv__) is true_divide itself: the hot path skips div's keyword
true_divide = public(_binary(E.div, P.DIV), name="true_divide", out=True)


@public(out=True, aliases=('divide',))
def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return true_divide(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    a, b = _args._arg(input), _args._arg(other)
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        raise TypeError(f"div(): expected at least one Tensor argument, got "
                        f"{type(input).__name__} and {type(other).__name__}")
    a, b = P.operands("floor_divide", a, b)  # bool refused, integers stay integers
    bv = b._data if isinstance(b, TensorBase) else b
    if P.result_type(a, b).kind in "iu" and np.any(np.asarray(bv) == 0):
        raise RuntimeError("ZeroDivisionError")
    try:
        return apply(E.div_rounded, a, b, mode=rounding_mode)
    except OverflowError:  # a Python int out of the dtype's range: torch wraps it
        return apply(E.div_rounded, *_wrapped_ints(a, b), mode=rounding_mode)


divide = div
remainder = public(_binary(E.remainder, "remainder"), name="remainder", out=True)
_fmod = _binary(E.fmod, "fmod")


@public(out=True)
def fmod(input, other):
    """Elementwise C fmod (the sign of input); torch has no fmod(number, tensor)."""
    _args._tensor_first("fmod", input, other)
    return _fmod(input, other)


@public(out=True)
def pow(input, exponent):
    a, b = _args._arg(input), _args._arg(exponent)
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        raise TypeError(f"pow(): expected a Tensor base or exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    if isinstance(a, TensorBase) and a._data.dtype.kind in "iu" and isinstance(b, int) and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if type(b) is bool and isinstance(a, TensorBase) and a._data.dtype == np.bool_:
        return like(a, a._data | (not b))  # torch keeps bool ** bool-number bool (NumPy: int8)
    a, b = P.operands("pow", a, b)
    try:
        return apply(E.pow, a, b)
    except OverflowError:
        return apply(E.pow, *_wrapped_ints(a, b))


_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@public(out=True, aliases=('negative',))
def neg(input):
    """-input, elementwise (torch refuses bools: NumPy's TypeError becomes its error)."""
    try:
        return apply(E.neg, _args._tensor(input, "neg"))
    except TypeError:
        if input._data.dtype == np.bool_:
            raise RuntimeError(_NEG_BOOL) from None
        raise


negative = neg
exp = public(_unary(E.exp), name="exp", out=True)
log = public(_unary(E.log), name="log", out=True)
sqrt = public(_unary(E.sqrt), name="sqrt", out=True)
log2 = public(_unary(E.log2), name="log2", out=True)
log10 = public(_unary(E.log10), name="log10", out=True)
log1p = public(_unary(E.log1p), name="log1p", out=True)
expm1 = public(_unary(E.expm1), name="expm1", out=True)
rsqrt = public(_unary(E.rsqrt), name="rsqrt", out=True)
_abs = _unary(E.abs)


@public(out=True, aliases=('absolute',))
def abs(input):
    x = _args._tensor(input, "abs")
    if x._data.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return _abs(x)


absolute = abs
sign = public(_unary(E.sign), name="sign", out=True)
sin = public(_unary(E.sin), name="sin", out=True)
cos = public(_unary(E.cos), name="cos", out=True)
tanh = public(_unary(E.tanh), name="tanh", out=True)
sigmoid = public(_unary(E.sigmoid), name="sigmoid", out=True)
relu = public(_unary(E.relu), name="relu", out=True)
floor = public(_rounding(E.floor), name="floor", out=True)
ceil = public(_rounding(E.ceil), name="ceil", out=True)
trunc = fix = public(_rounding(E.trunc), name="trunc", out=True, aliases=('fix',))


@public(out=True, aliases=('clip',))
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, TensorBase) or isinstance(max, TensorBase):
        # Tensor bounds: the composite gives PyTorch's gradients (to x inside the
        # bounds, to the bound that was hit outside).
        return _clamp_tensor_bounds(_args._tensor(input), min, max)
    return apply(E.clamp, _args._tensor(input), min=_args._scalar(min), max=_args._scalar(max))


clip = clamp


def _clamp_tensor_bounds(x, lo, hi):
    """clamp with tensor bounds, torch's values (min(max(x, lo), hi): a NaN in x or a
    bound gives NaN) and gradients (x where lo <= x <= hi, lo where x < lo, hi where
    x > hi; all comparisons with NaN false). The value is each gradient's term plus a
    constant correction: 0 where one term is taken, the NaN where the value is NaN."""
    xd = x._data
    lod = None if lo is None else (lo._data if isinstance(lo, TensorBase) else np.asarray(lo))
    hid = None if hi is None else (hi._data if isinstance(hi, TensorBase) else np.asarray(hi))
    with np.errstate(invalid="ignore"):
        value = xd if lod is None else np.maximum(xd, lod)
        value = value if hid is None else np.minimum(value, hid)
        take_x = np.ones(np.shape(value), bool)
        terms = []
        if lod is not None:
            below = xd < lod
            take_x = take_x & (xd >= lod)
            terms.append((below, lo))
        if hid is not None:
            above = xd > hid
            take_x = take_x & (xd <= hid)
            if terms:  # hi < lo: the value is hi, and only hi gets the gradient (torch's)
                crossed = hid < lod
                take_x = take_x & ~crossed
                terms[0] = (terms[0][0] & ~crossed, lo)
                above = above | crossed
            terms.append((above, hi))
    zero = like(x, np.zeros((), xd.dtype))
    out = where(like(x, take_x), x, zero)
    count = take_x.astype(np.int8)
    for mask, b in terms:
        out = out + where(like(x, mask), b, zero)
        count = count + mask
    odd = (count != 1) | np.isnan(value)  # a NaN: no term, or a bound's with a NaN other
    if odd.any():  # (the wheres decided the result dtype: torch's promotion)
        dt = out._data.dtype
        with np.errstate(invalid="ignore"):
            fix = np.where(odd, value.astype(dt, copy=False) - out._data, np.zeros((), dt))
        out = out + like(x, fix.astype(dt, copy=False))
    return out


@public
def clamp_min(input, min):
    return clamp(input, min=min)


@public
def clamp_max(input, max):
    return clamp(input, max=max)


@public
def floor_divide(input, other):
    """floor(input / other), as torch.floor_divide and `//` (not differentiable)."""
    a, b = _args._arg(input), _args._arg(other)
    like_t = a if isinstance(a, TensorBase) else _args._tensor(b, "floor_divide")
    a, b = P.operands("floor_divide", a, b)
    av = a._data if isinstance(a, TensorBase) else a
    bv = b._data if isinstance(b, TensorBase) else b
    try:
        out = E.int_floor_divide(av, bv)
    except OverflowError:
        out = np.floor_divide(*_wrapped_ints(av, bv))
    return like(like_t, np.asarray(out))


@public(out=True, method=False)
def where(condition, input=None, other=None):
    if input is None and other is None:  # torch.where(cond) = nonzero(cond, as_tuple=True)
        c = _args._tensor(condition, "where")
        a = c._data if c._data.ndim else c._data.reshape(1)  # nonzero(cond, as_tuple=True)
        return tuple(like(c, i.astype(np.int64)) for i in np.nonzero(a))
    c = condition._data if isinstance(condition, TensorBase) else np.asarray(condition)
    if c.dtype != np.bool_:
        c = c.astype(bool)
    a, b = _args._arg(input), _args._arg(other)
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        # where(cond, 1.0, 0.0): the values become a tensor like the condition
        a = like(_args._tensor(condition, "where"), to_array(a))
    a, b = P.operands(P.ARITH, a, b)
    return apply(E.where, c, a, b)


logical_and = public(_comparison._compare(np.logical_and, "logical_and", promote=False,
                                          tensors_only=True), name="logical_and", out=True)
logical_or = public(_comparison._compare(np.logical_or, "logical_or", promote=False,
                                         tensors_only=True), name="logical_or", out=True)
logical_xor = public(_comparison._compare(np.logical_xor, "logical_xor", promote=False,
                                          tensors_only=True), name="logical_xor", out=True)


def _bitwise(ufunc, name):
    """bitwise_and/or/xor (`&`, `|`, `^`): integer and bool tensors, torch's promotion;
    on bool tensors they are the logical ops. Not differentiable."""
    def kernel(av, bv):
        try:
            return np.asarray(ufunc(av, bv))
        except OverflowError:
            return np.asarray(ufunc(*_wrapped_ints(av, bv)))

    kernel.__name__ = name

    def f(input, other):
        a, b = _args._arg(input), _args._arg(other)
        like_t = a if isinstance(a, TensorBase) else _args._tensor(b, name)
        a, b = P.operands(name, a, b)
        av = a._data if isinstance(a, TensorBase) else a
        bv = b._data if isinstance(b, TensorBase) else b
        try:  # (through tape.host: tg.compile's capture records the result as a step)
            return like(like_t, _tape.host(kernel, av, bv))
        except ValueError:
            raise RuntimeError(f"{name}: the shapes {np.shape(av)} and {np.shape(bv)} cannot "
                               "be broadcast together") from None
    f.__name__ = name
    return f


bitwise_and = public(_bitwise(np.bitwise_and, "bitwise_and"), name="bitwise_and")
bitwise_or = public(_bitwise(np.bitwise_or, "bitwise_or"), name="bitwise_or")
bitwise_xor = public(_bitwise(np.bitwise_xor, "bitwise_xor"), name="bitwise_xor")


@public
def bitwise_not(input):
    """~x: bitwise NOT of an integer tensor, logical NOT of a bool tensor."""
    x = _args._tensor(input, "bitwise_not")
    if x._data.dtype.kind == "f":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for "
                                  f"'{_dt.torch_name(x._data.dtype)}'")
    return _comparison.mask(x, np.invert, x._data)


@public
def logical_not(input):
    return _comparison.mask(input, np.logical_not, input._data)


# Integer and bool inputs: core/record.py computes every table op that promotes to the
# default float dtype on inputs cast to it (NumPy alone would give float16: tan(True)
# 1.5576, torch's 1.5574), so _unary is all these need.
tan = public(_unary(E.tan), name="tan", out=True)
asin = arcsin = public(_unary(E.asin), name="asin", out=True, aliases=('arcsin',))
acos = arccos = public(_unary(E.acos), name="acos", out=True, aliases=('arccos',))
atan = arctan = public(_unary(E.atan), name="atan", out=True, aliases=('arctan',))
sinh = public(_unary(E.sinh), name="sinh", out=True)
cosh = public(_unary(E.cosh), name="cosh", out=True)
asinh = arcsinh = public(_unary(E.asinh), name="asinh", out=True, aliases=('arcsinh',))
acosh = arccosh = public(_unary(E.acosh), name="acosh", out=True, aliases=('arccosh',))
atanh = arctanh = public(_unary(E.atanh), name="atanh", out=True, aliases=('arctanh',))


# both arguments must be tensors (torch: "argument 'other' (position 2) must be Tensor");
# integer operands are computed in the default float dtype, as by true division
atan2 = arctan2 = public(_binary(E.atan2, P.DIV, tensors_only=True),
                         name="atan2", out=True, aliases=('arctan2',))


@public
def lerp(input, end, weight):
    """input + weight * (end - input) (weight a number or a tensor)."""
    x = _args._tensor(input, "lerp")
    w = _opmath.widened(x, end, weight)  # float16: one kernel in float32, rounded once
    if w is not None:
        return _opmath.rounded(lerp(*w))
    return x + weight * (end - x)


@public
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    w = _opmath.widened(input, tensor1, tensor2)  # float16: in float32, rounded once
    if w is not None:
        return _opmath.rounded(addcmul(*w, value=value))
    prod = tensor1 * tensor2
    return _args._tensor(input, "addcmul") + (prod if value == 1 else prod * value)


@public
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    w = _opmath.widened(input, tensor1, tensor2)  # float16: in float32, rounded once
    if w is not None:
        return _opmath.rounded(addcdiv(*w, value=value))
    q = tensor1 / tensor2
    return _args._tensor(input, "addcdiv") + (q if value == 1 else q * value)


@public(out=True)
def round(input, *, decimals=0):
    """Half to even (torch.round); `decimals` as torch computes it. Integer tensors are
    returned as they are (a copy); the gradient is 0."""
    x = _args._tensor(input, "round")
    if x.dtype.kind in "biu":
        return like(x, _args._np(x).copy())
    return apply(SP.round, x, decimals=int(decimals))


@public(out=True)
def square(input):
    """input * input as torch.square: pow(input, 2) (PowBackward0); bool gives int64."""
    x = _args._tensor(input, "square")
    if x.dtype.kind == "b":
        x = x.to(_dt.int64)
    return pow(x, 2)


@public(out=True)
def reciprocal(input):
    """1 / input; integer and bool tensors give the default float dtype (torch)."""
    x = _args._tensor(input, "reciprocal")
    if x.dtype.kind in "biu":
        x = x.to(_dt.get_default_dtype())
    return apply(E.reciprocal, x)


# ---- nan_to_num ---------------------------------------------------------------------------
@public(out=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf (default: the dtype's max), -inf -> neginf (its min).
    The gradient is 0 at the replaced elements (they no longer depend on x)."""
    x = _args._tensor(input, "nan_to_num")
    if x.dtype.kind != "f":
        return like(x, _args._np(x).copy())
    a = _args._np(x)
    info = np.finfo(a.dtype)
    pos = info.max if posinf is None else posinf
    neg = info.min if neginf is None else neginf
    out = x
    for mask, value in ((np.isnan(a), nan), (np.isposinf(a), pos), (np.isneginf(a), neg)):
        if mask.any():
            out = apply(E.where, mask, like(x, np.asarray(value, dtype=a.dtype)), out)
    return out if out is not x else _conversion.clone(x)


def _logical_inplace(fn, name):
    def method(self, other):
        o = other if isinstance(other, TensorBase) else like(self, np.asarray(other))
        return _inplace(self, lambda x: fn(x, o), (), needs_old=False, casting="unsafe")
    method.__name__ = name
    method.__doc__ = f"In-place {fn.__name__} (1/0 in self's dtype); returns self."
    return method


logical_and_ = public(_logical_inplace(logical_and, "logical_and_"),
                      name="logical_and_", function=False)
logical_or_ = public(_logical_inplace(logical_or, "logical_or_"),
                     name="logical_or_", function=False)
logical_xor_ = public(_logical_inplace(logical_xor, "logical_xor_"),
                      name="logical_xor_", function=False)


@public(function=False)
def logical_not_(self):
    """In-place logical_not (1/0 in self's dtype); returns self."""
    return _inplace(self, logical_not, (), needs_old=False, casting="unsafe")


@public
def logaddexp(input, other):
    """log(exp(a) + exp(b)) = max(a, b) + log1p(exp(-|a - b|)), which never overflows;
    derivative exp(a) / (exp(a) + exp(b)) = sigmoid(a - b) (1/2 each at a tie: maximum's
    and abs's subgradients at 0 give exactly that)."""
    return _logaddexp("logaddexp", input, other, None)


@public
def logaddexp2(input, other):
    """log2(2**a + 2**b) = max(a, b) + log2(1 + 2**-|a - b|)."""
    return _logaddexp("logaddexp2", input, other, math.log(2.0))


def _logaddexp(name, input, other, ln2):
    a = _args._tensor(input, name)
    if not isinstance(other, TensorBase):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if a._data.dtype.kind != "f" or other._data.dtype.kind != "f":
        a, other = a.to(_dt.get_default_dtype()) if a._data.dtype.kind != "f" else a, (
            other.to(_dt.get_default_dtype()) if other._data.dtype.kind != "f" else other)
    w = _opmath.widened(a, other)  # float16: one kernel in float32, rounded once
    if w is not None:
        return _opmath.rounded(_logaddexp(name, *w, ln2))
    m = _comparison.maximum(a, other)
    d = -abs(a - other)
    out = m + (log1p(exp(d)) if ln2 is None else log1p(exp(d * ln2)) / ln2)
    # both -inf (or both +inf): torch gives that infinity, the formula inf - inf = nan
    same_inf = np.isinf(a._data) & (a._data == other._data)
    if same_inf.any():
        out = where(like(a, same_inf), m, out)
    return out


@public
def frac(input):
    """x - trunc(x) (the sign of x kept); derivative 1."""
    x = _args._tensor(input, "frac")
    if x._data.dtype.kind != "f":
        raise NotImplementedError(
            f"\"frac_cpu\" not implemented for '{_dt.torch_name(x._data.dtype)}'")
    return x - trunc(x)


@public
def frac_(self):
    return _inplace(self, frac, (), needs_old=True)


def _float_pair(name, a, b):
    """Both operands as tensors of torch's result dtype, integers promoted to the default
    float dtype (xlogy, copysign compute in floating point)."""
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        raise TypeError(f"{name}(): expected at least one Tensor argument")
    ref = a if isinstance(a, TensorBase) else b
    dt = _dt.as_dtype(_conversion.result_type(a, b))
    if dt.kind != "f":
        dt = _dt.as_dtype(_dt.get_default_dtype())
    return tuple((x if x._data.dtype == dt else x.to(dt)) if isinstance(x, TensorBase) else
                 like(ref, np.asarray(x, dtype=dt)) for x in (a, b))


def _zeros_like(x):
    return like(x, np.zeros((), x._data.dtype))


@public
def xlogy(input, other):
    """x * log(y), 0 where x == 0 (unless y is nan). torch's gradients: log(y) for x (0
    where x == 0 and y <= 0), x / y for y (nan at x = y = 0, as torch's)."""
    x, y = _float_pair("xlogy", input, other)
    return apply(E.xlogy, x, y)


@public
def hypot(input, other):
    """sqrt(x**2 + y**2); floating tensors only, as torch's."""
    x, y = _args._tensor(input, "hypot"), _args._tensor(other, "hypot", "other", 2)
    dt = _dt.as_dtype(_conversion.result_type(x, y))
    if dt.kind != "f":
        raise NotImplementedError(f'"hypot_cpu" not implemented for \'{_dt.torch_name(dt)}\'')
    x, y = (t if t._data.dtype == dt else t.to(dt) for t in (x, y))
    return apply(E.hypot, x, y)


def _scaled(name, factor):
    def f(input):
        x = _args._tensor(input, name)
        if not x._data.dtype.kind == "f":
            x = x.to(_dt.get_default_dtype())
        return mul(x, factor)
    f.__name__ = name
    f.__doc__ = f"torch.{name}: x * {factor!r} (integers promote to the default float dtype)."
    return f


deg2rad = public(_scaled("deg2rad", math.pi / 180.0), name="deg2rad")
rad2deg = public(_scaled("rad2deg", 180.0 / math.pi), name="rad2deg")


def _floating(name, input):
    x = _args._tensor(input, name)
    return x if x._data.dtype.kind == "f" else x.to(_dt.get_default_dtype())


@public
def sinc(input):
    """sin(pi x) / (pi x), 1 at x = 0 (gradient 0 there, as torch's, which takes "0" as
    pi x**2 == 0 in x's dtype: a subnormal x too). The quotient is taken at a safe
    stand-in (1) there, so its unused branch has no 0/0."""
    x = _floating("sinc", input)
    w = _opmath.widened(x)  # float16: one kernel in float32, rounded once
    if w is not None:
        return _opmath.rounded(sinc(*w))
    with np.errstate(under="ignore"):
        at0 = like(x, x._data * x._data * np.pi == 0)
    px = mul(where(at0, like(x, np.ones((), x._data.dtype)), x), math.pi)
    return where(at0, like(x, np.ones((), x._data.dtype)), div(sin(px), px))


@public
def exp2(input):
    """2 ** x = exp(x ln 2)."""
    x = _floating("exp2", input)
    w = _opmath.widened(x)  # float16: one kernel in float32, rounded once
    if w is not None:
        return _opmath.rounded(exp2(*w))
    return exp(mul(x, math.log(2.0)))


@public
def logit(input, eps=None):
    """log(x / (1 - x)) = log(x) - log1p(-x), x clamped to [eps, 1 - eps] first when eps
    is given (the gradient is then 0 outside, as torch's)."""
    x = _floating("logit", input)
    return apply(E.logit, x, eps=None if eps is None else float(eps))


@public
def copysign(input, other):
    """|x| with the sign of y. Gradient for x: +-1 (0 where x == 0, as torch's), none for
    y (the sign is a step)."""
    x = _args._tensor(input, "copysign")
    x, y = _float_pair("copysign", x, other)
    shape = np.broadcast_shapes(x._data.shape, y._data.shape)
    flip = like(x, np.signbit(x._data) != np.signbit(y._data))
    val = where(flip, neg(x), x)
    at0 = like(x, np.broadcast_to(x._data == 0, shape))
    out = where(at0, like(x, np.copysign(np.zeros((), x._data.dtype), y._data)), val)
    if y._rg:  # torch's gradient for y is zeros, not None: connect y through a never-taken
        out = where(like(x, np.zeros((), bool)), y, out)  # branch of a where
    return out


def _fmaxmin(name, pick_self):
    def f(input, other):
        """NaN-ignoring maximum / minimum: the other operand where one is nan. Ties send the
        gradient to input, as torch's."""
        x, y = _args._tensor(input, name), _args._tensor(other, name, "other", 2)
        try:
            np.broadcast_shapes(x._data.shape, y._data.shape)
        except ValueError:
            _args._check_broadcast(name, x, y)
            raise
        dt = _dt.as_dtype(_conversion.result_type(x, y))
        x = x if x._data.dtype == dt else x.to(dt)
        y = y if y._data.dtype == dt else y.to(dt)
        mask = pick_self(x._data, y._data) | np.isnan(y._data)
        return where(like(x, mask), x, y)
    f.__name__ = name
    return f


fmax = public(_fmaxmin("fmax", lambda a, b: a >= b), name="fmax")
fmin = public(_fmaxmin("fmin", lambda a, b: a <= b), name="fmin")


@public
def heaviside(input, values):
    """0 where x < 0, 1 where x > 0, `values` where x == 0 (no gradient, as torch's)."""
    x, v = _args._tensor(input, "heaviside"), _args._tensor(values, "heaviside", "values", 2)
    if x._data.dtype != v._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    a = x._data
    out = np.where(a == 0, v._data, (a > 0).astype(a.dtype))
    return like(x, np.asarray(out, dtype=a.dtype))


@public
def signbit(input):
    """True where the sign bit is set (-0.0 included); no gradient."""
    x = _args._tensor(input, "signbit")
    return _comparison.mask(x, np.signbit, x._data)


def _table_method(method, op, fname):
    """Name a generated in-place method `fname` and document it by its table entry."""
    method.__name__ = fname
    method.__doc__ = f"In-place {op.name} (table entry `{op.name}`); returns self."
    return method


# ---- arithmetic ----------------------------------------------------------------
def _binary_inplace(op, ufunc, fname, mode=P.ARITH):
    def method(self, other, *, alpha=None):
        if (alpha is None and isinstance(other, TensorBase)
                and not (anywhere.duals and state.dual is not None) and not anywhere.tapes
                and not (state.grad_enabled and (self._rg or other._rg))):
            # the update loop's `p.data -= lr * p.grad` (float, same dtype and shape,
            # nothing recorded): the general path's own no-graph branch below, one ufunc
            # call, without its closures and checks (~2 us of ~6 per parameter, measured)
            a, b = self._data, other._data
            if (a.dtype is b.dtype and a.dtype.kind == "f" and a.shape == b.shape
                    and a.flags.writeable):
                ufunc(a, b, out=a)
                self._version_counter[0] += 1
                return self
        o = _other(other)
        if alpha is not None and alpha != 1:
            o = o * alpha
        # torch's promotion decides the computation dtype and refuses a result of a
        # higher category than self's (P.inplace_other); the cast back is then safe
        o = P.inplace_other(mode, self, o)
        arr = o._data if isinstance(o, TensorBase) else o
        return _inplace(
            self, lambda x: apply(op, *P.operands(mode, x, o)), (o,), needs_old=_needs_old(op),
            fast=lambda out: ufunc(out, arr, out=out, casting="unsafe"), casting="unsafe")
    return _table_method(method, op, fname)


add_ = public(_binary_inplace(E.add, np.add, "add_"), name="add_", function=False)
sub_ = public(_binary_inplace(E.sub, np.subtract, "sub_", P.SUB), name="sub_", function=False)
_mul_ = _binary_inplace(E.mul, np.multiply, "mul_")
_div_ = _binary_inplace(E.div, np.true_divide, "div_", P.DIV)
remainder_ = public(_binary_inplace(E.remainder, E.int_remainder, "remainder_", "remainder"),
                    name="remainder_", function=False)
fmod_ = public(_binary_inplace(E.fmod, E.int_fmod, "fmod_", "fmod"), name="fmod_", function=False)


def _nondiff_inplace(f, ufunc, fname):
    """The in-place form of a function without a gradient (floor_divide, bitwise_and...),
    with torch's promotion and output-dtype check (its mode is the function's name)."""
    def method(self, other):
        o = P.inplace_other(f.__name__, self, _other(other))
        arr = o._data if isinstance(o, TensorBase) else o
        return _inplace(self, lambda x: f(x, o), (o,), needs_old=False,
                        fast=lambda out: ufunc(out, arr, out=out, casting="unsafe"),
                        casting="unsafe")
    method.__name__ = fname
    method.__doc__ = f"In-place {f.__name__}; returns self."
    return method


floor_divide_ = public(_nondiff_inplace(floor_divide, E.int_floor_divide, "floor_divide_"),
                       name="floor_divide_", function=False)
bitwise_and_ = public(_nondiff_inplace(bitwise_and, np.bitwise_and, "bitwise_and_"),
                      name="bitwise_and_", function=False)
bitwise_or_ = public(_nondiff_inplace(bitwise_or, np.bitwise_or, "bitwise_or_"),
                     name="bitwise_or_", function=False)
bitwise_xor_ = public(_nondiff_inplace(bitwise_xor, np.bitwise_xor, "bitwise_xor_"),
                      name="bitwise_xor_", function=False)


@public(function=False)
def mul_(self, other):
    return _mul_(self, other)


@public(function=False)
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div_(self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    o = _other(other)
    if state.grad_enabled and (self._rg or (isinstance(o, TensorBase) and o._rg)):
        raise NotImplementedError("div_ with rounding_mode on tensors that require grad")
    arr = o._data if isinstance(o, TensorBase) else o
    rnd = np.trunc if rounding_mode == "trunc" else np.floor

    def fast(out):
        if out.dtype.kind in "iu" and rounding_mode == "floor":
            E.int_floor_divide(out, arr, out=out, casting="same_kind")
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                np.copyto(out, rnd(np.true_divide(out, arr)), casting="unsafe")

    return _inplace(self, None, (o,), fast=fast)


@public(function=False)
def pow_(self, exponent):
    o = P.inplace_other("pow", self, _other(exponent))
    return _inplace(self, lambda x: pow(x, o), (o,), needs_old=True, casting="unsafe")


def _unary_inplace(op, fname):
    def method(self):
        return _inplace(self, lambda x: apply(op, x), (), needs_old=_needs_old(op))
    return _table_method(method, op, fname)


exp_ = public(_unary_inplace(E.exp, "exp_"), name="exp_")
log_ = public(_unary_inplace(E.log, "log_"), name="log_")
sqrt_ = public(_unary_inplace(E.sqrt, "sqrt_"), name="sqrt_")
rsqrt_ = public(_unary_inplace(E.rsqrt, "rsqrt_"), name="rsqrt_")
abs_ = public(_unary_inplace(E.abs, "abs_"), name="abs_")
sin_ = public(_unary_inplace(E.sin, "sin_"), name="sin_")
cos_ = public(_unary_inplace(E.cos, "cos_"), name="cos_")
tanh_ = public(_unary_inplace(E.tanh, "tanh_"), name="tanh_")
sigmoid_ = public(_unary_inplace(E.sigmoid, "sigmoid_"), name="sigmoid_")
relu_ = public(_unary_inplace(E.relu, "relu_"), name="relu_")
_neg_ = _unary_inplace(E.neg, "neg_")


@public(aliases=('negative_',))
def neg_(self):
    if self._data.dtype == np.bool_:
        raise RuntimeError(_NEG_BOOL)
    return _neg_(self)
sign_ = public(_unary_inplace(E.sign, "sign_"), name="sign_", function=False)


@public(aliases=('clip_',))
def clamp_(self, min=None, max=None):
    bounds = tuple(b for b in (min, max) if isinstance(b, TensorBase))
    return _inplace(self, lambda x: clamp(x, min, max), bounds, needs_old=True)


@public
def clamp_min_(self, min):
    return clamp_(self, min=min)


@public
def clamp_max_(self, max):
    return clamp_(self, max=max)


@public(function=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    """self += value * tensor1 * tensor2 (used by optimizers)."""
    if self._data.dtype == np.float16:  # torch's kernel: in float32, rounded once
        t1, t2 = _other(tensor1), _other(tensor2)
        return _inplace(self, lambda x: addcmul(x, t1, t2, value=value), (t1, t2),
                        needs_old=False)
    return add_(self, tensor1 * tensor2 if value == 1 else tensor1 * tensor2 * value)


@public(function=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """self += value * tensor1 / tensor2 (used by optimizers)."""
    if self._data.dtype == np.float16:  # torch's kernel: in float32, rounded once
        t1, t2 = _other(tensor1), _other(tensor2)
        return _inplace(self, lambda x: addcdiv(x, t1, t2, value=value), (t1, t2),
                        needs_old=False)
    return add_(self, tensor1 / tensor2 if value == 1 else tensor1 / tensor2 * value)


@public(function=False)
def lerp_(self, end, weight):
    """self += weight * (end - self)."""
    e, w = _other(end), _other(weight)
    if self._data.dtype == np.float16:  # torch's kernel: in float32, rounded once
        return _inplace(self, lambda x: lerp(x, e, w), (e, w), needs_old=False)
    return _inplace(self, lambda x: x + w * (e - x), (e, w), needs_old=False)


# ---- fills and copies: the old value gets a zero gradient ------------------------
def _replace(self, value, others, casting="same_kind"):
    """self[...] = value (broadcast): `where(True, value, old)` through the table, so the
    value receives the gradient and the old history receives zeros."""
    mask = np.ones(self._data.shape, dtype=bool)

    def compute(x):
        v = value
        if isinstance(v, TensorBase) and v._data.dtype != x._data.dtype and x._data.dtype.kind == "f" \
                and v._data.dtype.kind == "f":
            v = v.to(x._data.dtype)
        return apply(E.where, mask, v, x)

    return _inplace(self, compute, others, needs_old=False, casting=casting)


@public
def fill_(self, value):
    if isinstance(value, TensorBase):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return _replace(self, value, (value,))
    v = value.item() if isinstance(value, np.generic) else value
    v = scalar_to(v, self._data.dtype)      # truncated, wrapped or refused as torch
    # (the all-true mask through the tape's const: a tg.compile replay remakes it)
    return _inplace(self, lambda x: apply(E.where, _tape.const(np.ones(x._data.shape, bool)),
                                          v, x),
                    (), needs_old=False, casting="unsafe",
                    fast=lambda out: out.fill(v))


@public
def zero_(self):
    return fill_(self, 0)


@public(function=False)
def copy_(self, src, non_blocking=False):
    """Copy src's values (broadcast, cast to self's dtype) into self."""
    s = src if isinstance(src, TensorBase) else like(self, to_array(src))
    try:
        np.broadcast_to(s._data, self._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(self._data.shape)}) must match the "
                           f"size of tensor b ({list(s._data.shape)}) for copy_ (src must be "
                           "broadcastable to self)") from None

    def fast(out):
        np.copyto(out, s._data, casting="unsafe")

    if s._rg and s._data.dtype.kind == "f" and self._data.dtype.kind == "f" \
            and s._data.dtype != self._data.dtype:
        s_cast = s.to(self._data.dtype)  # a differentiable cast: the gradient flows to src
        return _replace(self, s_cast, (s,), casting="unsafe")
    return _inplace(self, lambda x: apply(
        E.where, np.ones(x._data.shape, bool), s, x), (s,), needs_old=False,
        casting="unsafe", fast=fast)


square_ = public_inplace(square)
reciprocal_ = public_inplace(reciprocal)
floor_ = public_inplace(floor)
ceil_ = public_inplace(ceil)
trunc_ = public_inplace(trunc, aliases=('fix_',))
log1p_ = public_inplace(log1p)
expm1_ = public_inplace(expm1)
tan_ = public_inplace(tan)
asin_ = arcsin_ = public_inplace(asin, aliases=('arcsin_',))
acos_ = arccos_ = public_inplace(acos, aliases=('arccos_',))
atan_ = arctan_ = public_inplace(atan, aliases=('arctan_',))
sinh_ = public_inplace(sinh)
cosh_ = public_inplace(cosh)
asinh_ = arcsinh_ = public_inplace(asinh, aliases=('arcsinh_',))
acosh_ = arccosh_ = public_inplace(acosh, aliases=('arccosh_',))
atanh_ = arctanh_ = public_inplace(atanh, aliases=('arctanh_',))


atan2_ = public_inplace(atan2, function=False, aliases=('arctan2_',))


log2_ = public_inplace(log2)
log10_ = public_inplace(log10)


def inplace_of(self, fn):
    """self = fn(self) in place, for the activations' `inplace=True` (leaky_relu,
    hardtanh, elu, silu: their out-of-place form keeps the derivative, `_inplace` the
    bookkeeping)."""
    return _inplace(self, fn, (), needs_old=True)


round_ = public_inplace(round)


nan_to_num_ = public_inplace(nan_to_num)


deg2rad_ = public_inplace(deg2rad)
rad2deg_ = public_inplace(rad2deg)
sinc_ = public_inplace(sinc)
exp2_ = public_inplace(exp2)
logit_ = public_inplace(logit)
xlogy_ = public_inplace(xlogy)
hypot_ = public_inplace(hypot, function=False)
copysign_ = public_inplace(copysign, function=False)
heaviside_ = public_inplace(heaviside, function=False)


# ---- integer arithmetic: gcd, lcm, the bit shifts (no gradient) --------------------------
def _integers_only(f, name, kernel, tensors=True):
    """f refusing bool operands as torch does (its integer kernels have no bool form);
    tensors: both arguments must be tensors (torch's gcd/lcm have no Scalar form)."""
    def g(input, other):
        if tensors:
            _args._tensor(input, name)
            _args._tensor(other, name, "other", 2)
        rt = P.result_type(_args._arg(input), _args._arg(other))
        if rt.kind in "bf":  # (the operands' fast path skips promotion's own check)
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dt.torch_name(rt)}'")
        return f(input, other)
    g.__doc__ = f"Elementwise {name} of integer tensors (torch's promotion; no gradient)."
    return g


def _gcd(a, b):
    """torch's gcd: Euclid's algorithm on |a|, |b| in the operands' dtype with C's
    remainder, so the dtype's minimum (whose |.| wraps to itself) gives torch's negative
    answer (gcd(-128, 6) in int8 is -2), where NumPy's gcd gives 2."""
    dt = np.result_type(a, b)
    a = np.abs(np.asarray(a).astype(dt, copy=False))
    b = np.abs(np.asarray(b).astype(dt, copy=False))
    a, b = np.broadcast_arrays(a, b)
    if dt.kind == "u" or ((a >= 0) & (b >= 0)).all():
        return np.gcd(a, b)  # no wrapped minimum: NumPy's is the same, and faster
    a, b = a.copy(), b.copy()
    while True:
        live = a != 0
        if not live.any():
            return b
        c = a.copy()
        a[live] = np.fmod(b[live], a[live])  # C's %: the sign of the dividend
        b[live] = c[live]


gcd = public(_integers_only(_bitwise(_gcd, "gcd"), "gcd", "gcd_cpu"), name="gcd", out=True)


def _lcm(a, b):
    """|a / gcd(a, b) * b| as torch's kernel computes it: in C's int for the narrower
    dtypes (int8, int16, uint8: the product's |.| then wraps into the dtype), in the
    dtype itself otherwise; 0 where gcd is 0."""
    g = _gcd(a, b)
    dt = np.result_type(g)
    wide = np.int32 if dt.itemsize < 4 else dt
    with np.errstate(all="ignore"):
        q = np.floor_divide(np.asarray(a).astype(wide), np.where(g == 0, 1, g).astype(wide))
        return np.abs(np.where(g == 0, 0, q * np.asarray(b).astype(wide))).astype(dt)


lcm = public(_integers_only(_bitwise(_lcm, "lcm"), "lcm", "lcm_cpu"), name="lcm", out=True)


def _shift(left):
    """a << b / a >> b with torch's rules for a shift outside [0, bits): 0 for a left
    shift, the sign (0 or -1) for a right shift (NumPy leaves them to the CPU)."""
    def f(a, b):
        dt = np.result_type(a, b)  # a Python int stays weak (NumPy 2), as torch's scalar
        a, b = np.asarray(a), np.asarray(b)
        bits = dt.itemsize * 8
        a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
        out_of_range = (b < 0) | (b >= bits) if dt.kind == "i" else b >= bits
        safe = np.where(out_of_range, 0, b).astype(dt, copy=False)
        with np.errstate(all="ignore"):
            if left:
                return np.where(out_of_range, np.zeros((), dt), np.left_shift(a, safe))
            sign = np.right_shift(a, np.asarray(bits - 1, dt))
            return np.where(out_of_range, sign, np.right_shift(a, safe))
    return f


bitwise_left_shift = public(_integers_only(_bitwise(_shift(True), "bitwise_left_shift"),
                                           "bitwise_left_shift", "lshift_cpu", False),
                            name="bitwise_left_shift", out=True)
bitwise_right_shift = public(_integers_only(_bitwise(_shift(False), "bitwise_right_shift"),
                                            "bitwise_right_shift", "rshift_cpu", False),
                             name="bitwise_right_shift", out=True)


def _integer_inplace(f, fname):
    """The in-place form of an integer-only function (torch's promotion and cast check;
    the result computed out of place, then stored)."""
    def method(self, other):
        o = P.inplace_other(f.__name__, self, _other(other))
        return _inplace(self, lambda x: f(x, o), (), needs_old=False, casting="unsafe")
    method.__name__ = fname
    method.__doc__ = f"In-place {f.__name__}; returns self."
    return method


gcd_ = public(_integer_inplace(gcd, "gcd_"), name="gcd_")
lcm_ = public(_integer_inplace(lcm, "lcm_"), name="lcm_")
bitwise_left_shift_ = public(_integer_inplace(bitwise_left_shift, "bitwise_left_shift_"),
                             name="bitwise_left_shift_", function=False)
bitwise_right_shift_ = public(_integer_inplace(bitwise_right_shift, "bitwise_right_shift_"),
                              name="bitwise_right_shift_", function=False)


# ---- floating point: float_power, ldexp, frexp, nextafter --------------------------------
@public
def float_power(input, exponent, *, out=None):
    """pow computed in float64 (both operands cast; the gradient flows through the casts).
    An `out` must be float64, as torch's."""
    if out is not None:
        if not isinstance(out, TensorBase) or out._data.dtype != np.float64:
            dt = _dt.torch_name(out._data.dtype) if isinstance(out, TensorBase) else "?"
            raise RuntimeError(f"the output given to float_power has dtype {dt} but the "
                               "operation's result requires dtype Double")
        return _float_power_out(input, exponent, out=out)
    a, b = _args._arg(input), _args._arg(exponent)
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        raise TypeError("float_power(): expected a Tensor base or exponent")
    a = a.to(_dt.float64) if isinstance(a, TensorBase) else float(a)
    b = b.to(_dt.float64) if isinstance(b, TensorBase) else float(b)
    if not isinstance(a, TensorBase):
        a = like(b, np.asarray(a, np.float64))
    return pow(a, b)


_float_power_out = with_out(float_power, "float_power")


@public(function=False)
def float_power_(self, exponent):
    if self._data.dtype != np.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dt.torch_name(self._data.dtype)} but the operation's result "
                           "requires dtype Double")
    o = _other(exponent)
    return _inplace(self, lambda x: float_power(x, o), (o,) if isinstance(o, TensorBase)
                    else (), needs_old=True)


@public(out=True)
def ldexp(input, other):
    """input * 2**other, in torch's result dtype of the two (the default float dtype for
    integers)."""
    x = _args._tensor(input, "ldexp")
    o = _args._tensor(other, "ldexp", "other", 2)
    dt = _dt.as_dtype(_conversion.result_type(x, o))
    if dt.kind != "f":
        dt = _dt.as_dtype(_dt.get_default_dtype())
    x = x if x._data.dtype == dt else x.to(dt)
    o = o if o._data.dtype == dt else o.to(dt)
    return mul(x, pow(2.0, o))


@public
def ldexp_(self, other):
    o = _other(other)
    return _inplace(self, lambda x: ldexp(x, o), (o,) if isinstance(o, TensorBase) else (),
                    needs_old=True)


frexp_result = structseq("frexp", ["mantissa", "exponent"])


@public
def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent, |mantissa| in [0.5, 1);
    exponent int32. The mantissa's gradient is g / 2**exponent (torch's). An `out`
    pair's exponent must be an integer tensor, as torch's."""
    if out is not None:
        if (isinstance(out, (tuple, list)) and len(out) == 2 and isinstance(out[1], TensorBase)
                and out[1]._data.dtype.kind not in "iu"):
            ctype = {"float16": "c10::Half", "float32": "float", "float64": "double",
                     "bool": "bool"}.get(out[1]._data.dtype.name, out[1]._data.dtype.name)
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                               f"{ctype}")
        return _frexp_out(input, out=out)
    x = _args._tensor(input, "frexp")
    if x._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(x._data)
    with np.errstate(over="ignore"):  # 2**-e overflows for subnormal x: m is taken there
        scale = np.ldexp(np.ones((), x._data.dtype), -e).astype(x._data.dtype, copy=False)
    # x * 2**-e is exact (a power of two) and carries torch's gradient g / 2**e
    mantissa = where(like(x, np.isfinite(scale)), mul(x, like(x, np.where(
        np.isfinite(scale), scale, np.ones((), x._data.dtype)))), like(x, m))
    return frexp_result(mantissa, like(x, e.astype(np.int32, copy=False)))


_frexp_out = with_out(frexp, "frexp")


@public(out=True)
def nextafter(input, other):
    """The next floating-point value after input towards other (gradient: g for input,
    zeros for other, as torch's)."""
    x = _args._tensor(input, "nextafter")
    o = _args._tensor(other, "nextafter", "other", 2)
    dt = _dt.as_dtype(_conversion.result_type(x, o))
    if dt.kind != "f":
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for "
                                  f"'{_dt.torch_name(dt)}'")
    x = x if x._data.dtype == dt else x.to(dt)
    o = o if o._data.dtype == dt else o.to(dt)
    return apply(E.nextafter, x, o)


nextafter_ = public_inplace(nextafter, function=False)


# ---- rsub, positive, sgn ------------------------------------------------------------------
@public(method=False)
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return sub(other, _args._tensor(input, "rsub"), alpha=alpha)


@public
def positive(input):
    """input itself (torch.positive: refused for bool)."""
    x = _args._tensor(input, "positive")
    if x._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


@public(out=True)
def sgn(input):
    """sign(input) for real tensors (torch.sgn: x / |x| for complex ones)."""
    x = _args._tensor(input, "sgn")
    if x._data.dtype == np.bool_:
        return like(x, x._data.copy())
    return sign(x)


sgn_ = public_inplace(sgn, function=False)


@public(method=False)
def fill(input, value):
    """A new tensor like input holding value (torch.fill, the out-of-place fill_): fill_
    on a copy, so the gradient goes to a tensor value and input gets zeros."""
    return fill_(_conversion.clone(_args._tensor(input, "fill")), value)

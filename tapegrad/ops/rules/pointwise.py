"""Elementwise ops: each declares its forward and its partial derivatives.

The VJP `g * d` and the JVP `sum_i t_i * d_i` are derived from the partials by the
registry; broadcasting is undone by the engine. `ans` is the op's output, which
exp, sqrt, tanh and sigmoid reuse instead of recomputing from the input.
"""
import math
import warnings

import numpy as np

from ... import dtypes as _dt
from ...core.tensor_base import TensorBase
from ..registry import defop


def _raw(a):
    """The array of a tensor (rules under create_graph get tensors): for masks, which
    are constants in both modes."""
    return a._data if isinstance(a, TensorBase) else a


# ---- binary arithmetic ---------------------------------------------------------
add = defop("add", np.add, promote="arith", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: 1.0,
    lambda xp, ans, x, y: 1.0,
], vjp=[lambda xp, g, ans, x, y: g, lambda xp, g, ans, x, y: g],  # skip the `* 1.0`
    reads=["", ""], edges_only=True,
    text="dx = g ; dy = g",
    hint=("d(x + y) = 1 for both inputs, never infinite: a non-finite result here means the "
          "incoming gradient already was"))

def _sub_node(node):
    return "SubBackward0" if isinstance(node.inputs[0], TensorBase) else "RsubBackward1"


sub = defop("sub", np.subtract, promote="sub", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: 1.0,
    lambda xp, ans, x, y: -1.0,
], vjp=[lambda xp, g, ans, x, y: g, lambda xp, g, ans, x, y: -g],
    reads=["", ""], edges_only=True,
    text="dx = g ; dy = -g",
    hint=("d(x - y) = 1 and -1, never infinite: a non-finite result here means the incoming "
          "gradient already was"),
    node=_sub_node)

mul = defop("mul", np.multiply, promote="arith", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: y,
    lambda xp, ans, x, y: x,
], vjp=[lambda xp, g, ans, x, y: g * y,  # g * partial, without the partial's call
         lambda xp, g, ans, x, y: g * x],
    reads=["y", "x"],
    text="dx = g*y ; dy = g*x",
    hint=("d(x*y) = y and x: finite wherever x and y are finite (a large g times a large input"
          " can still overflow)"))


def _reciprocal(y):
    # NOTE: y may be a Python number: 1/0.0 must give inf (as PyTorch), not raise.
    if isinstance(y, (int, float)) and y == 0:
        return math.copysign(math.inf, y)
    return 1.0 / y


def _div_dy(xp, ans, x, y):
    # NOTE: -(x / y) / y, not -ans / y (the same bits): the rule does not read the
    # output, so `h = a / b; h += 1` is allowed, as in PyTorch (see autograd/saved.py).
    return -(x / y) / y


def _div_node(node):
    # torch computes number / tensor as number * reciprocal(tensor)
    return "DivBackward0" if isinstance(node.inputs[0], TensorBase) else "MulBackward0"


div = defop("div", np.true_divide, promote="div", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: _reciprocal(y),
    _div_dy,
], vjp=[
    # dx = g / y, torch's rule (g * (1/y) differs in the last bit): the partial 1/y stays
    # for forward mode
    lambda xp, g, ans, x, y: g / y,
    lambda xp, g, ans, x, y: g * _div_dy(xp, ans, x, y),
], reads=["y", "x y"],
    text="dx = g/y ; dy = -g*ans/y",
    hint=("d(x/y) = 1/y and -x/y**2 are infinite where y = 0; keep the denominator away from 0"
          " (y + eps)"),
    node=_div_node)


def _pow_dx(xp, ans, x, y):
    # NOTE: d/dx x**y = y * x**(y-1); PyTorch defines it as 0 where y == 0 (even at
    # x == 0, where the formula gives 0 * inf).
    d = y * x ** (y - 1)
    if isinstance(y, (int, float)):
        return d if y != 0 else xp.zeros_like(x)
    return xp.where(y == 0, 0.0, d)


def _pow_dy(xp, ans, x, y):
    # NOTE: d/dy x**y = x**y * log(x); at x == 0 with y >= 0 PyTorch defines it as 0.
    # The mask is a constant (plain arrays, also under create_graph); a Python-number
    # base is logged by NumPy (no float32 round trip through a 0-d tensor).
    xd, yd = getattr(x, "_data", x), getattr(y, "_data", y)
    with np.errstate(divide="ignore", invalid="ignore"):
        mask = (np.asarray(xd) == 0) & (np.asarray(yd) >= 0)
        logx = float(np.log(x)) if isinstance(x, (int, float)) else xp.log(x)  # float: weak
        return xp.where(mask, 0.0, ans * logx)


def _pow_forward(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return np.power(x, y)
        except ValueError:
            if np.result_type(x, y).kind in "iu":  # (Python scalars count as weak)
                return _int_pow_negative(np.asarray(x), np.asarray(y)).astype(
                    np.result_type(x, y))
            raise RuntimeError(f"pow: the shapes {np.shape(x)} and {np.shape(y)} cannot be "
                               "broadcast together") from None


def _int_pow_negative(x, y):
    """Integer x ** y with some y < 0 (NumPy refuses): torch's integer pow gives 1 for
    x = 1, +-1 by parity for x = -1 and 0 otherwise (the truncated 1 / x**|y|)."""
    neg = y < 0
    pos = np.power(x, np.where(neg, 0, y))
    special = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0))
    return np.where(neg, special, pos)


def _pow_node(node):
    base, exp = node.inputs[0], node.inputs[1]
    if not isinstance(base, TensorBase):
        return "PowBackward2"
    return "PowBackward1" if isinstance(exp, TensorBase) else "PowBackward0"


pow = defop("pow", _pow_forward, promote="pow",
            inputs=("x", "y"), partials=[_pow_dx, _pow_dy], reads=["x y", "ans x y"],
            text="dx = g*y*x**(y-1) ; dy = g*ans*log(x)",
            hint=("d(x**p)/dx = p*x**(p-1) is infinite at x = 0 when p < 1; d/dp = x**p*log(x)"
                  " needs x > 0"),
            node=_pow_node)

neg = defop("neg", np.negative, partials=[lambda xp, ans, x: -1.0], linear=True,
            vjp=[lambda xp, g, ans, x: -g],
            text="dx = -g",
            hint=("d(-x) = -1, never infinite: a non-finite result here means the incoming "
                  "gradient already was"))


def _share(lose):
    """d max(x, y) / d x (and the like): 0 where this input lost, 1/2 at ties (PyTorch
    sends half the gradient to each input), else 1. A NaN compares False both ways, so
    where x or y is NaN both inputs get the whole gradient, as PyTorch's
    `where(x == y, g / 2, g).masked_fill_(x < y, 0)`."""
    def d(xp, ans, x, y):
        return xp.where(lose(x, y), 0.0, xp.where(x == y, 0.5, 1.0))
    return d


def _split_vjp(lose):
    """Gradient of max/min-like ops: 0 where this input lost, half at ties, else all of g."""
    def vjp(xp, g, ans, x, y):
        return xp.where(lose(x, y), 0.0, xp.where(x == y, g * 0.5, g))
    return vjp


_gt, _lt = (lambda a, b: a > b), (lambda a, b: a < b)
maximum = defop("maximum", np.maximum, promote="arith", inputs=("x", "y"),
                partials=[_share(_lt), _share(_gt)],
                vjp=[_split_vjp(_lt), _split_vjp(_gt)], reads=["x y", "x y"],
                text="dx = g where x>y (half at ties) ; dy likewise",
                hint=("maximum's derivative is 0, 1/2 or 1, never infinite: a non-finite "
                      "result here means the incoming gradient already was"))
minimum = defop("minimum", np.minimum, promote="arith", inputs=("x", "y"),
                partials=[_share(_gt), _share(_lt)],
                vjp=[_split_vjp(_gt), _split_vjp(_lt)], reads=["x y", "x y"],
                text="dx = g where x<y (half at ties) ; dy likewise",
                hint=("minimum's derivative is 0, 1/2 or 1, never infinite: a non-finite "
                      "result here means the incoming gradient already was"))

# ---- unary ---------------------------------------------------------------------


# NaN and inf propagate silently, as in PyTorch: NumPy's floating-point RuntimeWarnings
# ("divide by zero encountered in log") raised from tapegrad's own frames are ignored.
# A warnings filter costs nothing until a warning happens; `np.errstate` around every
# exp/log/sqrt would cost ~2 us per call, more than the op itself on small arrays.
warnings.filterwarnings("ignore", message=r".*encountered in", category=RuntimeWarning,
                        module=r"tapegrad\.")

exp = defop("exp", np.exp, promote="float", partials=[lambda xp, ans, x: ans], reads=["ans"],
            text="dx = g*ans",
            hint=("exp'(x) = exp(x) overflows to inf for large x (x > 88 in float32); subtract"
                  " the max first (logsumexp / log_softmax)"))
log = defop("log", np.log, promote="float", partials=[lambda xp, ans, x: 1.0 / x], reads=["x"],
            text="dx = g/x",
            hint="log'(x) = 1/x is infinite at x = 0; clamp the input: log(x.clamp(min=eps))")
def int_zero_checked(ufunc):
    """`ufunc` (floor_divide, remainder, fmod) raising torch's RuntimeError
    "ZeroDivisionError" for an integer division by zero, where NumPy gives 0."""
    def checked(x, y, *args, **kwargs):
        yk = y.dtype.kind if isinstance(y, np.ndarray) else np.asarray(y).dtype.kind
        if yk in "iu" and np.asarray(x).dtype.kind in "iu" and not np.all(y):
            raise RuntimeError("ZeroDivisionError")
        return ufunc(x, y, *args, **kwargs)
    checked.__name__ = checked.__qualname__ = ufunc.__name__
    return checked


int_floor_divide = int_zero_checked(np.floor_divide)
int_remainder = int_zero_checked(np.remainder)
int_fmod = int_zero_checked(np.fmod)
# remainder (Python's %: the sign of the divisor) and fmod (C's: the sign of the dividend):
# x - y * floor(x / y) and x - y * trunc(x / y); the quotient is piecewise constant.
remainder = defop("remainder", int_remainder, promote="remainder", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: 1.0,
    lambda xp, ans, x, y: -np.floor(_raw(x) / _raw(y)),
], reads=["", "x y"], text="dx = g ; dy = -g*floor(x/y)",
    hint=("remainder's derivative is 1 (x) and -floor(x/y) (y): finite for y != 0; "
          "at y = 0 the quotient is infinite"))
fmod = defop("fmod", int_fmod, promote="fmod", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: 1.0,
    lambda xp, ans, x, y: -np.trunc(_raw(x) / _raw(y)),
], reads=["", "x y"], text="dx = g ; dy = -g*trunc(x/y)",
    hint=("fmod's derivative is 1 (x) and -trunc(x/y) (y): finite for y != 0; at y = 0 "
          "the quotient is infinite"))


def _div_rounded(x, y, mode):
    """torch.div(x, y, rounding_mode=): "floor" is Python's // (NumPy's floor_divide uses
    the same divmod-corrected quotient as torch's div_floor); "trunc" rounds x / y toward
    0 (integers: C's division, exact for all of int64, never through a float)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "floor":
            return np.floor_divide(x, y)
        q = np.true_divide(x, y)
        if q.dtype.kind != "f" or np.result_type(x, y).kind == "f":
            return np.trunc(q)
        f = np.floor_divide(x, y)  # integers: floor, plus one where the signs differ
        return f + ((np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0)))


def _zero(xp, g, ans, x, y, mode):
    return xp.zeros_like(g)


div_rounded = defop("div_rounded", _div_rounded, promote=False, inputs=("x", "y"),
                    vjp=[_zero, _zero], jvp=lambda xp, tangents, ans, x, y, mode: xp.zeros_like(ans),
                    reads=["", ""], text="dx = 0 ; dy = 0",
                    hint="a rounded quotient is piecewise constant: its derivative is 0",
                    node="DivBackward2")


_LN2, _LN10 = math.log(2.0), math.log(10.0)
log2 = defop("log2", np.log2, promote="float",
             partials=[lambda xp, ans, x: 1.0 / (x * _LN2)], reads=["x"],
             text="dx = g/(x*ln 2)",
             hint="log2'(x) = 1/(x ln 2) is infinite at x = 0; clamp the input away from 0")
log10 = defop("log10", np.log10, promote="float", partials=[lambda xp, ans, x: 1.0 / (x * _LN10)],
              reads=["x"], text="dx = g/(x*ln 10)",
              hint="log10'(x) = 1/(x ln 10) is infinite at x = 0; clamp the input away from 0")
log1p = defop("log1p", np.log1p, promote="float",
              partials=[lambda xp, ans, x: 1.0 / (1.0 + x)], reads=["x"],
              text="dx = g/(1+x)",
              hint="log1p'(x) = 1/(1+x) is infinite at x = -1 (nan below)",
              node="Log1PBackward0")
expm1 = defop("expm1", np.expm1, promote="float",
              partials=[lambda xp, ans, x: ans + 1.0], reads=["ans"],
              text="dx = g*(ans+1)",
              hint="expm1'(x) = exp(x) overflows to inf for large x (x > 88 in float32)")


def _step(name, fn):
    """floor / ceil / trunc: piecewise constant, so the gradient is 0 (as PyTorch)."""
    return defop(name, fn, partials=[lambda xp, ans, x: xp.zeros_like(x)], reads=["x"],
                 text="dx = 0",
                 hint=f"{name} is piecewise constant: its derivative is 0 everywhere "
                      "(PyTorch's choice at the jumps too)")


floor = _step("floor", np.floor)
ceil = _step("ceil", np.ceil)
trunc = _step("trunc", np.trunc)
# NOTE: sqrt'(0) = 1/(2*0) = inf; that inf times a zero upstream gives nan (worked example 5).
sqrt = defop("sqrt", np.sqrt, promote="float",
             partials=[lambda xp, ans, x: 0.5 / ans], reads=["ans"],
             text="dx = g*0.5/ans",
             hint=("sqrt'(x) = 1/(2*sqrt(x)) is infinite at x = 0 (nan for x < 0); a common "
                   "fix is sqrt(x + eps)"))
# torch's reciprocal has its own kernel and rule (-g * ans**2, not div's -(1/x)/x), and
# torch computes `s / x` as x.reciprocal() * s (Tensor.__rdiv__): the same two roundings here
reciprocal = defop("reciprocal", np.reciprocal,
                   partials=[lambda xp, ans, x: -(ans * ans)], reads=["ans"],
                   text="dx = -g*ans**2",
                   hint=("reciprocal'(x) = -1/x**2 is infinite at x = 0; keep the input away "
                         "from 0 (x + eps)"))
rsqrt = defop("rsqrt", lambda x: 1.0 / np.sqrt(x), promote="float",
              partials=[lambda xp, ans, x: -0.5 * ans * ans * ans], reads=["ans"],
              text="dx = -0.5*g*ans**3",
              hint=("rsqrt'(x) = -1/(2*x**1.5) is infinite at x = 0; add an eps: rsqrt(x + "
                    "eps)"))
def _sign(x):
    # NOTE: PyTorch's sign(nan) is 0 (NumPy's is nan): comparisons with nan are False.
    if x.dtype == np.bool_:
        return x.copy()
    return ((x > 0).astype(x.dtype) - (x < 0)).astype(x.dtype, copy=False)


# NOTE: abs'(0) is taken as 0 (sign(0)), as PyTorch does; abs'(nan) is 0 too. sign(x)
# is a constant (its derivative is 0), so a raw array serves under create_graph too.
abs = defop("abs", np.abs, partials=[lambda xp, ans, x: _sign(_raw(x))], reads=["x"],
            text="dx = g*sign(x)",
            hint=("abs'(x) = sign(x) is -1, 0 (taken at x = 0) or 1, never infinite: a "
                  "non-finite result here means the incoming gradient already was"))
sign = defop("sign", _sign, partials=[lambda xp, ans, x: xp.zeros_like(x)], reads=["x"],
             text="dx = 0",
             hint=("sign'(x) = 0 everywhere (also at the jump x = 0): the rule gives nan only "
                   "as 0 * an infinite incoming gradient"))
sin = defop("sin", np.sin, promote="float", partials=[lambda xp, ans, x: xp.cos(x)], reads=["x"],
            text="dx = g*cos(x)",
            hint="sin'(x) = cos(x) is in [-1, 1]: finite for finite x (cos(inf) is nan)")
cos = defop("cos", np.cos, promote="float", partials=[lambda xp, ans, x: -xp.sin(x)], reads=["x"],
            text="dx = -g*sin(x)",
            hint="cos'(x) = -sin(x) is in [-1, 1]: finite for finite x (sin(inf) is nan)")
# tanh' and sigmoid' are computed from the saved OUTPUT, not the input.
tanh = defop("tanh", np.tanh, promote="float",
             partials=[lambda xp, ans, x: 1.0 - ans * ans], reads=["ans"],
             text="dx = g*(1-ans**2)",
             hint=("tanh'(x) = 1 - tanh(x)**2 is in [0, 1] for every x but nan: a non-finite "
                   "result here comes from a non-finite incoming gradient or a nan input"))


def _sigmoid(x):
    if x.dtype.kind in "biu":
        # torch computes integers and bools in the default float dtype (without this cast
        # the result would be cast back to the integer dtype; -abs(bool) raises)
        x = x.astype(_dt.get_default_dtype())
    # Stable for large |x|: never exponentiates a large positive number.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


sigmoid = defop("sigmoid", _sigmoid, partials=[lambda xp, ans, x: ans * (1.0 - ans)], reads=["ans"],
                text="dx = g*ans*(1-ans)",
                hint=("sigmoid'(x) = s*(1-s) is in [0, 1/4] for every x but nan: a non-finite "
                      "result here comes from a non-finite incoming gradient or a nan input"))
# NOTE: the gradient is blocked where ans <= 0 and passes elsewhere, a nan input included
# (PyTorch's threshold_backward: where(ans <= 0, 0, g)). ans = max(x, 0) is 0 or > 0 or
# nan, so "not ans <= 0" is `ans != 0`: one comparison. With NumPy the select is a
# product with that mask (np.where is several times slower for float32); the two differ
# only where an inf/nan gradient meets a blocked entry (0 * inf = nan), so then the rule
# selects. Whether the product has such an entry: its sum of squares (one BLAS dot, faster
# than isfinite(out).all()) is finite unless it has one, or unless huge finite values
# overflow it, where the select gives the same values anyway.


def _relu_vjp(xp, g, ans, x):
    passes = _raw(ans) != 0  # a constant mask, also under create_graph
    out = g * passes
    flat = _raw(out).reshape(-1)
    if not np.isfinite(flat @ flat):
        out = xp.where(passes, g, 0.0)
    return out


# NOTE: relu'(0) is taken as 0: the gradient passes only where the input was > 0.
relu = defop("relu", lambda x: np.maximum(x, 0).astype(x.dtype, copy=False),
             partials=[lambda xp, ans, x: ~(ans <= 0)], vjp=[_relu_vjp], reads=["ans"],
             text="dx = g where x>0 else 0",
             hint=("relu'(x) is 0 or 1 (0 taken at x = 0), never infinite: a non-finite result"
                   " here means the incoming gradient already was"))


def _clamp(x, min=None, max=None):
    if min is not None and max is not None and min > max:
        return np.full_like(x, max)  # PyTorch: min > max makes everything max
    return np.clip(x, min, max)


def _clamp_passes(x, min, max):
    # Gradient passes where min <= x <= max (ends included), as in PyTorch.
    if min is not None and max is not None:
        return (x >= min) & (x <= max)
    return (x >= min) if min is not None else (x <= max)


clamp = defop("clamp", _clamp, partials=[
    lambda xp, ans, x, min=None, max=None: _clamp_passes(x, min, max)
], vjp=[
    lambda xp, g, ans, x, min=None, max=None: xp.where(_clamp_passes(x, min, max), g, 0.0)
], reads=["x"],
    text="dx = g where min<=x<=max else 0",
    hint=("clamp's derivative is 0 or 1 (1 at the bounds), never infinite: a non-finite result"
          " here means the incoming gradient already was"),
    node="ClampBackward1")

def _where_jvp(xp, t, ans, c, x, y):
    return xp.where(c, t[1] if t[1] is not None else 0.0, t[2] if t[2] is not None else 0.0)


where = defop("where", np.where, inputs=("condition", "x", "y"), jvp=_where_jvp, vjp=[
    None,
    lambda xp, g, ans, c, x, y: xp.where(c, g, 0.0),
    lambda xp, g, ans, c, x, y: xp.where(c, 0.0, g),
], reads=["", "condition", "condition"],
    text="dx = g where cond ; dy = g where not cond",
    hint=("where passes g or 0, never infinite itself; but the branch not taken still gets "
          "gradient 0, and an op there whose derivative is infinite turns it into 0 * inf = "
          "nan: make its input safe first, where(cond, f(where(cond, x, 1.0)), y)"))


# ---- trigonometric and hyperbolic functions beyond sin, cos and tanh -------------
# Each derivative is written with the operations the differentiable namespace has (xp:
# sqrt, arithmetic), so grad of grad works; tan' reads the output (1 + tan(x)**2), the
# others read the input. At the edges of a domain the derivative is infinite as in torch
# (asin'(1) = inf, acosh'(1) = inf) and outside it the forward is nan.
tan = defop("tan", np.tan, promote="float",
            partials=[lambda xp, ans, x: 1.0 + ans * ans], reads=["ans"],
            text="dx = g*(1+ans**2)",
            hint="tan'(x) = 1 + tan(x)**2 is infinite at odd multiples of pi/2")
asin = defop("asin", np.arcsin, promote="float",
             partials=[lambda xp, ans, x: 1.0 / xp.sqrt(1.0 - x * x)],
             reads=["x"], text="dx = g/sqrt(1-x**2)",
             hint="asin'(x) = 1/sqrt(1 - x**2) is infinite at x = +-1 (nan outside [-1, 1])")
acos = defop("acos", np.arccos, promote="float",
             partials=[lambda xp, ans, x: -1.0 / xp.sqrt(1.0 - x * x)],
             reads=["x"], text="dx = -g/sqrt(1-x**2)",
             hint="acos'(x) = -1/sqrt(1 - x**2) is infinite at x = +-1 (nan outside [-1, 1])")
atan = defop("atan", np.arctan, promote="float", partials=[lambda xp, ans, x: 1.0 / (1.0 + x * x)],
             reads=["x"], text="dx = g/(1+x**2)",
             hint="atan'(x) = 1/(1 + x**2) is in (0, 1]: finite for every x")
# torch.atan2(input, other) is the angle of the point (other, input): input is y.
def _atan2_recip(xp, y, x):
    """1/(x**2 + y**2), 0 where that is infinite (the origin): torch's atan2_backward
    masks it, so both gradients are 0 at x = y = 0 instead of 0/0."""
    with np.errstate(divide="ignore"):
        r = 1.0 / (x * x + y * y)
    return xp.where(r == np.inf, xp.zeros_like(r), r)


atan2 = defop("atan2", np.arctan2, promote="div", inputs=("y", "x"), partials=[
    lambda xp, ans, y, x: x * _atan2_recip(xp, y, x),
    lambda xp, ans, y, x: -y * _atan2_recip(xp, y, x),
], reads=["y x", "y x"], text="dy = g*x/(x**2+y**2) ; dx = -g*y/(x**2+y**2) (0 at the origin)",
    hint="atan2's derivatives are large near the origin x = y = 0, and 0 (torch's) at it")
def _hypot_forward(x, y):
    return np.hypot(x, y)  # C's hypot: no overflow of x**2 (3e19, 4e19 in float32: 5e19)


hypot = defop("hypot", _hypot_forward, promote="arith", inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: x / ans,
    lambda xp, ans, x, y: y / ans,
], reads=["x ans", "y ans"], text="dx = g*x/ans ; dy = g*y/ans",
    hint="hypot's derivatives x/ans, y/ans are 0/0 (nan) at x = y = 0, as torch's")


def _xlogy_forward(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    # 0 where x == 0 unless y is nan (xlogy(0, inf) = 0, xlogy(0, 0) = 0)
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), out.dtype), out)


def _xlogy_dx(xp, ans, x, y):
    """torch's log(y) masked to 0 where x == 0 and y <= 0 (xlogy(0, inf) has dx inf)."""
    xr, yr = _raw(x), _raw(y)
    keep = ~((xr == 0) & (yr <= 0))
    if keep.all():
        return xp.log(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        ly = xp.log(xp.where(keep, y, xp.ones_like(y)))  # log(1) = 0: no -inf to mask
    return xp.where(keep, ly, xp.zeros_like(ly))


xlogy = defop("xlogy", _xlogy_forward, promote="float", inputs=("x", "y"), partials=[
    _xlogy_dx,
    lambda xp, ans, x, y: x / y,
], reads=["x y", "x y"], text="dx = g*log(y) (0 where x == 0, y <= 0) ; dy = g*x/y",
    hint="xlogy's y-derivative x/y is infinite at y = 0 (0/0, nan, where x = 0 too, as torch's)")


def _logit_forward(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1.0 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


def _logit_partial(xp, ans, x, eps=None):
    """torch's logit_backward: 1/(x(1-x)); outside [eps, 1-eps] 0 (eps given) or nan
    outside [0, 1] (no eps)."""
    xr = _raw(x)
    with np.errstate(divide="ignore"):
        d = 1.0 / (x * (1 - x))
    if eps is None:
        out = (xr < 0) | (xr > 1)
        return d if not out.any() else xp.where(out, d * np.nan, d)
    out = (xr < eps) | (xr > 1.0 - eps)
    return d if not out.any() else xp.where(out, xp.zeros_like(d), d)


# opmath=False: torch's float16 logit rounds x / (1 - x) to float16 before the log (its
# kernel computes in scalar_t), which NumPy's float16 arithmetic does step by step too
logit = defop("logit", _logit_forward, promote="float", partials=[_logit_partial], opmath=False,
              reads=["x"], text="dx = g/(x*(1-x)) (0 outside [eps, 1-eps]; nan outside [0, 1])",
              hint="logit'(x) = 1/(x(1-x)) is infinite at x = 0 and 1; pass eps to clamp")


# sinh' = cosh and cosh' = sinh, from exp (the namespace has exp, not sinh/cosh)
sinh = defop("sinh", np.sinh, promote="float",
             partials=[lambda xp, ans, x: 0.5 * (xp.exp(x) + xp.exp(-x))],
             reads=["x"], text="dx = g*cosh(x)",
             hint="sinh'(x) = cosh(x) overflows to inf for |x| > ~89 (float32)")
cosh = defop("cosh", np.cosh, promote="float",
             partials=[lambda xp, ans, x: 0.5 * (xp.exp(x) - xp.exp(-x))],
             reads=["x"], text="dx = g*sinh(x)",
             hint="cosh'(x) = sinh(x) overflows to inf for |x| > ~89 (float32)")
asinh = defop("asinh", np.arcsinh, promote="float",
              partials=[lambda xp, ans, x: 1.0 / xp.sqrt(x * x + 1.0)],
              reads=["x"], text="dx = g/sqrt(x**2+1)",
              hint="asinh'(x) = 1/sqrt(x**2 + 1) is in (0, 1]: finite for every x")
acosh = defop("acosh", np.arccosh, promote="float",
              partials=[lambda xp, ans, x: 1.0 / xp.sqrt(x * x - 1.0)],
              reads=["x"], text="dx = g/sqrt(x**2-1)",
              hint="acosh'(x) = 1/sqrt(x**2 - 1) is infinite at x = 1 (nan below 1)")
atanh = defop("atanh", np.arctanh, promote="float",
              partials=[lambda xp, ans, x: 1.0 / (1.0 - x * x)],
              reads=["x"], text="dx = g/(1-x**2)",
              hint="atanh'(x) = 1/(1 - x**2) is infinite at x = +-1 (nan outside)")


# nextafter: a step of one unit in the last place: torch's gradient passes g to x and
# zeros to `other` (computed in the operands' own dtype: opmath would step in float32)
nextafter = defop("nextafter", np.nextafter, promote=False, opmath=False, inputs=("x", "y"),
                  partials=[lambda xp, ans, x, y: 1.0, lambda xp, ans, x, y: 0.0],
                  vjp=[lambda xp, g, ans, x, y: g, lambda xp, g, ans, x, y: g * 0.0],
                  reads=["", ""], edges_only=True,
                  text="dx = g ; dy = 0",
                  hint="d nextafter(x, y) = 1 for x, 0 for y: finite whenever g is")

"""Elementwise ops: each declares its forward and its partial derivatives.

The VJP `g * d` and the JVP `sum_i t_i * d_i` are derived from the partials by the
registry; broadcasting is undone by the engine. `ans` is the op's output, which
exp, sqrt, tanh and sigmoid reuse instead of recomputing from the input.
"""
import math
import warnings

import numpy as np

from ..core.tensor_base import TensorBase
from .registry import defop


def _raw(a):
    """The array of a tensor (rules under create_graph get tensors): for masks, which
    are constants in both modes."""
    return a.data if isinstance(a, TensorBase) else a


# ---- binary arithmetic ---------------------------------------------------------
add = defop("add", np.add, inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: 1.0,
    lambda xp, ans, x, y: 1.0,
], reads=["", ""])
add.vjps = (lambda xp, g, ans, x, y: g, lambda xp, g, ans, x, y: g)  # skip the `* 1.0`

sub = defop("sub", np.subtract, inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: 1.0,
    lambda xp, ans, x, y: -1.0,
], reads=["", ""])
sub.vjps = (lambda xp, g, ans, x, y: g, lambda xp, g, ans, x, y: -g)

mul = defop("mul", np.multiply, inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: y,
    lambda xp, ans, x, y: x,
], reads=["y", "x"])


def _reciprocal(y):
    # NOTE: y may be a Python number: 1/0.0 must give inf (as PyTorch), not raise.
    if isinstance(y, (int, float)) and y == 0:
        return math.copysign(math.inf, y)
    return 1.0 / y


div = defop("div", np.true_divide, inputs=("x", "y"), partials=[
    lambda xp, ans, x, y: _reciprocal(y),
    # NOTE: -(x / y) / y, not -ans / y (the same bits): the rule does not read the
    # output, so `h = a / b; h += 1` is allowed, as in PyTorch (see autograd/saved.py).
    lambda xp, ans, x, y: -(x / y) / y,
], reads=["y", "x y"])


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
    xd, yd = getattr(x, "data", x), getattr(y, "data", y)
    with np.errstate(divide="ignore", invalid="ignore"):
        mask = (np.asarray(xd) == 0) & (np.asarray(yd) >= 0)
        logx = float(np.log(x)) if isinstance(x, (int, float)) else xp.log(x)  # float: weak
        return xp.where(mask, 0.0, ans * logx)


def _pow_forward(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return np.power(x, y)
        except ValueError:
            raise RuntimeError(f"pow: the shapes {np.shape(x)} and {np.shape(y)} cannot be "
                               "broadcast together") from None


pow = defop("pow", _pow_forward, inputs=("x", "y"), partials=[_pow_dx, _pow_dy], reads=["x y", "ans x y"])

neg = defop("neg", np.negative, partials=[lambda xp, ans, x: -1.0], linear=True)
neg.vjps = (lambda xp, g, ans, x: -g,)


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
maximum = defop("maximum", np.maximum, inputs=("x", "y"),
                partials=[_share(_lt), _share(_gt)],
                vjp=[_split_vjp(_lt), _split_vjp(_gt)], reads=["x y", "x y"])
minimum = defop("minimum", np.minimum, inputs=("x", "y"),
                partials=[_share(_gt), _share(_lt)],
                vjp=[_split_vjp(_gt), _split_vjp(_lt)], reads=["x y", "x y"])

# ---- unary ---------------------------------------------------------------------


# NaN and inf propagate silently, as in PyTorch: NumPy's floating-point RuntimeWarnings
# ("divide by zero encountered in log") raised from tapegrad's own frames are ignored.
# A warnings filter costs nothing until a warning happens; `np.errstate` around every
# exp/log/sqrt would cost ~2 us per call, more than the op itself on small arrays.
warnings.filterwarnings("ignore", message=r".*encountered in", category=RuntimeWarning,
                        module=r"tapegrad\.")

exp = defop("exp", np.exp, partials=[lambda xp, ans, x: ans], reads=["ans"])
log = defop("log", np.log, partials=[lambda xp, ans, x: 1.0 / x], reads=["x"])
# NOTE: sqrt'(0) = 1/(2*0) = inf; that inf times a zero upstream gives nan (worked example 5).
sqrt = defop("sqrt", np.sqrt, partials=[lambda xp, ans, x: 0.5 / ans], reads=["ans"])
rsqrt = defop("rsqrt", lambda x: 1.0 / np.sqrt(x),
              partials=[lambda xp, ans, x: -0.5 * ans * ans * ans], reads=["ans"])
def _sign(x):
    # NOTE: PyTorch's sign(nan) is 0 (NumPy's is nan): comparisons with nan are False.
    if x.dtype == np.bool_:
        return x.copy()
    return ((x > 0).astype(x.dtype) - (x < 0)).astype(x.dtype, copy=False)


# NOTE: abs'(0) is taken as 0 (sign(0)), as PyTorch does; abs'(nan) is 0 too. sign(x)
# is a constant (its derivative is 0), so a raw array serves under create_graph too.
abs = defop("abs", np.abs, partials=[lambda xp, ans, x: _sign(_raw(x))], reads=["x"])
sign = defop("sign", _sign, partials=[lambda xp, ans, x: xp.zeros_like(x)], reads=["x"])
sin = defop("sin", np.sin, partials=[lambda xp, ans, x: xp.cos(x)], reads=["x"])
cos = defop("cos", np.cos, partials=[lambda xp, ans, x: -xp.sin(x)], reads=["x"])
# tanh' and sigmoid' are computed from the saved OUTPUT, not the input.
tanh = defop("tanh", np.tanh, partials=[lambda xp, ans, x: 1.0 - ans * ans], reads=["ans"])


def _sigmoid(x):
    # Stable for large |x|: never exponentiates a large positive number.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


sigmoid = defop("sigmoid", _sigmoid, partials=[lambda xp, ans, x: ans * (1.0 - ans)], reads=["ans"])
# NOTE: relu'(0) is taken as 0: the gradient passes only where the input was > 0.
relu = defop("relu", lambda x: np.maximum(x, 0).astype(x.dtype, copy=False),
             partials=[lambda xp, ans, x: ~(ans <= 0)], reads=["ans"])
# NOTE: written as "blocked where ans <= 0" so that a nan input passes its gradient (as
# PyTorch's threshold_backward does). With NumPy, a product with the mask (np.where is
# several times slower for float32); a product differs from a select only where an
# inf/nan gradient meets a blocked entry (0 * inf = nan), so that rare case selects.


def _relu_vjp(xp, g, ans, x):
    blocked = _raw(ans) <= 0  # a constant mask, also under create_graph
    out = g * ~blocked
    if not np.isfinite(_raw(out)).all():
        out = xp.where(blocked, 0.0, g)
    return out


relu.vjps = (_relu_vjp,)


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
], reads=["x"])

where = defop("where", np.where, inputs=("condition", "x", "y"), vjp=[
    None,
    lambda xp, g, ans, c, x, y: xp.where(c, g, 0.0),
    lambda xp, g, ans, c, x, y: xp.where(c, 0.0, g),
], reads=["", "condition", "condition"])
where.jvp = lambda xp, t, ans, c, x, y: xp.where(
    c, t[1] if t[1] is not None else 0.0, t[2] if t[2] is not None else 0.0)

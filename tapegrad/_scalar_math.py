"""IEEE-safe scalar math for `tapegrad.value`: Python raises where NumPy and PyTorch give
inf or nan (1/0, 0**-1, log(0), sqrt(-1), exp(1000), (-8)**(1/3)); these return what
PyTorch returns. Also the local derivatives of `**` with their PyTorch conventions.
"""
import math

__all__ = ["div", "pow", "pow_dx", "pow_dy", "exp", "log", "sqrt", "sign", "sigmoid", "relu",
           "sin", "cos"]


def _numpy(fn, *args):
    import numpy as np   # only on the rare path where Python raises
    with np.errstate(all="ignore"):
        return float(getattr(np, fn)(*(np.float64(a) for a in args)))


def div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return _numpy("true_divide", a, b)


def pow(a, b):
    # NOTE: a negative base with a non-integer exponent gives nan (as PyTorch), not the
    # complex number Python would return; 0 ** negative gives inf.
    try:
        r = a ** b
    except (ZeroDivisionError, OverflowError):
        return _numpy("power", a, b)
    return math.nan if type(r) is complex else float(r)


def pow_dx(x, y):
    # NOTE: d/dx x**y = y * x**(y-1), defined as 0 where y == 0 (even at x == 0), as PyTorch.
    return 0.0 if y == 0 else y * pow(x, y - 1)


def pow_dy(ans, x, y):
    # NOTE: d/dy x**y = x**y * log(x), defined as 0 at x == 0 with y >= 0, as PyTorch.
    return 0.0 if (x == 0 and y >= 0) else ans * log(x)


def exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log(x):
    if x > 0 or x != x:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def sqrt(x):
    return math.sqrt(x) if x >= 0 or x != x else math.nan


def sign(x):
    # NOTE: sign(0) = 0 (so abs'(0) = 0, as PyTorch), nan stays nan: NumPy's sign
    return 1.0 if x > 0 else -1.0 if x < 0 else x


def sigmoid(x):
    # Stable for large |x|: never exponentiates a large positive number.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def relu(x):
    # NOTE: nan stays nan (as np.maximum and torch.relu); micrograd returns nan too.
    return x if (x > 0 or x != x) else 0.0


def sin(x):
    return math.sin(x) if not math.isinf(x) else math.nan


def cos(x):
    return math.cos(x) if not math.isinf(x) else math.nan

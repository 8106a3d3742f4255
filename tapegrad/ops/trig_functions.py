"""torch's trigonometric and hyperbolic functions beyond sin, cos and tanh: tan, asin,
acos, atan, atan2, sinh, cosh, asinh, acosh, atanh, with NumPy-style aliases (arcsin,
arctan2, ...), as torch has them. Integer and bool inputs give the default float dtype,
as torch's (the table entries are in ops/trig.py).
"""
from .. import dtypes as _dt
from . import functions as F
from . import promotion as P
from . import trig as T


def _unary(op):
    """F._unary(op), computing integer and bool inputs in the default float dtype: NumPy
    would compute bool, int8 and uint8 in float16 (tan(True) 1.5576, torch's 1.5574)."""
    f = F._unary(op)

    def g(input):
        x = F._tensor(input, op.name)
        if x._data.dtype.kind in "biu":
            x = x.to(_dt.get_default_dtype())
        return f(x)
    g.__name__, g.__doc__ = f.__name__, f.__doc__
    return g


tan = _unary(T.tan)
asin = arcsin = _unary(T.asin)
acos = arccos = _unary(T.acos)
atan = arctan = _unary(T.atan)
sinh = _unary(T.sinh)
cosh = _unary(T.cosh)
asinh = arcsinh = _unary(T.asinh)
acosh = arccosh = _unary(T.acosh)
atanh = arctanh = _unary(T.atanh)
# both arguments must be tensors (torch: "argument 'other' (position 2) must be Tensor");
# integer operands are computed in the default float dtype, as by true division
atan2 = arctan2 = F._binary(T.atan2, P.DIV, tensors_only=True)

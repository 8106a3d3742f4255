"""torch's trigonometric and hyperbolic functions beyond sin, cos and tanh: tan, asin,
acos, atan, atan2, sinh, cosh, asinh, acosh, atanh, with NumPy-style aliases (arcsin,
arctan2, ...), as torch has them. Integer and bool inputs give the default float dtype,
as torch's (the table entries are in ops/rules/pointwise.py).
"""
from . import functions as F
from . import promotion as P
from .rules import pointwise as T

# Integer and bool inputs: core/record.py computes every table op that promotes to the
# default float dtype on inputs cast to it (NumPy alone would give float16: tan(True)
# 1.5576, torch's 1.5574), so F._unary is all these need.
_unary = F._unary

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

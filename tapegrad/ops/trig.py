"""Table entries of the trigonometric and hyperbolic functions beyond sin, cos and tanh
(elementwise.py): tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh.

Each derivative is written with the operations the differentiable namespace has (xp:
sqrt, arithmetic), so grad of grad works; tan' reads the output (1 + tan(x)**2), the
others read the input. At the edges of a domain the derivative is infinite as in torch
(asin'(1) = inf, acosh'(1) = inf) and outside it the forward is nan.
"""
import numpy as np

from .registry import defop

tan = defop("tan", np.tan, partials=[lambda xp, ans, x: 1.0 + ans * ans], reads=["ans"],
            text="dx = g*(1+ans**2)",
            hint="tan'(x) = 1 + tan(x)**2 is infinite at odd multiples of pi/2")
asin = defop("asin", np.arcsin, partials=[lambda xp, ans, x: 1.0 / xp.sqrt(1.0 - x * x)],
             reads=["x"], text="dx = g/sqrt(1-x**2)",
             hint="asin'(x) = 1/sqrt(1 - x**2) is infinite at x = +-1 (nan outside [-1, 1])")
acos = defop("acos", np.arccos, partials=[lambda xp, ans, x: -1.0 / xp.sqrt(1.0 - x * x)],
             reads=["x"], text="dx = -g/sqrt(1-x**2)",
             hint="acos'(x) = -1/sqrt(1 - x**2) is infinite at x = +-1 (nan outside [-1, 1])")
atan = defop("atan", np.arctan, partials=[lambda xp, ans, x: 1.0 / (1.0 + x * x)],
             reads=["x"], text="dx = g/(1+x**2)",
             hint="atan'(x) = 1/(1 + x**2) is in (0, 1]: finite for every x")
# torch.atan2(input, other) is the angle of the point (other, input): input is y.
atan2 = defop("atan2", np.arctan2, inputs=("y", "x"), partials=[
    lambda xp, ans, y, x: x / (x * x + y * y),
    lambda xp, ans, y, x: -y / (x * x + y * y),
], reads=["y x", "y x"], text="dy = g*x/(x**2+y**2) ; dx = -g*y/(x**2+y**2)",
    hint="atan2's derivatives are infinite (nan) at the origin x = y = 0")
# sinh' = cosh and cosh' = sinh, from exp (the namespace has exp, not sinh/cosh)
sinh = defop("sinh", np.sinh, partials=[lambda xp, ans, x: 0.5 * (xp.exp(x) + xp.exp(-x))],
             reads=["x"], text="dx = g*cosh(x)",
             hint="sinh'(x) = cosh(x) overflows to inf for |x| > ~89 (float32)")
cosh = defop("cosh", np.cosh, partials=[lambda xp, ans, x: 0.5 * (xp.exp(x) - xp.exp(-x))],
             reads=["x"], text="dx = g*sinh(x)",
             hint="cosh'(x) = sinh(x) overflows to inf for |x| > ~89 (float32)")
asinh = defop("asinh", np.arcsinh, partials=[lambda xp, ans, x: 1.0 / xp.sqrt(x * x + 1.0)],
              reads=["x"], text="dx = g/sqrt(x**2+1)",
              hint="asinh'(x) = 1/sqrt(x**2 + 1) is in (0, 1]: finite for every x")
acosh = defop("acosh", np.arccosh, partials=[lambda xp, ans, x: 1.0 / xp.sqrt(x * x - 1.0)],
              reads=["x"], text="dx = g/sqrt(x**2-1)",
              hint="acosh'(x) = 1/sqrt(x**2 - 1) is infinite at x = 1 (nan below 1)")
atanh = defop("atanh", np.arctanh, partials=[lambda xp, ans, x: 1.0 / (1.0 - x * x)],
              reads=["x"], text="dx = g/(1-x**2)",
              hint="atanh'(x) = 1/(1 - x**2) is infinite at x = +-1 (nan outside)")

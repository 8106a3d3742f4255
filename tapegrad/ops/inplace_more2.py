"""The in-place forms of functions_more2.py and functions_more3.py (xlogy_, hypot_,
deg2rad_, rad2deg_, sinc_, exp2_, logit_, heaviside_, copysign_, addmv_, addr_,
baddbmm_, addbmm_, renorm_): the out-of-place result written into self by
`inplace._inplace`, which records the change (version counter, rebasing a view's base)
and refuses a dtype self cannot hold, as torch does (xlogy_ on an integer tensor).
"""
from ..core.tensor_base import TensorBase
from . import functions_more2 as M2
from . import functions_more3 as M3
from .inplace import _inplace


def _others(*xs):
    return tuple(x for x in xs if isinstance(x, TensorBase))


def _unary(fn):
    def f(self, *args, **kw):
        return _inplace(self, lambda x: fn(x, *args, **kw), ())
    f.__name__ = fn.__name__ + "_"
    f.__doc__ = f"{fn.__name__} in place."
    return f


def _binary(fn):
    def f(self, other):
        return _inplace(self, lambda x: fn(x, other), _others(other))
    f.__name__ = fn.__name__ + "_"
    f.__doc__ = f"{fn.__name__} in place."
    return f


deg2rad_ = _unary(M2.deg2rad)
rad2deg_ = _unary(M2.rad2deg)
sinc_ = _unary(M2.sinc)
exp2_ = _unary(M2.exp2)
logit_ = _unary(M2.logit)
renorm_ = _unary(M3.renorm)
xlogy_ = _binary(M2.xlogy)
hypot_ = _binary(M2.hypot)
copysign_ = _binary(M2.copysign)
heaviside_ = _binary(M2.heaviside)


def _product(fn):
    def f(self, a, b, *, beta=1, alpha=1):
        return _inplace(self, lambda x: fn(x, a, b, beta=beta, alpha=alpha), _others(a, b))
    f.__name__ = fn.__name__ + "_"
    f.__doc__ = f"{fn.__name__} in place (the result must have self's shape)."
    return f


addmv_ = _product(M3.addmv)
addr_ = _product(M3.addr)
baddbmm_ = _product(M3.baddbmm)
addbmm_ = _product(M3.addbmm)

"""Table entries of the Bessel family: torch.i0 and torch.special's i0e, i1, i1e (with
torch's derivatives), and the functions torch does not differentiate (a `requires_grad`
input gives a result without grad_fn, as in torch): modified_bessel_i0/i1/k0/k1,
scaled_modified_bessel_k0/k1, bessel_j0/j1/y0/y1, spherical_bessel_j0, airy_ai.

SciPy computes the forwards (Cephes, as torch's kernels); float16 arrives here as float32
(core/opmath.py) and integers as the default dtype (promote="float")."""
import numpy as np

from ..registry import defop
from ._within_rule import within_rule
from .pointwise import _raw
from .special import _in_own_dtype, _scipy_special


def _scipy(name):
    """The forward computing SciPy's `name` in the input's dtype."""
    def forward(x):
        return _in_own_dtype(getattr(_scipy_special(), name), x)
    forward.__name__ = f"{name}_forward"
    return forward


def _tiny(x):
    """Not |x| > eps of x's dtype: where torch's i1/i1e backward takes the limit 0.5
    (nan included, as torch's test reads)."""
    a = _raw(x)
    with np.errstate(invalid="ignore"):
        return ~(np.abs(a) > np.finfo(a.dtype).eps)


def _i1_partial(xp, ans, x):
    # torch's i1_backward: i0(x) - i1(x)/x, its limit 0.5 at x = 0
    tiny = _tiny(x)
    if not tiny.any():
        return within_rule(xp, i0, x) - ans / x
    safe = xp.where(tiny, np.finfo(_raw(x).dtype).eps, x)
    return xp.where(tiny, 0.5, within_rule(xp, i0, safe) - ans / safe)


def _i1e_partial(xp, ans, x):
    # torch's i1e_backward: i0e(x) - i1e(x) * (sign(x) + 1/x), its limit 0.5 at x = 0
    tiny = _tiny(x)
    if not tiny.any():
        return within_rule(xp, i0e, x) - ans * (xp.sign(x) + 1.0 / x)
    safe = xp.where(tiny, np.finfo(_raw(x).dtype).eps, x)
    grad = within_rule(xp, i0e, safe) - ans * (xp.sign(safe) + 1.0 / safe)
    return xp.where(tiny, 0.5, grad)


i1 = defop("i1", _scipy("i1"), promote="float", partials=[_i1_partial], reads=["x ans"],
           text="dx = g*(i0(x) - i1(x)/x) (g/2 at x = 0)",
           hint="i1'(x) = i0(x) - i1(x)/x is finite for every finite x (0.5 at x = 0); it "
                "grows like exp(|x|): inf beyond |x| ~ 710 in float64",
           node="SpecialI1Backward0")
i1e = defop("i1e", _scipy("i1e"), promote="float", partials=[_i1e_partial], reads=["x ans"],
            text="dx = g*(i0e(x) - i1e(x)*(sign(x) + 1/x)) (g/2 at x = 0)",
            hint="i1e'(x) = i0e(x) - i1e(x)*(sign(x) + 1/x) is finite for every finite x",
            node="SpecialI1EBackward0")
i0 = defop("i0", _scipy("i0"), promote="float",
           partials=[lambda xp, ans, x: within_rule(xp, i1, x)], reads=["x"],
           text="dx = g*i1(x)",
           hint="i0'(x) = i1(x) is finite for every finite x; it grows like exp(|x|): inf "
                "beyond |x| ~ 710 in float64")
i0e = defop("i0e", _scipy("i0e"), promote="float",
            partials=[lambda xp, ans, x: within_rule(xp, i1e, x) - xp.sign(x) * ans],
            reads=["x ans"], text="dx = g*(i1e(x) - sign(x)*i0e(x))",
            hint="i0e'(x) = i1e(x) - sign(x)*i0e(x) is finite for every finite x",
            node="SpecialI0EBackward0")


# ---- not differentiable in torch (no derivative formula: the result has no grad_fn) ----
_NO_GRAD = "torch gives no derivative: the result does not require grad"


def _spherical_j0(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        # sin(x)/x, 1 at x = 0; 0 at +-inf (sin is nan there), as torch's
        out = np.where(x == 0, np.ones((), x.dtype), np.sin(x) / x)
    return np.where(np.isinf(x), np.zeros((), x.dtype), out)


def _airy_ai(x):
    return _in_own_dtype(lambda a: _scipy_special().airy(a)[0], x)


def _nondiff(name, forward):
    return defop(name, forward, promote="float", text="no derivative (torch has none)",
                 hint=_NO_GRAD)


modified_bessel_i0 = _nondiff("modified_bessel_i0", _scipy("i0"))
modified_bessel_i1 = _nondiff("modified_bessel_i1", _scipy("i1"))
modified_bessel_k0 = _nondiff("modified_bessel_k0", _scipy("k0"))
modified_bessel_k1 = _nondiff("modified_bessel_k1", _scipy("k1"))
scaled_modified_bessel_k0 = _nondiff("scaled_modified_bessel_k0", _scipy("k0e"))
scaled_modified_bessel_k1 = _nondiff("scaled_modified_bessel_k1", _scipy("k1e"))
bessel_j0 = _nondiff("bessel_j0", _scipy("j0"))
bessel_j1 = _nondiff("bessel_j1", _scipy("j1"))
bessel_y0 = _nondiff("bessel_y0", _scipy("y0"))
bessel_y1 = _nondiff("bessel_y1", _scipy("y1"))
spherical_bessel_j0 = _nondiff("spherical_bessel_j0", _spherical_j0)
airy_ai = _nondiff("airy_ai", _airy_ai)

"""Binary ops' operands cast so that NumPy computes in PyTorch's result dtype.

PyTorch's rule (dtypes.result_type) and NumPy's differ: NumPy 2 treats a 0-d array as
strongly typed (float32 tensor * 0-d float64 -> float64; torch: float32), widens
float16 with an integer array (float32/float64; torch: float16) and an integer array
with a Python float (float64; torch: the default dtype). `operands(mode, a, b)` returns
a and b with the operands cast that need it, so the op's forward runs in torch's dtype
and its rules see inputs of that dtype (the engine casts each gradient back to its
input's dtype). The common case (a floating tensor with a Python number or a tensor of
its dtype) is decided without a lookup; any other is cached per (mode, dtype, kind,
dtype, kind, default dtype): one dict lookup.

The mode is the op's promotion kind, declared at its table entry (`defop(..., promote=
"div")`, ops/registry.py PROMOTE_KINDS); `operands(op, a, b)` reads it from the entry.
Unary float ops declare "float": core/record.py `apply` casts their integer inputs.
"""
import numpy as np

from .. import dtypes as _dt
from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from .rules import shape as S

_default = _dt._default  # {'float': the default dtype}, read on every call

# modes: how the op turns the promoted dtype into its computation dtype
ARITH, SUB, DIV, COMPARE = "arith", "sub", "div", "compare"
# ops without a bool kernel in PyTorch (its NotImplementedError names the kernel)
NO_BOOL = {"floor_divide": "div_floor_cpu", "remainder": "remainder_cpu",
           "fmod": "fmod_cpu", "pow": "pow"}

# integer-only ops (bool included): a floating result dtype has no kernel
NO_FLOAT = {"bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
            "bitwise_xor": "bitwise_xor_cpu", "gcd": "gcd_cpu", "lcm": "lcm_cpu",
            "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu"}

_PLANS = {}
_NOTHING = ()  # the plan "no cast needed"
_SUB_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use "
              "the `^` or `logical_xor()` operator instead.")
_SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def key_of(x):
    """(dtype or Python type, kind) of an operand: a tensor, an array or a Python number."""
    t = type(x)
    if t is float or t is int or t is bool:
        return t, _dt.NUMBER
    a = x._data if isinstance(x, TensorBase) else x
    return a.dtype, (_dt.ZERO if a.ndim == 0 else _dt.DIM)


def result_type(*operands):
    """torch.result_type of tensors, arrays and Python numbers."""
    return _dt.result_type(*(key_of(x) for x in operands))


def operands(mode, a, b):
    """(a, b), each tensor operand cast to the dtype torch computes `a op b` in when
    NumPy would compute in another; raises what torch raises for dtypes it refuses.
    `mode` is the op's promotion kind, or the op itself (its declared `promote` kind,
    ops/registry.py)."""
    # The hot path without a lookup: a floating tensor with a Python int/float or with
    # a tensor of its own dtype is computed in that dtype by both libraries, in every mode.
    if isinstance(a, TensorBase):
        d = a._data.dtype
        if d.kind == "f":
            tb = type(b)
            if tb is float or tb is int or (isinstance(b, TensorBase) and b._data.dtype is d):
                return a, b
    elif isinstance(b, TensorBase):
        ta = type(a)
        if (ta is float or ta is int) and b._data.dtype.kind == "f":
            return a, b
    return _planned(mode if type(mode) is str else mode.promote, a, b)


def _planned(mode, a, b):
    ka, za = key_of(a)
    kb, zb = key_of(b)
    key = (mode, ka, za, kb, zb, _default["float"])  # Python floats follow the default
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _make_plan(mode, ka, za, kb, zb)
    if plan is _NOTHING:
        return a, b
    if isinstance(plan, Exception):
        raise type(plan)(*plan.args)
    ca, cb = plan
    return (a if ca is None else _cast(a, ca)), (b if cb is None else _cast(b, cb))


def inplace_other(mode, x, o):
    """`o` as `x op= o` needs it (cast like `operands` would); raises torch's errors,
    among them "result type Float can't be cast to the desired output type Long" when
    the result dtype is of a higher category than x's. `mode`: as in `operands`."""
    d = x._data.dtype
    if d.kind == "f":  # the hot path, as in `operands`
        to = type(o)
        if to is float or to is int or (isinstance(o, TensorBase) and o._data.dtype is d):
            return o
    if type(mode) is not str:
        mode = mode.promote
    kx, zx = key_of(x)
    ko, zo = key_of(o)
    key = ("=", mode, kx, zx, ko, zo, _default["float"])
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _make_inplace_plan(mode, kx, zx, ko, zo)
    if plan is _NOTHING:
        return o
    if isinstance(plan, Exception):
        raise type(plan)(*plan.args)
    return _cast(o, plan)


def _make_inplace_plan(mode, kx, zx, ko, zo):
    rt = _dt.result_type((kx, zx), (ko, zo))
    if mode == DIV and rt.kind != "f":
        rt = _dt.get_default_dtype()
    if not _dt.can_cast(rt, kx):  # torch checks the output's dtype first
        return RuntimeError(f"result type {_dt.torch_name(rt)} can't be cast to the desired "
                            f"output type {_dt.torch_name(kx)}")
    plan = _make_plan(mode, kx, zx, ko, zo)
    if isinstance(plan, Exception):
        return plan
    return _NOTHING if plan is _NOTHING or plan[1] is None else plan[1]


def _cast(x, dtype):
    if isinstance(x, TensorBase):
        if dtype.kind == "f":
            return apply(S.cast, x, dtype=dtype)  # recorded: the gradient flows back
        return like(x, x._data.astype(dtype))
    return x.astype(dtype)


def _sample(k, kind):
    """A value NumPy types as it types the operand (Python numbers stay weak)."""
    if kind == _dt.NUMBER:
        return k(1)
    return np.ones((1,) if kind == _dt.DIM else (), dtype=k)


def _make_plan(mode, ka, za, kb, zb):
    rt = _dt.result_type((ka, za), (kb, zb))
    is_bool = [(k is bool) if z == _dt.NUMBER else k.kind == "b" for k, z in ((ka, za), (kb, zb))]
    if mode == SUB and any(is_bool):
        return RuntimeError(_SUB_BOOLS if all(is_bool) and za != _dt.NUMBER != zb
                            else _SUB_BOOL)
    if mode in NO_BOOL and rt.kind == "b" and not (mode == "pow" and zb == _dt.NUMBER):
        # (torch's pow has a bool kernel for a Python-bool exponent only: F.pow does it)
        return NotImplementedError(f"\"{NO_BOOL[mode]}\" not implemented for 'Bool'")
    if mode in NO_FLOAT and rt.kind == "f":
        return NotImplementedError(f"\"{NO_FLOAT[mode]}\" not implemented for "
                                   f"'{_dt.torch_name(rt)}'")
    if mode == DIV and rt.kind != "f":
        rt = _dt.get_default_dtype()  # true division of integers gives the default dtype
    sa, sb = _sample(ka, za), _sample(kb, zb)
    with np.errstate(all="ignore"):
        natural = (np.true_divide(sa, sb) if mode == DIV else np.asarray(
            np.add(sa, sb) if rt.kind != "b" else np.logical_or(sa, sb))).dtype
    if natural == rt:
        return _NOTHING
    # cast every array operand not already of the computation dtype; Python numbers are
    # weak in NumPy and follow the array
    return (None if za == _dt.NUMBER or ka == rt else rt,
            None if zb == _dt.NUMBER or kb == rt else rt)

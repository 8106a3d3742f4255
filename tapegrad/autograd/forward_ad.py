"""Forward-mode AD with dual numbers: `tapegrad.autograd.forward_ad` (PyTorch's API).

A dual tensor carries a primal value x and a tangent dx (a direction). Every op
then also computes the tangent of its output, d ans = J dx, from the same table
entry's forward rule `op.jvp(xp, tangents, ans, *inputs, **kw)`: one pass gives
f(x) and the directional derivative J v (a Jacobian column when v is a basis vector),
with no tape and no backward pass.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)

How it hooks in: while a level is active, the thread's autograd state holds it
(`core.state.dual`) and `apply` calls its `propagate(op, inputs, args, saved, result)`
after each op; that reads the inputs' tangents (the `_fw` slot, a NumPy array) and
writes the result's. Tangents are plain arrays computed with NumPy, so
forward mode composes with reverse mode in one direction: forward-over-reverse
(a jvp of a gradient computed with create_graph=True, e.g. Hessian-vector products)
works; a tangent itself is not recorded for a later backward.

# NOTE: one level at a time (nesting raises), as in PyTorch.
"""
import weakref
from collections import namedtuple

import numpy as np

from .. import dtypes as _dt
from ..core import backward as _backward
from ..core.grad_mode import enable_grad
from ..core.record import apply
from ..core.state import state
from ..core.tensor_base import TensorBase, like
from ..core.engine import sum_to
from ..ops.rules import shape as _S
from ..ops.xp import namespace as _xp

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


class DualLevel:
    """The active level: the tensors given a tangent in it (held weakly, so that leaving
    the level strips their tangents), and the propagation `apply` calls after each op.

    `views`: id(tangent array) -> the Tensor object that shows it (held weakly). A tangent
    lives in the `_fw` slot as an array, but PyTorch hands back the very Tensor given to
    make_dual (`unpack_dual(make_dual(p, t)).tangent is t`, its forward-AD tutorial
    asserts it) and the same Tensor on every unpack; the entry is used only while that
    Tensor's array is still the one in `_fw` (`.data` may have been reassigned since)."""

    def __init__(self):
        self.tensors = []
        self.views = weakref.WeakValueDictionary()

    def tangent_tensor(self, t):
        """The Tensor showing t's tangent: the one given or handed out before, else new."""
        tan = t._fw
        view = self.views.get(id(tan))
        if view is None or view._data is not tan:
            view = like(t, tan)
            self.views[id(tan)] = view
        return view

    def set_tangent(self, t, tangent):
        t._fw = tangent
        self.tensors.append(weakref.ref(t))

    def propagate(self, op, inputs, args, saved, res):
        """res's tangent from the inputs' tangents: the op's JVP rule (or its VJP rules)."""
        tangents = None
        for i, t in enumerate(inputs):
            if isinstance(t, TensorBase) and t._fw is not None:
                if tangents is None:
                    tangents = [None] * len(inputs)
                tangents[i] = t._fw
        out = res._data
        if tangents is None or not op.differentiable or out.dtype.kind not in "fc":
            return  # integer/bool results (argmax, comparisons) carry no tangent
        kw = args if not saved else {**args, **saved}
        if op.jvp is None:
            tan = jvp_from_vjp(op, inputs, tangents, out, kw)
        else:
            arrays = [t._data if isinstance(t, TensorBase) else t for t in inputs]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                tan = op.jvp(np, tangents, out, *arrays, **kw)
        if tan is None:
            return
        tan = np.asarray(tan)
        if tan.shape != out.shape:
            tan = np.array(np.broadcast_to(tan, out.shape))
        if tan.dtype != out.dtype:
            tan = tan.astype(out.dtype)
        self.set_tangent(res, tan)


def enter_dual_level():
    """Start a dual level (prefer the `dual_level()` context manager)."""
    if state.dual is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment: a dual "
                           "level is already active")
    state.dual = DualLevel()
    return 0


def exit_dual_level(*, level=None):
    """End the dual level: every tangent created inside it is dropped."""
    if state.dual is None:
        raise RuntimeError("exit_dual_level: no dual level is active")
    level, state.dual = state.dual, None
    level.views.clear()
    for ref in level.tensors:
        t = ref()
        if t is not None:
            t._fw = None


class dual_level:
    """Context manager: tangents exist only inside it (PyTorch's `fwAD.dual_level`)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor, tangent, *, level=None):
    """A new tensor with `tensor`'s value (shared memory) and the given tangent."""
    if state.dual is None:
        raise RuntimeError("make_dual: no dual level is active. Use it inside "
                           "`with forward_ad.dual_level():`")
    if not isinstance(tensor, TensorBase):
        raise TypeError(f"make_dual: expected a Tensor primal, got {type(tensor).__name__}")
    tan = tangent._data if isinstance(tangent, TensorBase) else np.asarray(tangent)
    if tan.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tan.shape)}.")
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(f"make_dual: the primal must be floating point, got "
                         f"{_dt.name(tensor._data.dtype)}")
    if tan.dtype != tensor._data.dtype:
        tan = tan.astype(tensor._data.dtype)
    out = apply(_S.alias, tensor)
    out._version_counter = tensor._version_counter  # same memory, same version counter
    state.dual.set_tangent(out, tan)
    if isinstance(tangent, TensorBase) and tangent._data is tan:  # not cast: keep it
        state.dual.views[id(tan)] = tangent
    return out


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the value as a tensor without tangent, and the tangent
    (a Tensor, or None if the tensor carries none): the Tensor given to make_dual when
    that is the tangent, and the same Tensor object on every call, as in PyTorch."""
    if not isinstance(tensor, TensorBase):
        return UnpackedDualTensor(tensor, None)
    tan = tensor._fw
    if tan is None:
        return UnpackedDualTensor(tensor, None)
    primal = apply(_S.alias, tensor)
    primal._version_counter = tensor._version_counter
    primal._fw = None
    if state.dual is None:  # a tangent outlives its level only if a level is left open
        return UnpackedDualTensor(primal, like(tensor, tan))
    return UnpackedDualTensor(primal, state.dual.tangent_tensor(tensor))


def jvp_from_vjp(op, inputs, tangents, out, kw):
    """J v for an op without a JVP rule, from its VJP rules (the "double vjp" trick).

    A VJP rule is linear in the incoming gradient u: <vjp(u), v> = <u, J v>. Run the
    rules with the differentiable namespace on a u that requires grad, and
    differentiate <vjp(u), v> with respect to u: the gradient is J v. This needs
    create_graph-safe rules (xp.* and operators only), like double backward does.
    """
    like_t = next(t for t in inputs if isinstance(t, TensorBase))
    level, state.dual = state.dual, None  # the ops below are bookkeeping, not user ops
    try:
        with enable_grad(), np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            u = like(like_t, np.zeros(out.shape, out.dtype), True)
            ins = [like(t, t._data) if isinstance(t, TensorBase) else t for t in inputs]
            ans = like(like_t, out)
            total = None
            for i, t in enumerate(tangents):
                if t is None or op.vjps is None or op.vjps[i] is None:
                    continue
                gi = op.vjps[i](_xp, u, ans, *ins, **kw)
                if gi is None:
                    continue
                if not isinstance(gi, TensorBase):
                    gi = like(like_t, np.asarray(gi))
                if tuple(gi.shape) != tuple(t.shape):
                    gi = sum_to(_xp, gi, t.shape)
                term = (gi * like(like_t, t)).sum()
                total = term if total is None else total + term
            if total is None or not total._rg:
                return None  # the output does not depend on the inputs along v
            (jv,) = _backward.grad(total, u, allow_unused=True, materialize_grads=True)
    except (AttributeError, TypeError, NotImplementedError) as e:
        raise NotImplementedError(
            f"forward-mode AD: the op '{op.name}' has no forward (JVP) rule, and its "
            f"backward rules are not create_graph-safe, so none can be derived from them "
            f"({type(e).__name__}: {e}); add `jvp=` to its table entry") from None
    finally:
        state.dual = level
    return jv._data

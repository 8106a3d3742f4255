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

How it hooks in: while a level is active, `graph.apply` calls `_propagate(op, inputs,
kw, result)` after each op; it reads the inputs' tangents (the `_fw` slot, a NumPy
array) and writes the result's. Tangents are plain arrays computed with NumPy, so
forward mode composes with reverse mode in one direction: forward-over-reverse
(a jvp of a gradient computed with create_graph=True, e.g. Hessian-vector products)
works; a tangent itself is not recorded for a later backward.

# NOTE: one level at a time (nesting raises), as in PyTorch.
"""
import weakref
from collections import namedtuple

import numpy as np

from . import graph as _graph
from ..ops.registry import defop

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

# The active level (None when forward mode is off) and the tensors given a tangent
# at that level, held weakly, so that leaving the level strips their tangents.
_state = {"level": None, "tensors": []}

# make_dual/unpack_dual return a new tensor object that shares the input's memory and
# passes gradients straight through (reverse mode still sees the primal's history).
_alias = defop("alias", lambda x: x, linear=True, promote=False,
               vjp=[lambda xp, g, ans, x: g],
               doc="identity that shares memory (make_dual / unpack_dual)")


def enter_dual_level():
    """Start a dual level (prefer the `dual_level()` context manager)."""
    if _state["level"] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment: a dual "
                           "level is already active")
    _state["level"] = object()
    _state["tensors"] = []
    _graph._forward_ad_hook[0] = _propagate
    return 0


def exit_dual_level(*, level=None):
    """End the dual level: every tangent created inside it is dropped."""
    if _state["level"] is None:
        raise RuntimeError("exit_dual_level: no dual level is active")
    _graph._forward_ad_hook[0] = None
    for ref in _state["tensors"]:
        t = ref()
        if t is not None:
            t._fw = None
    _state["level"] = None
    _state["tensors"] = []


class dual_level:
    """Context manager: tangents exist only inside it (PyTorch's `fwAD.dual_level`)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _set_tangent(t, tangent):
    t._fw = tangent
    _state["tensors"].append(weakref.ref(t))


def make_dual(tensor, tangent, *, level=None):
    """A new tensor with `tensor`'s value (shared memory) and the given tangent."""
    Tensor = _graph.Tensor
    if _state["level"] is None:
        raise RuntimeError("make_dual: no dual level is active. Use it inside "
                           "`with forward_ad.dual_level():`")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_dual: expected a Tensor primal, got {type(tensor).__name__}")
    tan = tangent.data if isinstance(tangent, Tensor) else np.asarray(tangent)
    if tan.shape != tensor.data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.data.shape)} while the given forward gradient is of size "
            f"{list(tan.shape)}.")
    if tensor.data.dtype.kind not in "fc":
        raise ValueError(f"make_dual: the primal must be floating point, got "
                         f"{tensor.data.dtype}")
    if tan.dtype != tensor.data.dtype:
        tan = tan.astype(tensor.data.dtype)
    out = _graph.apply(_alias, tensor)
    out._version = tensor._version  # same memory, same version counter
    _set_tangent(out, tan)
    return out


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the value as a tensor without tangent, and the tangent
    (a Tensor, or None if the tensor carries none)."""
    Tensor = _graph.Tensor
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    tan = tensor._fw
    if tan is None:
        return UnpackedDualTensor(tensor, None)
    primal = _graph.apply(_alias, tensor)
    primal._version = tensor._version
    primal._fw = None
    return UnpackedDualTensor(primal, _graph._make(tan, False, None))


def _propagate(op, inputs, kw, res):
    """Called by `apply` after every op while a level is active: res's tangent."""
    Tensor = _graph.Tensor
    tangents = None
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t._fw is not None:
            if tangents is None:
                tangents = [None] * len(inputs)
            tangents[i] = t._fw
    if tangents is None:
        return
    out = res.data
    if not op.differentiable or out.dtype.kind not in "fc":
        return  # integer/bool results (argmax, comparisons) carry no tangent
    arrays = [t.data if isinstance(t, Tensor) else t for t in inputs]
    if op.jvp is None:
        tan = jvp_from_vjp(op, inputs, tangents, out, kw)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            tan = op.jvp(np, tangents, out, *arrays, **kw)
    if tan is None:
        return
    tan = np.asarray(tan)
    if tan.shape != out.shape:
        tan = np.array(np.broadcast_to(tan, out.shape))
    if tan.dtype != out.dtype:
        tan = tan.astype(out.dtype)
    _set_tangent(res, tan)


def jvp_from_vjp(op, inputs, tangents, out, kw):
    """J v for an op without a JVP rule, from its VJP rules (the "double vjp" trick).

    A VJP rule is linear in the incoming gradient u: <vjp(u), v> = <u, J v>. Run the
    rules with the differentiable namespace on a u that requires grad, and
    differentiate <vjp(u), v> with respect to u: the gradient is J v. This needs
    create_graph-safe rules (xp.* and operators only), like double backward does.
    """
    from . import engine
    from .grad_mode import enable_grad
    from ..ops.xp import tensor_namespace as xp
    Tensor = _graph.Tensor
    hook = _graph._forward_ad_hook[0]
    _graph._forward_ad_hook[0] = None  # the ops below are bookkeeping, not user ops
    try:
        with enable_grad(), np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            u = _graph._make(np.zeros(out.shape, out.dtype), True, None)
            ins = [_graph._make(t.data, False, None) if isinstance(t, Tensor) else t
                   for t in inputs]
            ans = _graph._make(out, False, None)
            total = None
            for i, t in enumerate(tangents):
                if t is None or op.vjps is None or op.vjps[i] is None:
                    continue
                gi = op.vjps[i](xp, u, ans, *ins, **kw)
                if gi is None:
                    continue
                if not isinstance(gi, Tensor):
                    gi = _graph._make(np.asarray(gi), False, None)
                if tuple(gi.shape) != tuple(t.shape):
                    gi = engine.sum_to(xp, gi, t.shape)
                term = (gi * _graph._make(t, False, None)).sum()
                total = term if total is None else total + term
            if total is None or not total._rg:
                return None  # the output does not depend on the inputs along v
            (jv,) = engine.grad(total, u, allow_unused=True, materialize_grads=True)
    except (AttributeError, TypeError, NotImplementedError) as e:
        raise NotImplementedError(
            f"forward-mode AD: the op '{op.name}' has no forward (JVP) rule, and its "
            f"backward rules are not create_graph-safe, so none can be derived from them "
            f"({type(e).__name__}: {e}); add `jvp=` to its table entry") from None
    finally:
        _graph._forward_ad_hook[0] = hook
    return jv.data

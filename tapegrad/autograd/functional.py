"""Whole-derivative helpers (`tapegrad.autograd.functional`, as `torch.autograd.functional`).

    jacobian(f, inputs)   J[i..., j...] = d out[i...] / d in[j...]   shape out.shape + in.shape
    hessian(f, inputs)    the Jacobian of the gradient of a scalar f
    vjp(f, inputs, v)     (f(x), v^T J)
    jvp(f, inputs, v)     (f(x), J v)     by the double-vjp identity (as PyTorch's)
    hvp / vhp             (f(x), H v) / (f(x), v^T H)

The Jacobian is built row by row with reverse mode: one backward per output element,
seeded with a one-hot vector e_k, gives the row e_k^T J. The Hessian is the Jacobian
of a gradient computed with create_graph=True (the gradient is itself a graph).
"""
import numpy as np

from ..core import backward as _backward
from ..core import grad_mode
from ..core.record import apply
from ..core.tensor_base import make
from ..ops.rules import shape as _S
from .._tensor import Tensor

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _as_tuple(x, arg, fname):
    if isinstance(x, Tensor):
        return (x,), False
    if isinstance(x, (tuple, list)) and all(isinstance(v, Tensor) for v in x):
        return tuple(x), True
    raise TypeError(f"The {arg} given to {fname} must be either a Tensor or a tuple of "
                    f"Tensors but the value given is of type {type(x).__name__}.")


def _prepare(inputs, create_graph):
    """Inputs the function is run on: requiring grad; keep their history only if the
    result must itself be differentiable (create_graph)."""
    out = []
    with grad_mode.enable_grad():
        for t in inputs:
            if create_graph and t._rg:
                x = apply(_S.alias, t)  # a view that keeps t's graph
                x._version_counter = t._version_counter
            else:
                x = t.detach()
                x._rg = True
            out.append(x)
    return tuple(out)


def _call(func, inputs, create_graph, fname):
    """Run func on prepared copies of `inputs` (a Tensor or a tuple of Tensors).

    Returns (xs, in_tuple, outs, out_tuple): the prepared inputs, the outputs as a tuple,
    and whether inputs / outputs were given as tuples (to shape the result alike)."""
    ins, in_tuple = _as_tuple(inputs, "inputs", fname)
    xs = _prepare(ins, create_graph)
    with grad_mode.enable_grad():
        out = func(*xs)
    outs, out_tuple = _as_tuple(out, "outputs of the user-provided function", fname)
    return xs, in_tuple, outs, out_tuple


def _zeros(t):
    """A constant zero tensor like t: the gradient of an input the outputs do not use."""
    return make(Tensor, np.zeros_like(t._data))


def _one_hot_like(t, k):
    """The basis tensor e_k (flat index k) with t's shape and dtype: the seed that picks
    row k of a Jacobian (reverse mode) or column k (forward mode)."""
    e = np.zeros(t._data.size, dtype=t._data.dtype)
    e[k] = 1
    return Tensor._of(e.reshape(t._data.shape))


def _grads(outputs, inputs, seeds, create_graph):
    """Gradients of sum(seed * output) w.r.t. inputs; zeros where unused."""
    roots, gs = [], []
    for o, s in zip(outputs, seeds):
        if o._rg:
            roots.append(o)
            gs.append(s)
    if not roots:
        return tuple(_zeros(x) for x in inputs)
    res = _backward.grad(roots, inputs, gs, retain_graph=True, create_graph=create_graph,
                       allow_unused=True)
    return tuple(_zeros(x) if g is None else g for x, g in zip(inputs, res))


def _stack(parts, shape):
    """Stack equally shaped tensors along a new first axis (differentiably), as `shape`."""
    if not parts:
        return Tensor._of(np.zeros(shape))
    flat = [p.reshape(1, -1) for p in parts]
    return apply(_S.cat, *flat, axis=0).reshape(shape)


def _stack_rows(rows, shape, create_graph):
    if not create_graph:
        arr = np.stack([r._data for r in rows]) if rows else np.zeros(shape)
        return make(Tensor, arr.reshape(shape))
    return _stack(rows, shape)


def _finish(t, create_graph):
    return t if create_graph else t.detach()


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs (see the module docstring for shapes)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    xs, in_tuple, outs, out_tuple = _call(func, inputs, create_graph, "jacobian")
    if strict:
        for i, o in enumerate(outs):
            if not o._rg:
                raise RuntimeError(f"Output {i} of the user-provided function does not "
                                   "require gradients. The outputs must be computed in a "
                                   "differentiable manner from the input when running in "
                                   "strict mode.")
    jac = []
    for o in outs:
        rows = [[] for _ in xs]
        n = o._data.size
        for k in range(n):
            gs = _grads([o], xs, [_one_hot_like(o, k)], create_graph)
            for j, g in enumerate(gs):
                rows[j].append(g)
        jac.append(tuple(
            _stack_rows(rows[j], tuple(o.shape) + tuple(x.shape), create_graph)
            for j, x in enumerate(xs)))
    if not out_tuple and not in_tuple:
        return jac[0][0]
    if not out_tuple:
        return jac[0]
    if not in_tuple:
        return tuple(row[0] for row in jac)
    return tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func: jacobian of its gradient (create_graph inside)."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "hessian")

    def grad_func(*xs):
        out = func(*xs)
        outs, _ = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0]._data.size != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element.")
        gs = _grads(outs, xs, [None], create_graph=True)
        return gs if in_tuple else gs[0]

    return jacobian(grad_func, inputs, create_graph=create_graph, strict=strict)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): one reverse pass."""
    xs, in_tuple, outs_t, out_tuple = _call(func, inputs, create_graph, "vjp")
    if v is None:
        if len(outs_t) != 1 or outs_t[0]._data.size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        vs = (None,)
    else:
        vs, _ = _as_tuple(v, "v", "vjp")
    gs = _grads(outs_t, xs, list(vs), create_graph)
    value = tuple(_finish(o, create_graph) for o in outs_t)
    gs = tuple(_finish(g, create_graph) for g in gs)
    return (value if out_tuple else value[0], gs if in_tuple else gs[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): J^T u is linear in u, so J v = d<J^T u, v>/du (two reverse
    passes, the "double backward trick" PyTorch's jvp uses too)."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if len(ins) != 1 or ins[0]._data.size != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        vs = (Tensor._of(np.ones_like(ins[0]._data)),)
    else:
        vs, _ = _as_tuple(v, "v", "jvp")
    xs, _, outs, out_tuple = _call(func, inputs, create_graph, "jvp")
    with grad_mode.enable_grad():
        us = [Tensor._of(np.zeros_like(o._data), requires_grad=True) for o in outs]
        gs = _grads(outs, xs, us, create_graph=True)
        tans = _grads(gs, us, list(vs), create_graph)
    value = tuple(_finish(o, create_graph) for o in outs)
    tans = tuple(_finish(t, create_graph) for t in tans)
    return (value if out_tuple else value[0], tans if out_tuple else tans[0])


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): reverse over reverse."""
    xs, in_tuple, outs, _ = _call(func, inputs, create_graph, "vhp")
    if len(outs) != 1 or outs[0]._data.size != 1:
        raise RuntimeError("The function given to vhp should return a single Tensor with a "
                           "single element.")
    vs, _ = _as_tuple(v, "v", "vhp")
    with grad_mode.enable_grad():
        gs = _grads(outs, xs, [None], create_graph=True)
        res = _grads(gs, xs, list(vs), create_graph)
    res = tuple(_finish(r, create_graph) for r in res)
    return _finish(outs[0], create_graph), (res if in_tuple else res[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v); H is symmetric, so this is vhp."""
    return vhp(func, inputs, v, create_graph, strict)

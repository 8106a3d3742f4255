"""Function transforms (`tapegrad.func`, shaped like `torch.func`): jvp, vjp, grad.

They turn a function of tensors into its derivative:
    jvp(f, primals, tangents) -> (f(x), J v)         forward mode, one pass
    vjp(f, *primals)          -> (f(x), u -> u^T J)  reverse mode, reusable
    grad(f)(x)                -> df/dx               f returns a scalar

`grad` nests (grad(grad(f))) and composes with jvp (forward-over-reverse): when the
inputs are themselves being differentiated, the inner backward is recorded
(create_graph=True). jacrev/jacfwd/hessian build whole Jacobians from these.
"""
import numpy as np

from .autograd import engine as _engine
from .autograd import forward_ad as fwAD
from .autograd import graph as _graph
from .autograd import grad_mode
from .autograd.functional import _grads, _one_hot_like, _zeros

__all__ = ["jvp", "vjp", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian"]


def _T():
    return _graph.Tensor


def _as_tuple(x, what, fname):
    if isinstance(x, _T()):
        return (x,), True
    if isinstance(x, (tuple, list)):
        for v in x:
            if not isinstance(v, _T()):
                raise TypeError(f"{fname}: expected {what} to be Tensors, got "
                                f"{type(v).__name__}")
        return tuple(x), False
    raise TypeError(f"{fname}: expected {what} to be a Tensor or a tuple of Tensors, got "
                    f"{type(x).__name__}")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents) in one forward pass (dual numbers)."""
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple with "
                           "the same length as primals")
    for p, t in zip(primals, tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape, got {tuple(p.shape)} and "
                               f"{tuple(t.shape)}")
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents)]
        out = func(*duals)
        aux = None
        if has_aux:
            out, aux = out
        outs, single = _as_tuple(out, "outputs", "jvp")
        values, tans = [], []
        for o in outs:
            primal, tan = fwAD.unpack_dual(o)
            values.append(primal.detach())
            tans.append(tan if tan is not None else _zeros(o))
    res = (values[0], tans[0]) if single else (tuple(values), tuple(tans))
    return res + (aux,) if has_aux else res


def _prepare(primals):
    """Inputs to differentiate: an alias of each (so an outer transform still sees the
    graph) that requires grad; and whether the inner backward must be recorded."""
    nested = any(p._rg or p._fw is not None for p in primals)
    with grad_mode.enable_grad():
        xs = []
        for p in primals:
            x = _graph.apply(fwAD._alias, p)
            x._version = p._version
            if not x._rg:
                x._rg = True
            xs.append(x)
    return xs, nested


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) where vjp_fn(*cotangents) = cotangents^T J per primal."""
    for p in primals:
        if not isinstance(p, _T()):
            raise TypeError(f"vjp: expected primals to be Tensors, got {type(p).__name__}")
    xs, nested = _prepare(primals)
    with grad_mode.enable_grad():
        out = func(*xs)
    aux = None
    if has_aux:
        out, aux = out
    outs, single = _as_tuple(out, "outputs", "vjp")

    def vjp_fn(*cotangents):
        if single and len(cotangents) == 1 and isinstance(cotangents[0], _T()):
            cts = cotangents
        else:
            cts = cotangents[0] if len(cotangents) == 1 else cotangents
            cts, _ = _as_tuple(cts, "cotangents", "vjp_fn")
        if len(cts) != len(outs):
            raise RuntimeError(f"vjp_fn: expected {len(outs)} cotangents (one per output), "
                               f"got {len(cts)}")
        for o, c in zip(outs, cts):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"vjp_fn: Mismatch in shape: cotangent has a shape of "
                                   f"{tuple(c.shape)} and output has a shape of "
                                   f"{tuple(o.shape)}.")
        return _grads(outs, xs, cts, nested)

    value = out if nested else (outs[0].detach() if single else tuple(o.detach() for o in outs))
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def grad_and_value(func, argnums=0, has_aux=False):
    """Like `grad`, but also returns func's value: (grad, value)."""

    def wrapper(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        for n in nums:
            if not isinstance(args[n], _T()):
                raise TypeError(f"grad: argument {n} must be a Tensor, got "
                                f"{type(args[n]).__name__}")
        xs, nested = _prepare([args[n] for n in nums])
        new_args = list(args)
        for n, x in zip(nums, xs):
            new_args[n] = x
        with grad_mode.enable_grad():
            out = func(*new_args, **kwargs)
        aux = None
        if has_aux:
            out, aux = out
        if not isinstance(out, _T()) or out.data.size != 1:
            raise RuntimeError("grad(f)(*args): Expected f(*args) to return a scalar Tensor, "
                               f"got {getattr(out, 'shape', type(out).__name__)}")
        if out._rg:
            gs = _engine.grad([out], xs, create_graph=nested, retain_graph=nested,
                              allow_unused=True)
            gs = tuple(_zeros(x) if g is None else g for x, g in zip(xs, gs))
        else:
            gs = tuple(_zeros(x) for x in xs)
        g = gs[0] if isinstance(argnums, int) else gs
        value = out if nested else out.detach()
        return (g, (value, aux)) if has_aux else (g, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """grad(f)(*args): the gradient of the scalar f(*args) w.r.t. args[argnums]."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _stack(parts, shape):
    """Stack equally shaped tensors along a new first axis (differentiably)."""
    from .ops import functions as F
    stack = getattr(__import__("tapegrad"), "stack", None)
    if stack is not None:
        return F.reshape(stack(parts, 0), shape)
    flat = [F.reshape(p, (1, -1) if p.data.size else (1, 0)) for p in parts]
    out = None
    n = len(flat)
    for i, f in enumerate(flat):  # sum_i e_i f_i: a composite stack
        e = np.zeros((n, 1), dtype=f.data.dtype)
        e[i] = 1
        term = f * _graph.Tensor(e)
        out = term if out is None else out + term
    return F.reshape(out, shape)


def jacrev(func, argnums=0):
    """Jacobian by reverse mode: one vjp per output element (rows)."""

    def wrapper(*args):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        out, fn = vjp(lambda *xs: func(*_subst(args, nums, xs)), *[args[n] for n in nums])
        rows = [[] for _ in nums]
        for k in range(out.data.size):
            for j, g in enumerate(fn(_one_hot_like(out, k))):
                rows[j].append(g)
        jac = tuple(_stack(r, tuple(out.shape) + tuple(args[n].shape))
                    for r, n in zip(rows, nums))
        return jac[0] if isinstance(argnums, int) else jac

    return wrapper


def jacfwd(func, argnums=0):
    """Jacobian by forward mode: one jvp per input element (columns)."""

    def wrapper(*args):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        jacs = []
        for n in nums:
            x = args[n]
            cols = []
            out = None
            for k in range(x.data.size):
                tangents = tuple(_one_hot_like(x, k) if m == n else _zeros(args[m])
                                 for m in nums)
                out, col = jvp(lambda *xs: func(*_subst(args, nums, xs)),
                               tuple(args[m] for m in nums), tangents)
                cols.append(col.data)
            if out is None:
                out = func(*args)
            arr = np.stack(cols, axis=-1) if cols else np.zeros(
                tuple(out.shape) + (0,), out.data.dtype)
            jacs.append(_graph._make(arr.reshape(tuple(out.shape) + tuple(x.shape)),
                                     False, None))
        return jacs[0] if isinstance(argnums, int) else tuple(jacs)

    return wrapper


def hessian(func, argnums=0):
    """Hessian of a scalar function: the Jacobian (reverse) of its gradient."""
    return jacrev(grad(func, argnums), argnums)


def _subst(args, nums, xs):
    args = list(args)
    for n, x in zip(nums, xs):
        args[n] = x
    return args

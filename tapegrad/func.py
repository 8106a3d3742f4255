"""Function transforms (`tapegrad.func`, shaped like `torch.func`): jvp, vjp, grad, ...

They turn a function of tensors into its derivative:
    jvp(f, primals, tangents) -> (f(x), J v)
    vjp(f, *primals)          -> (f(x), u -> u^T J)  reverse mode, reusable
    grad(f)(x)                -> df/dx               f returns a scalar
    jacrev(f) / jacfwd(f)     -> the Jacobian, by rows (vjps) / by columns (jvps)
    hessian(f)                -> jacfwd(jacrev(f)), for any output shape

Every transform is built from reverse mode, which nests to any depth: when the inputs
are themselves being differentiated (an outer transform is running), the inner
backward is recorded (create_graph=True), so grad(grad(f)), jacrev(jacfwd(f)) and
jacfwd(jacfwd(f)) work. `jvp` is one forward pass with dual numbers
(`autograd.forward_ad`) at the top level; inside another transform it uses the
double-vjp identity instead (g(u) = J^T u is linear in u, so d<g(u), v>/du = J v),
whose two reverse passes are themselves recorded and carry outer tangents.
"""
import numpy as np

from .autograd import forward_ad as fwAD
from .autograd.functional import _grads, _one_hot_like, _stack, _zeros
from .core import grad_mode
from .core.record import apply
from .ops import shape as _S
from .tensor import Tensor

__all__ = ["jvp", "vjp", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian"]


def _as_tuple(x, what, fname):
    if isinstance(x, Tensor):
        return (x,), True
    if isinstance(x, (tuple, list)):
        for v in x:
            if not isinstance(v, Tensor):
                raise TypeError(f"{fname}: expected {what} to be Tensors, got "
                                f"{type(v).__name__}")
        return tuple(x), False
    raise TypeError(f"{fname}: expected {what} to be a Tensor or a tuple of Tensors, got "
                    f"{type(x).__name__}")


def _prepare(primals):
    """Inputs to differentiate: an alias of each (so an outer transform still sees the
    graph) that requires grad; and whether the inner backward must be recorded."""
    nested = any(p._rg or p._fw is not None for p in primals)
    with grad_mode.enable_grad():
        xs = []
        for p in primals:
            x = apply(_S.alias, p)
            x._version = p._version
            x._rg = True
            xs.append(x)
    return xs, nested


def _run(func, xs, has_aux, fname):
    with grad_mode.enable_grad():
        out = func(*xs)
    aux = None
    if has_aux:
        out, aux = out
    outs, single = _as_tuple(out, "outputs", fname)
    return outs, single, aux


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents)."""
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
    if not any(p._rg or p._fw is not None for p in primals):
        return _jvp_dual(func, primals, tangents, has_aux)
    # nested inside another transform: the double-vjp form, which is itself recorded
    xs, nested = _prepare(primals)
    outs, single, aux = _run(func, xs, has_aux, "jvp")
    with grad_mode.enable_grad():
        us = [Tensor(np.zeros_like(o.data), requires_grad=o.data.dtype.kind in "fc")
              for o in outs]
        g = _grads(outs, xs, us, create_graph=True)       # J^T u, recorded as a function of u
        tans = _grads(g, us, list(tangents), create_graph=nested)  # d<J^T u, v>/du = J v
    values = tuple(o if nested else o.detach() for o in outs)
    tans = tuple(t if nested else t.detach() for t in tans)
    res = (values[0], tans[0]) if single else (values, tans)
    return res + (aux,) if has_aux else res


def _jvp_dual(func, primals, tangents, has_aux):
    """One forward pass with dual numbers (autograd.forward_ad)."""
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


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) where vjp_fn(*cotangents) = cotangents^T J per primal."""
    for p in primals:
        if not isinstance(p, Tensor):
            raise TypeError(f"vjp: expected primals to be Tensors, got {type(p).__name__}")
    xs, nested = _prepare(primals)
    outs, single, aux = _run(func, xs, has_aux, "vjp")

    def vjp_fn(*cotangents):
        if single and len(cotangents) == 1 and isinstance(cotangents[0], Tensor):
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

    value = outs[0] if single else outs
    if not nested:
        value = value.detach() if single else tuple(o.detach() for o in outs)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def grad_and_value(func, argnums=0, has_aux=False):
    """Like `grad`, but also returns func's value: (grad, value)."""

    def wrapper(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        for n in nums:
            if not isinstance(args[n], Tensor):
                raise TypeError(f"grad: argument {n} must be a Tensor, got "
                                f"{type(args[n]).__name__}")
        xs, nested = _prepare([args[n] for n in nums])
        out, _, aux = _run(lambda *x: func(*_subst(args, nums, x), **kwargs), xs, has_aux,
                           "grad")
        out = out[0]
        if out.data.size != 1:
            raise RuntimeError("grad(f)(*args): Expected f(*args) to return a scalar Tensor, "
                               f"got {tuple(out.shape)}")
        gs = _grads([out], xs, [None], nested)
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
    """Jacobian by columns: one jvp per input element."""

    def wrapper(*args):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        primals = tuple(args[m] for m in nums)
        f = lambda *xs: func(*_subst(args, nums, xs))  # noqa: E731
        jacs = []
        for n in nums:
            x = args[n]
            cols, out = [], None
            for k in range(x.data.size):
                tangents = tuple(_one_hot_like(x, k) if m == n else _zeros(args[m])
                                 for m in nums)
                out, col = jvp(f, primals, tangents)
                cols.append(col)
            if out is None:
                out = f(*primals)
            shape = tuple(out.shape) + tuple(x.shape)
            jac = _stack(cols, (x.data.size,) + tuple(out.shape))  # (columns, *out)
            # move the column axis behind the output axes: J[out..., in...]
            nd = out.data.ndim
            jac = jac.permute(tuple(range(1, nd + 1)) + (0,)) if nd else jac
            jacs.append(jac.reshape(shape))
        return jacs[0] if isinstance(argnums, int) else tuple(jacs)

    return wrapper


def hessian(func, argnums=0):
    """The Hessian: the forward-mode Jacobian of the reverse-mode Jacobian (any output)."""
    return jacfwd(jacrev(func, argnums), argnums)


def _subst(args, nums, xs):
    args = list(args)
    for n, x in zip(nums, xs):
        args[n] = x
    return args

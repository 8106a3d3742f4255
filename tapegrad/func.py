"""Function transforms (`tapegrad.func`, shaped like `torch.func`): jvp, vjp, grad, vmap, ...

They turn a function of tensors into its derivative:
    jvp(f, primals, tangents) -> (f(x), J v)
    vjp(f, *primals)          -> (f(x), u -> u^T J)  reverse mode, reusable
    grad(f)(x)                -> df/dx               f returns a scalar
    jacrev(f) / jacfwd(f)     -> the Jacobian, by rows (vjps) / by columns (jvps)
    hessian(f)                -> jacfwd(jacrev(f)), for any output shape
    vmap(f, in_dims)(xs)      -> f mapped over a batch dimension (tapegrad/_func/vmap.py)
    functional_call, stack_module_state: modules as functions of their parameters
                                (tapegrad/_func/stateless.py)

Inputs and outputs are pytrees (tapegrad/_func/pytree.py): tuples, lists, dicts and
namedtuples of tensors, as in torch.func. `grad(f)({'w': w})` returns {'w': df/dw};
a Jacobian is nested output-structure first, then the structure of the arguments
(a tuple of them when argnums is a tuple).

Every transform is built from reverse mode, which nests to any depth: when the inputs
are themselves being differentiated (an outer transform is running), the inner
backward is recorded (create_graph=True), so grad(grad(f)), jacrev(jacfwd(f)) and
jacfwd(jacfwd(f)) work. `jvp` is one forward pass with dual numbers
(`autograd.forward_ad`) at the top level; inside another transform it uses the
double-vjp identity instead (g(u) = J^T u is linear in u, so d<g(u), v>/du = J v),
whose two reverse passes are themselves recorded and carry outer tangents.
"""
import numpy as np

from . import dtypes as _dt
from ._func import pytree
from ._func.stateless import functional_call, stack_module_state
from ._func.vmap import check_randomness, randomness_scope, vmap
from .autograd import forward_ad as fwAD
from .autograd.functional import _grads, _one_hot_like, _stack, _zeros
from .core import grad_mode
from .core.record import apply
from .ops.rules import shape as _S
from ._tensor import Tensor

__all__ = ["jvp", "vjp", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]


# ---- pytrees in, pytrees out ------------------------------------------------------------
def _tensor_leaves(tree):
    """The leaves of a tree of inputs to differentiate; all must be Tensors."""
    leaves, spec = pytree.flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return leaves, spec


def _output_leaves(out, head):
    """The leaves of func's output tree; all must be Tensors."""
    leaves, spec = pytree.flatten(out)
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{head}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    return leaves, spec


def _split_aux(out, has_aux, head):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{head}: output of function f should be a tuple: (output, aux) "
                           f"if has_aux is True")
    # NOTE: torch.func also rejects non-tensor leaves in aux; tapegrad passes them through
    return out


def _release(tree, nested):
    """What a transform hands back: detached from the inner graph at the top level, kept
    (still differentiable) when an outer transform is running."""
    if nested:
        return tree
    leaves, spec = pytree.flatten(tree)
    return pytree.unflatten([x.detach() if isinstance(x, Tensor) else x for x in leaves],
                            spec)


def _argnums(argnums, nargs):
    """argnums as a tuple of non-negative ints, validated as torch does."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(n, int) and not isinstance(n, bool)
                                            for n in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for n in nums:
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnum={n}, but only {nargs} positional inputs")
        out.append(n % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return tuple(out)


def _diff_args(func, args, kwargs, argnums):
    """The leaves of args[argnums], their structure, and func as a function of them."""
    nums = _argnums(argnums, len(args))
    tree = args[nums[0]] if isinstance(argnums, int) else tuple(args[n] for n in nums)
    leaves, spec = _tensor_leaves(tree)

    def f(*xs):
        t = pytree.unflatten(xs, spec)
        parts = (t,) if isinstance(argnums, int) else t
        return func(*_subst(args, nums, parts), **kwargs)

    return leaves, spec, f


def _prepare(primals):
    """Inputs to differentiate: an alias of each (so an outer transform still sees the
    graph) that requires grad; and whether the inner backward must be recorded."""
    nested = any(p._rg or p._fw is not None for p in primals)
    with grad_mode.enable_grad():
        xs = []
        for p in primals:
            if p._data.dtype.kind not in "fc":
                raise RuntimeError("only Tensors of floating point dtype can require "
                                   f"gradients (got an input of dtype {_dt.name(p._data.dtype)})")
            x = apply(_S.alias, p)
            x._version_counter = p._version_counter
            x._rg = True
            xs.append(x)
    return xs, nested


def _subst(args, nums, xs):
    args = list(args)
    for n, x in zip(nums, xs):
        args[n] = x
    return args


# ---- jvp ---------------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents); primals and tangents are tuples of pytrees of the
    same structure, the outputs pytrees shaped like func's."""
    head = "jvp(f, primals, tangents)"
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError(f"{head}: Expected primals to be a tuple. E.g. it should be valid "
                           f"to call f(*primals).")
    if not isinstance(tangents, (tuple, list)):
        raise RuntimeError(f"{head}: Expected tangents to be a tuple with the same length as "
                           f"primals")
    p_leaves, p_spec = _tensor_leaves(tuple(primals))
    t_leaves, t_spec = _tensor_leaves(tuple(tangents))
    if p_spec != t_spec:
        raise RuntimeError(f"{head}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {p_spec!r} and "
                           f"tangents with structure {t_spec!r}")
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{head}: Expected primals and tangents to have the same "
                               f"shape, got {tuple(p.shape)} and {tuple(t.shape)}")
    f = lambda *xs: func(*pytree.unflatten(xs, p_spec))  # noqa: E731
    values, tans, o_spec, aux = _jvp_leaves(f, p_leaves, t_leaves, has_aux, head)
    res = (pytree.unflatten(values, o_spec), pytree.unflatten(tans, o_spec))
    return res + (aux,) if has_aux else res


def _jvp_leaves(f, primals, tangents, has_aux, head):
    """(output leaves, tangent leaves, output structure, aux) of f at primals along
    tangents (lists of tensors)."""
    tangents = [t if t._data.dtype == p._data.dtype else t.to(p.dtype)
                for p, t in zip(primals, tangents)]
    if not any(p._rg or p._fw is not None for p in primals):
        return _jvp_dual(f, primals, tangents, has_aux, head)
    # nested inside another transform: the double-vjp form, which is itself recorded
    xs, nested = _prepare(primals)
    with grad_mode.enable_grad():
        out, aux = _split_aux(f(*xs), has_aux, head)
    outs, o_spec = _output_leaves(out, head)
    with grad_mode.enable_grad():
        us = [Tensor._of(np.zeros_like(o._data), requires_grad=o._data.dtype.kind in "fc")
              for o in outs]
        g = _grads(outs, xs, us, create_graph=True)       # J^T u, recorded as a function of u
        tans = _grads(g, us, list(tangents), create_graph=nested)  # d<J^T u, v>/du = J v
    values = [o if nested else o.detach() for o in outs]
    tans = [t if nested else t.detach() for t in tans]
    return values, tans, o_spec, _release(aux, nested)


def _jvp_dual(f, primals, tangents, has_aux, head):
    """One forward pass with dual numbers (autograd.forward_ad)."""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents)]
        out, aux = _split_aux(f(*duals), has_aux, head)
        outs, o_spec = _output_leaves(out, head)
        values, tans = [], []
        for o in outs:
            primal, tan = fwAD.unpack_dual(o)
            values.append(primal.detach())
            tans.append(tan if tan is not None else _zeros(o))
        aux = _strip_tangents(aux)
    return values, tans, o_spec, aux


def _strip_tangents(tree):
    leaves, spec = pytree.flatten(tree)
    return pytree.unflatten([fwAD.unpack_dual(x).primal.detach() if isinstance(x, Tensor)
                             else x for x in leaves], spec)


# ---- vjp / grad ------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) = cotangents^T J, a tuple with one
    pytree per primal; cotangents has the structure of func's output."""
    head = "vjp(f, *primals)"
    p_leaves, p_spec = _tensor_leaves(tuple(primals))
    xs, nested = _prepare(p_leaves)
    with grad_mode.enable_grad():
        out, aux = _split_aux(func(*pytree.unflatten(xs, p_spec)), has_aux, head)
    outs, o_spec = _output_leaves(out, head)

    def vjp_fn(*cotangents, retain_graph=True, create_graph=None):
        # torch takes one cotangent tree; several positional ones are read as a tuple
        cts = cotangents[0] if len(cotangents) == 1 else tuple(cotangents)
        c_leaves, c_spec = pytree.flatten(cts)
        if c_spec != o_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{c_spec!r}, primal output: {o_spec!r}")
        for o, c in zip(outs, c_leaves):
            if not isinstance(c, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(c)}")
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"vjp_fn: Mismatch in shape: cotangent has a shape of "
                                   f"{tuple(c.shape)} and output has a shape of "
                                   f"{tuple(o.shape)}.")
        record = nested or any(c._rg for c in c_leaves) if create_graph is None \
            else create_graph
        gs = _grads(outs, xs, c_leaves, record)
        return pytree.unflatten(gs, p_spec)

    value = _release(pytree.unflatten(outs, o_spec), nested)
    if has_aux:
        return value, vjp_fn, _release(aux, nested)
    return value, vjp_fn


def grad_and_value(func, argnums=0, has_aux=False):
    """Like `grad`, but also returns func's value: (grad, value), or
    (grad, (value, aux)) with has_aux."""
    head = "grad_and_value(f)(*args)"

    def wrapper(*args, **kwargs):
        leaves, spec, f = _diff_args(func, args, kwargs, argnums)
        xs, nested = _prepare(leaves)
        with grad_mode.enable_grad():
            out, aux = _split_aux(f(*xs), has_aux, head)
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{head}: Expected f(*args) to return a Tensor, got {type(out)}")
        if out._data.ndim != 0:
            raise RuntimeError(f"{head}: Expected f(*args) to return a scalar Tensor, got "
                               f"tensor with {out._data.ndim} dims. Maybe you wanted to use "
                               f"the vjp or jacrev APIs instead?")
        gs = _grads([out], xs, [None], nested)
        g = pytree.unflatten(gs, spec)
        value = out if nested else out.detach()
        return (g, (value, _release(aux, nested))) if has_aux else (g, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """grad(f)(*args): the gradient of the scalar f(*args) w.r.t. args[argnums] (a pytree
    shaped like that argument; a tuple of them when argnums is a tuple)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# ---- Jacobians ---------------------------------------------------------------------------
def _nest(out_leaves, o_spec, jac, in_spec):
    """The Jacobian tree: output structure outside, the arguments' structure inside;
    jac[a][b] is d out_a / d in_b."""
    return pytree.unflatten([pytree.unflatten(jac[a], in_spec) for a in range(len(out_leaves))],
                            o_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """Jacobian by reverse mode: one vjp per output element (rows). `chunk_size` (how
    many rows torch batches at once) is accepted and has no effect."""
    head = "jacrev(f, ...)(*args)"
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args, **kwargs):
        leaves, in_spec, f = _diff_args(func, args, kwargs, argnums)
        xs, nested = _prepare(leaves)
        with grad_mode.enable_grad():
            out, aux = _split_aux(f(*xs), has_aux, head)
        outs, o_spec = _output_leaves(out, head)
        jac = []
        for o in outs:
            rows = [[] for _ in xs]
            for k in range(o._data.size):
                for j, g in enumerate(_grads([o], xs, [_one_hot_like(o, k)], nested)):
                    rows[j].append(g)
            jac.append([_stack(r, tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, xs)])
            if not nested:
                jac[-1] = [j.detach() for j in jac[-1]]
        res = _nest(outs, o_spec, jac, in_spec)
        return (res, _release(aux, nested)) if has_aux else res

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Jacobian by columns: one jvp per input element. `randomness` as vmap's (torch
    runs the columns under vmap): 'error' forbids random ops in func."""
    head = "jacfwd(f, ...)(*args)"
    check_randomness(randomness)

    def wrapper(*args, **kwargs):
        leaves, in_spec, f = _diff_args(func, args, kwargs, argnums)
        cols = [[] for _ in leaves]  # cols[b][k]: tangent leaves for column k of input b
        values = o_spec = aux = None
        with randomness_scope(randomness) as scope:
            for b, x in enumerate(leaves):
                for k in range(x._data.size):
                    tangents = [_one_hot_like(x, k) if m == b else _zeros(y)
                                for m, y in enumerate(leaves)]
                    scope.element()
                    values, tans, o_spec, aux = _jvp_leaves(f, leaves, tangents, has_aux, head)
                    cols[b].append(tans)
            if values is None:  # no input elements: one call for the output's shape
                scope.element()
                values, _, o_spec, aux = _jvp_leaves(f, leaves, [_zeros(y) for y in leaves],
                                                     has_aux, head)
        jac = []
        for a, o in enumerate(values):
            row = []
            for b, x in enumerate(leaves):
                stacked = _stack([c[a] for c in cols[b]], (x._data.size,) + tuple(o.shape))
                nd = o._data.ndim  # move the column axis behind the output axes
                if nd:
                    stacked = stacked.permute(tuple(range(1, nd + 1)) + (0,))
                row.append(stacked.reshape(tuple(o.shape) + tuple(x.shape)))
            jac.append(row)
        res = _nest(values, o_spec, jac, in_spec)
        return (res, aux) if has_aux else res

    return wrapper


def hessian(func, argnums=0):
    """The Hessian: the forward-mode Jacobian of the reverse-mode Jacobian (any output)."""
    return jacfwd(jacrev(func, argnums), argnums)

"""Strict mode: check every backward rule against finite differences the first time it runs.

    tg.autograd.set_strict(True)          # or: with tg.autograd.strict(): ...
    loss.backward()                       # each rule is checked once per
                                          # (op, input shapes, dtypes, argument)

A wrong rule in the table (or in a custom Function) silently trains a model in a wrong
direction. In strict mode the engine hands every gradient a rule computes to a checker
(an observer of the walk, installed in this thread's `state.observers` through
`backward_checks`). The first time a
rule runs for a given op, input shapes and dtypes, the checker

1. checks the gradient's SHAPE and DTYPE: the rule's result must be a broadcast of the
   input's shape (the engine sums it back), and must not be wider than the dtypes
   involved (a float64 gradient for float32 data and gradient is an accidental upcast);
2. checks its VALUE: in float64, on the saved inputs of this node alone,

       rule(g, x)[j]  ~  ( <g, op(x + h e_j)> - <g, op(x - h e_j)> ) / (2h)

   i.e. the vector-Jacobian product against a central difference of <g, op(x)>, for
   every element j of the input (at most 24 sampled elements of a large input). At a
   kink (relu at 0, max at a tie) the one-sided differences disagree; such elements
   are skipped, since any subgradient is a valid answer there.

Exemptions are part of each op's entry (`Op.strict`, ops/registry.py): a predicate on
the node's arguments for rules that are deliberately not the derivative there (embedding
with padding_idx: the padding row gets no gradient), or a reason string for ops whose
forward cannot be re-run (checkpoint: its recomputation is checked op by op instead).

A failure raises `StrictModeError` naming the op and the argument, the element, the
rule's value and the finite difference. The checks cost a few forward evaluations of
one op per new (op, shapes, dtypes) key, so a training loop pays only in its first step.

Strict mode is per thread, like grad mode: switching it on checks the backward passes
run by this thread only (the cache of checked keys is shared: a rule checked once in
any thread is not checked again).
"""
import threading

import numpy as np

from .. import dtypes as _dt
from ..core import grad_mode
from ..core.backward import grad as _grad
from ..core.engine import sum_to
from ..core.standin import is_stub
from ..core.tensor_base import TensorBase, like
from . import backward_checks

__all__ = ["set_strict", "strict", "is_strict_enabled", "StrictModeError",
           "reset_strict_cache"]


class StrictModeError(RuntimeError):
    """A backward rule's gradient has the wrong shape, dtype or value."""


class _ThreadState(threading.local):
    """Strict mode is per thread, like grad mode and the walk's observers (core/state.py):
    `strict()` in one thread checks only the backward passes that thread runs."""

    def __init__(self):
        self.enabled = False
        self.busy = False  # inside the check's own backward passes


_state = _ThreadState()
_checked = set()
_MAX_ELEMENTS = 24
_rng = np.random.default_rng(0)


def is_strict_enabled():
    return _state.enabled


def reset_strict_cache():
    """Forget which (op, shapes, dtypes) were checked, so they are checked again."""
    _checked.clear()


def _set(mode):
    _state.enabled = bool(mode)
    if mode:
        backward_checks.install("strict", _check)
    else:
        backward_checks.uninstall("strict")


class set_strict:
    """`set_strict(True)` turns strict mode on now; as a context manager it restores the
    previous mode on exit (like `set_grad_enabled`)."""

    def __init__(self, mode=True):
        self._prev = _state.enabled
        _set(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False


class strict:
    """Context manager (and decorator): strict mode inside the block."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = _state.enabled
        _set(self.mode)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with strict(self.mode):
                return fn(*args, **kwargs)
        return wrapper


# ---- the check ----------------------------------------------------------------------

def _raw(a):
    return a._data if isinstance(a, TensorBase) else a


def _value(t):
    """An input's values for re-running the forward in float64. A stand-in (NaN: the
    node kept no values, core/standin.py) becomes zeros: the op's rules read no values
    of that input (`edges_only`), so the op is affine in it and any point checks the
    rule; at NaN every finite difference would be NaN and nothing would be checked."""
    a = _raw(t)
    return np.zeros(a.shape, a.dtype) if is_stub(a) else a


def _arg_name(op, i):
    return op.input_names[i] if i < len(op.input_names) else f"input{i}"


def _key(node, i):
    shapes, dtypes = [], []
    for t in node.inputs:
        a = _raw(t)
        if isinstance(a, np.ndarray):
            shapes.append(a.shape)
            dtypes.append(a.dtype.str)
        else:
            shapes.append(type(a).__name__)
            dtypes.append(None)
    return (node.op.name, tuple(shapes), tuple(dtypes), i)


def _check(node, i, g, gi):
    op = node.op
    if node.inputs is None or op.strict_exempt(node.args) is not None:
        return
    if _state.busy:
        return  # the check's own backward passes (custom Functions) are not checked
    key = _key(node, i)
    if key in _checked:
        return
    _checked.add(key)
    x = _raw(node.inputs[i])
    gi = np.asarray(_raw(gi))
    _state.busy = True
    try:
        if node.op.vjps is None and "ctx" not in (node.saved or {}):
            return  # split/unbind pieces (a concatenation): compared with torch in the opdb
        if node.op.vjps is None:  # a custom Function (one backward, no per-input rules)
            gd = [np.asarray(_raw(gk)) for gk in _per_output(node, g) if gk is not None]
            _check_shape_dtype(op, i, x, np.result_type(*gd) if gd else gi.dtype, gi)
            _check_function(node, i, x, g)
        else:
            g = np.asarray(_raw(g))
            _check_shape_dtype(op, i, x, g.dtype, gi)
            _check_value(node, i, x, g)
    finally:
        _state.busy = False


def _where(op, i, x):
    return (f"the backward rule of '{op.name}' for its argument {i} "
            f"('{_arg_name(op, i)}', shape {tuple(x.shape)}, {_dt.name(x.dtype)})")


def _check_shape_dtype(op, i, x, g_dtype, gi):
    try:
        ok = np.broadcast_shapes(gi.shape, x.shape) == gi.shape
    except ValueError:
        ok = False
    if not ok:
        raise StrictModeError(
            f"strict mode: {_where(op, i, x)} returned a gradient of shape "
            f"{tuple(gi.shape)}, which is not the input's shape or a broadcast of it")
    if gi.dtype.kind not in "fc":
        raise StrictModeError(f"strict mode: {_where(op, i, x)} returned a gradient of "
                              f"dtype {_dt.name(gi.dtype)}; gradients are floating point")
    widest = np.result_type(x.dtype, g_dtype) if x.dtype.kind in "fc" else g_dtype
    if np.dtype(gi.dtype).itemsize > np.dtype(widest).itemsize:
        raise StrictModeError(
            f"strict mode: {_where(op, i, x)} returned a {_dt.name(gi.dtype)} gradient from "
            f"a {_dt.name(g_dtype)} incoming gradient: an upcast (a {_dt.name(gi.dtype)} "
            f"constant in the rule?); the engine would cast it back, at the cost of "
            f"computing in {_dt.name(gi.dtype)}")


def _per_output(node, g):
    """The incoming gradient per output (a node with several outputs gets a list)."""
    return list(g) if node.op.n_outputs != 1 else [g]


def _to64(a):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.astype(np.float64)
    return a


class _LowPrecision(Exception):
    """The op computes in a fixed dtype narrower than float64 even on float64 inputs."""


def _check_value(node, i, x, g):
    """A table op: re-run its forward and its rule in float64 on this node's inputs."""
    op = node.op
    rule = op.vjps[i]
    fkw = node.args
    xs = [_to64(_value(t)) for t in node.inputs]
    if not isinstance(xs[i], np.ndarray):
        return

    def f(args):
        with np.errstate(all="ignore"):
            out = op.forward(*args, **fkw)
        extra = {}
        if op.has_extra:
            out, extra = out
        out = np.asarray(out)
        if out.dtype.kind == "f" and out.dtype != np.float64:
            raise _LowPrecision(out.dtype)
        return out.astype(np.float64), extra

    g64 = g.astype(np.float64)
    try:
        ans, extra = f(xs)
        with np.errstate(all="ignore"):
            an = rule(np, g64, ans, *xs, **{**fkw, **extra})
    except _LowPrecision:
        return  # the op's output dtype is fixed (a cast to float32): no float64 check
    except Exception as e:  # a forward that cannot be re-run in float64
        _cannot(op, e)
        return
    an = sum_to(np, np.asarray(an, dtype=np.float64), x.shape)

    def outputs(xi):
        args = list(xs)
        args[i] = xi
        return [f(args)[0]]
    _compare(node, i, x, xs[i], an, [g64], [ans], outputs)


def _cannot(op, e):
    import warnings
    warnings.warn(f"strict mode: could not re-run '{op.name}' in float64 to check its "
                  f"rule ({type(e).__name__}: {e}); not checked", stacklevel=5)


def _check_function(node, i, x, g):
    """A custom `Function`: run the user's forward/backward again on float64 copies of
    this node's inputs (through `apply`, so a multi-output Function works too)."""
    cls = node.saved["ctx"]._cls
    base = [like(t, _to64(t._data)) if isinstance(t, TensorBase) else t for t in node.inputs]
    gs = [None if gk is None else np.asarray(_raw(gk), dtype=np.float64)
          for gk in _per_output(node, g)]

    def run(xi, record=False):
        args = list(base)
        args[i] = like(base[i], xi, record)
        with grad_mode.set_grad_enabled(record), np.errstate(all="ignore"):
            res = cls.apply(*args)
        res = list(res) if isinstance(res, tuple) else [res]
        return args[i], res

    try:
        leaf, res = run(base[i]._data.copy(), record=True)
        pairs = [(r, gk) for r, gk in zip(res, gs)
                 if gk is not None and isinstance(r, TensorBase) and r.requires_grad]
        if not pairs:
            return
        (an,) = _grad([r for r, _ in pairs], [leaf], [gk for _, gk in pairs],
                      allow_unused=True)
    except Exception as e:
        _cannot(node.op, e)
        return
    an = np.zeros(x.shape) if an is None else an._data.astype(np.float64)
    keep = [k for k, gk in enumerate(gs) if gk is not None]

    def outputs(xi):
        res = run(xi)[1]
        return [np.asarray(res[k]._data, dtype=np.float64) for k in keep]
    _compare(node, i, x, base[i]._data, an, [gs[k] for k in keep],
             [np.asarray(res[k]._data, dtype=np.float64) for k in keep], outputs)


def _compare(node, i, x, xi, an, gs, ans, outputs):
    """rule (an) vs central differences of sum_k <g_k, out_k(x_i)>, element by element."""
    op = node.op
    n = xi.size
    idx = range(n) if n <= _MAX_ELEMENTS else _rng.choice(n, _MAX_ELEMENTS, replace=False)
    eps = np.finfo(np.float64).eps
    for j in idx:
        j = int(j)
        v = xi.flat[j]
        if not np.isfinite(v):
            continue
        h = 1e-6 * max(1.0, abs(v))
        xp_, xm_ = xi.copy(), xi.copy()
        xp_.flat[j] = v + h
        xm_.flat[j] = v - h
        fd = fwd = bwd = scale = 0.0
        with np.errstate(all="ignore"):
            for g64, a0, op_, om_ in zip(gs, ans, outputs(xp_), outputs(xm_)):
                dp, dm = op_ - a0, a0 - om_
                fd += np.sum(g64 * (dp + dm)) / (2 * h)
                fwd += np.sum(g64 * dp) / h
                bwd += np.sum(g64 * dm) / h
                touched = (dp != 0) | (dm != 0)
                scale += np.sum(np.abs(g64) * np.abs(a0) * touched)
        a = an.flat[j]
        if not (np.isfinite(fd) and np.isfinite(a) and np.isfinite(fwd) and np.isfinite(bwd)):
            continue  # outside the domain or infinite: anomaly mode's business
        atol = 1e-7 + 1e3 * eps * scale / h
        rtol = 1e-4
        if abs(fwd - bwd) > atol + 1e-3 * max(abs(fwd), abs(bwd)):
            continue  # a kink at this point: every subgradient is acceptable
        if abs(fd - a) > atol + rtol * max(abs(fd), abs(a)):
            index = tuple(int(k) for k in np.unravel_index(j, x.shape))
            raise StrictModeError(
                f"strict mode: {_where(op, i, x)} disagrees with finite differences: at "
                f"index {index} the rule gives {a:.10g}, the central difference of "
                f"<g, {op.name}(...)> gives {fd:.10g} (abs error {abs(fd - a):.3g}). "
                f"Inputs of this {op.name}: "
                + ", ".join(f"{_arg_name(op, k)}: "
                            + (f"{tuple(t.shape)} {t.dtype}" if isinstance(t, np.ndarray)
                               else repr(t)) for k, t in enumerate(map(_raw, node.inputs)))
                + (f"; created at {node.site}" if node.site else ""))

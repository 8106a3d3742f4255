"""Anomaly mode: blame the first backward rule that produced nan (or inf).

    with tg.autograd.detect_anomaly():
        y = tg.sqrt(x * x)      # x = 0
        y.backward()            # RuntimeError: Function 'sqrt' returned inf values ...
                                #   created at my_script.py:3

While anomaly mode is on, every op records where it was created ("file:line", the
first stack frame outside tapegrad) in `node.site`, and every gradient a rule
computes is checked. The first rule whose result is not finite raises a
RuntimeError naming the op, its creation site and the offending values (the inputs,
the output, the incoming gradient and the result at the first bad positions).

Which op is blamed. A backward rule computes `g * f'(x)`. In `sqrt(x*x)` at x = 0,
sqrt's rule gives `1 * 1/(2*sqrt(0)) = inf` from a finite gradient; then mul's rule
gives `inf * 0 = nan`. By default (`check_inf=True`) tapegrad names the first rule
whose result is nan OR inf: `sqrt`, where the problem starts (lesson 5: sqrt(x*x) at 0).
PyTorch's anomaly mode checks for nan only and names `MulBackward0`, where the nan
first appears; `detect_anomaly(check_inf=False)` reproduces that choice.

The masked-`where` pattern: `where(x > 0, sqrt(x), 0)` at x = 0 sends gradient 0
into sqrt (the branch not taken), and sqrt's rule computes `0 * inf = nan`. The
error message recognises a zero incoming gradient arriving through `where` and says
how to fix it (make the input safe before the op: `sqrt(where(x > 0, x, 1))`).

The "Note:" line of the message is the op's `hint`, from its table entry (or from
the custom Function / checkpoint that made the node): where its derivative is
infinite and the usual fix.

The check costs an `isnan`/`isfinite` pass over every gradient and a stack walk per
op, so it is off by default (PyTorch warns about the same cost).

Anomaly mode is per thread, like grad mode: `detect_anomaly()` in one thread records
sites and checks gradients in that thread's ops and backward passes only, and a new
thread starts with it off. NOTE: PyTorch keeps this one flag process-wide (a thread
started inside `detect_anomaly()` sees `is_anomaly_enabled()` True); here the flag, the
site recording and the walk's observers all live in the thread's state, so two threads
switching it on and off cannot leave each other half-enabled.
"""
import threading
import warnings
import weakref

import numpy as np

from ..core.state import state
from ..core.standin import is_stub
from ..core.tensor_base import TensorBase
from . import backward_checks

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

class _ThreadState(threading.local):
    """Anomaly mode is per thread (see the module docstring): its flags, and the nodes
    whose output gradient arrived through a `where` (node -> (where site, branch))."""

    def __init__(self):
        self.enabled = False
        self.check_nan = True
        self.check_inf = True
        self.masked_by = weakref.WeakKeyDictionary()

    def settings(self):
        return self.enabled, self.check_nan, self.check_inf


_state = _ThreadState()



def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.enabled and _state.check_nan


def _set(enabled, check_nan, check_inf):
    """Switch this thread's state; keep site recording and the engine hook in step."""
    was = _state.enabled
    _state.enabled, _state.check_nan = bool(enabled), bool(check_nan)
    _state.check_inf = bool(check_inf)
    if _state.enabled and not was:
        state.record_sites += 1
    elif was and not _state.enabled:
        state.record_sites -= 1
    if _state.enabled and _state.check_nan:
        backward_checks.install("anomaly", _check)
    else:
        backward_checks.uninstall("anomaly")
        _state.masked_by.clear()


_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.")


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on inside its block.

    check_nan: raise in backward when a rule produces nan (PyTorch's flag; False only
        records creation sites).
    check_inf: also count inf as an anomaly (tapegrad's default, so the op where the
        infinity starts is blamed); False blames the first nan, as PyTorch does.
    """

    def __init__(self, check_nan=True, check_inf=True):
        self.check_nan = check_nan
        self.check_inf = check_inf
        warnings.warn(_WARNING, stacklevel=2)

    def __enter__(self):
        self._prev = _state.settings()
        _set(True, self.check_nan, self.check_inf)
        return self

    def __exit__(self, *exc):
        _set(*self._prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan, self.check_inf):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """`set_detect_anomaly(True)` turns anomaly mode on now (until switched off); used as
    a context manager it restores the previous mode on exit, like PyTorch's."""

    def __init__(self, mode, check_nan=True, check_inf=True):
        self._prev = _state.settings()
        _set(mode, check_nan, check_inf)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self._prev)
        return False


# ---- the check run on every computed gradient ---------------------------------------

def _raw(a):
    return a._data if isinstance(a, TensorBase) else a


def _bad(a, check_inf):
    """Boolean mask of anomalous entries (None if there are none)."""
    a = np.asarray(a)
    if a.dtype.kind not in "fc":
        return None
    m = ~np.isfinite(a) if check_inf else np.isnan(a)
    return m if m.any() else None


def _check(node, i, g, gi):
    op = node.op
    if op.name == "where" and node.inputs is not None:
        t = node.inputs[i]
        p = getattr(t, "grad_fn", None)
        if p is not None:
            _state.masked_by[p] = (node.site, i)
    check_inf = _state.check_inf
    gia = _raw(gi)
    bad = _bad(gia, check_inf)
    if bad is None:
        return
    raise RuntimeError(_message(node, i, _raw(g), np.asarray(gia), bad, check_inf))


def _ordinal(i):
    return f"{i}{'th' if 10 <= i % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(i % 10, 'th')}"


def _fmt(v):
    try:
        return f"{float(v):.6g}"
    except (TypeError, ValueError):
        return repr(v)


def _at(a, shape, idx):
    """The value of `a` (broadcast to `shape`) at `idx`, or None if it does not broadcast."""
    if a is None:
        return None
    if not isinstance(a, np.ndarray):
        return a if np.isscalar(a) else None
    try:
        return np.broadcast_to(a, shape)[idx]
    except ValueError:
        return None


def _message(node, i, g, gi, bad, check_inf):
    op = node.op
    names = op.input_names
    ins = node.inputs or ()
    in_name = names[i] if i < len(names) else f"input{i}"
    kinds = []
    if np.isnan(gi[bad]).any():
        kinds.append("nan")
    if np.isinf(gi[bad]).any():
        kinds.append("inf")
    what = " and ".join(kinds)
    g = np.asarray(g)
    g_bad = _bad(g, check_inf)
    lines = [f"Function '{op.name}' returned {what} values in its {_ordinal(i)} output "
             f"(the gradient for its input '{in_name}')"
             + ((" although the incoming gradient was finite." if check_inf else
                 " although the incoming gradient had no nan.") if g_bad is None else
                ". Its incoming gradient already contained non-finite values: they came "
                "from the gradient passed to backward(), a hook, or a sum of gradients "
                "(inf + -inf), not from an earlier rule.")]
    lines.append(f"  created at {node.site}" if node.site else
                 "  created at <unknown: build the graph inside detect_anomaly() to record "
                 "where each op was created>")
    idxs = [tuple(ix) for ix in np.argwhere(bad)]  # argwhere works for 0-d too
    shape = gi.shape
    lines.append(f"  {int(bad.sum())} of {gi.size} entries are non-finite; first "
                 f"{min(len(idxs), 5)}:")
    zero_g = True
    for idx in idxs[:5]:
        parts = []
        for k, t in enumerate(ins):
            v = None if is_stub(_raw(t)) else _at(_raw(t), shape, idx)
            if v is not None:
                parts.append(f"{names[k] if k < len(names) else f'input{k}'} = {_fmt(v)}")
        v = None if is_stub(node.ans) else _at(node.ans, shape, idx)  # values not kept
        if v is not None:
            parts.append(f"output = {_fmt(v)}")
        gv = _at(g, shape, idx)
        if gv is not None:
            parts.append(f"incoming gradient = {_fmt(gv)}")
            zero_g = zero_g and gv == 0
        else:
            zero_g = False
        parts.append(f"gradient for {in_name} = {_fmt(gi[idx])}")
        lines.append(f"    at index {tuple(int(j) for j in idx)}: " + ", ".join(parts))
    if op.hint:  # the op's own entry says where its derivative blows up (ops/registry.py)
        lines.append(f"  Note: {op.hint}.")
    if zero_g and np.isnan(gi[bad]).any():
        masked = _state.masked_by.get(node)
        if masked is not None:
            site, branch = masked
            lines.append(
                "  The incoming gradient is exactly 0 at these positions: this is the "
                "masked-`where` pattern. The gradient reached this op through `where`"
                + (f" (created at {site})" if site else "")
                + f", whose {'first' if branch == 1 else 'second'} branch is masked out "
                "there; `where(cond, f(x), y)` still differentiates f at the masked "
                "entries, and 0 * inf = nan leaks into the gradient. Fix: make the input "
                "safe before the op, e.g. where(cond, f(where(cond, x, 1.0)), y).")
        else:
            lines.append("  The incoming gradient is exactly 0 at these positions, so the "
                         "nan is 0 * inf: the local derivative is infinite there.")
    kept = [names[k] if k < len(names) else f"input{k}" for k, t in enumerate(ins)
            if is_stub(_raw(t))] + (["output"] if is_stub(node.ans) else [])
    if kept and np.isnan(gi[bad]).any():
        lines.append(f"  This node keeps no values of {', '.join(kept)} (NaN stand-ins, "
                     f"core/standin.py), as the op's `reads`/`edges_only` declaration says "
                     f"its rules read none: if the rule read one, the declaration of "
                     f"'{op.name}' is wrong.")
    if not check_inf:
        lines.append("  (nan-only check, as PyTorch's anomaly mode: an earlier rule may have "
                     "produced the inf that became this nan; detect_anomaly(check_inf=True) "
                     "names it.)")
    return "\n".join(lines)

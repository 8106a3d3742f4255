"""The stepper page's finite-difference check: each leaf's gradient against central
differences of the root, computed when the page is written.

The root is recomputed by REPLAYING the recorded graph: every node's table forward
(`op.forward`, the function `apply` ran) on its recorded arguments, children first; a
`Value` graph is rebuilt with the same `Value` operations its `_op` labels name. Nothing
is re-derived by hand. A replay that does not give the root's value back (a random op,
an in-place change since recording, a hand-written `_backward`) is reported as such and
no check is made. Tensor graphs are replayed in float64 (float leaves cast), so the
differences measure the rule, not float32 rounding. At most `PER_LEAF` elements of each
leaf are checked, spread over the leaf, fewer when there are many leaves (`BUDGET`
replays in all, and at most `SECONDS`).
"""
import time

import numpy as np

from ..core.tensor_base import TensorBase
from ..value import Value

__all__ = ["replay_values", "tensor_fd", "value_fd", "compare"]

PER_LEAF = 6
BUDGET = 400     # forward replays for all leaves together (each element costs two)
SECONDS = 20     # and at most this long: the remaining leaves are reported unchecked


def _replay(entries, index, override=None, f64=False):
    """{entry index: array (or tuple of arrays)} for every entry of the graph."""
    with np.errstate(all="ignore"):  # a step across a kink or a pole may give inf/nan
        return _replay_values(entries, index, override, f64)


def _replay_values(entries, index, override, f64):
    vals = {}
    for k, e in enumerate(entries):
        obj = e["obj"]
        if e["kind"] != "op":
            a = override[k] if override and k in override else obj._data
            vals[k] = a.astype(np.float64) if f64 and a.dtype.kind == "f" else a
            continue
        arrays = []
        for t in obj.inputs:
            if isinstance(t, TensorBase):
                p = t.grad_fn
                if p is None:
                    arrays.append(vals[index[id(t)]])
                else:
                    v = vals[index[id(p)]]
                    arrays.append(v[t._out - 1] if t._out else v)
            else:
                arrays.append(t)
        out = obj.op.forward(*arrays, **(obj.args or {}))
        if obj.op.has_extra:
            out = out[0]
        vals[k] = tuple(np.asarray(o) for o in out) if obj.op.n_outputs > 1 else np.asarray(out)
    return vals


def replay_values(entries, index):
    """The forward values of every node (the recorded `ans` may be a data-free stand-in,
    core/standin.py); {} if the graph cannot be replayed."""
    try:
        return _replay(entries, index)
    except Exception:  # an op the replay cannot run: the page shows the recorded values
        return {}


def _root_value(vals, root, index):
    p = root.grad_fn
    if p is None:
        return vals[index[id(root)]]
    v = vals[index[id(p)]]
    return v[root._out - 1] if root._out else v


def _spread(size, most=None):
    n = min(size, PER_LEAF if most is None else most)
    return sorted(set(np.linspace(0, size - 1, n).round().astype(int).tolist())) if n else []


def tensor_fd(entries, index, root, gradient, enabled=True):
    """{leaf entry index: {"idx": flat indices, "fd": differences} or {"note": why not}}."""
    leaves = [k for k, e in enumerate(entries) if e["kind"] == "leaf"]
    if not enabled:
        return {k: {"note": "not computed (fd=False)"} for k in leaves}
    try:
        native = _root_value(_replay(entries, index), root, index)
        same = np.allclose(native, root._data, rtol=1e-5, atol=1e-7, equal_nan=True)
    except Exception as e:  # noqa: BLE001 - reported on the page
        return {k: {"note": f"the graph cannot be replayed ({type(e).__name__}: {e})"}
                for k in leaves}
    if not same:
        return {k: {"note": "replaying the recorded ops does not give the root's value "
                            "(a custom autograd.Function or a checkpoint, whose forward the "
                            "graph does not hold; a random op; a tensor changed in place "
                            "since): no check"}
                for k in leaves}
    seed = np.ones(()) if gradient is None else np.asarray(
        getattr(gradient, "_data", gradient), dtype=np.float64)

    def f(override):
        return float(np.sum(seed * _root_value(_replay(entries, index, override, True),
                                               root, index)))

    out = {}
    # a budget of forward replays: a model with many parameter tensors gets fewer
    # elements checked per leaf (at least one) instead of a page that takes minutes
    per_leaf = max(1, min(PER_LEAF, BUDGET // max(1, 2 * len(leaves))))
    start = time.monotonic()
    for k in leaves:
        x = entries[k]["obj"]._data
        if x.dtype.kind != "f":
            out[k] = {"note": f"a {x.dtype} leaf has no finite differences"}
            continue
        if time.monotonic() - start > SECONDS:
            out[k] = {"note": f"not checked: the check's {SECONDS} s were spent on the "
                              "leaves above (stepper(..., fd=False) skips it)"}
            continue
        x64 = x.astype(np.float64)
        idx, fds = _spread(x.size, per_leaf), []
        for i in idx:
            h = 1e-6 * max(1.0, abs(float(x64.flat[i])))
            xp_, xm = x64.copy(), x64.copy()
            xp_.flat[i] += h
            xm.flat[i] -= h
            fds.append((f({k: xp_}) - f({k: xm})) / (2 * h))
        out[k] = {"idx": idx, "fd": fds, "dtype": str(x.dtype)}
    return out


_VALUE_OPS = {"+": lambda a, b: a + b, "*": lambda a, b: a * b, "**": lambda a, b: a ** b,
              "exp": Value.exp, "tanh": Value.tanh, "sigmoid": Value.sigmoid,
              "sqrt": Value.sqrt, "ReLU": Value.relu, "log": Value.log, "abs": Value.abs,
              "sin": Value.sin, "cos": Value.cos}


def _value_op(v):
    op = v._op
    if op in _VALUE_OPS:
        return _VALUE_OPS[op]
    if op.startswith("**") and len(op) > 2:
        k = op[2:]
        try:
            c = int(k)
        except ValueError:
            c = float(k)
        return lambda a: a ** c
    return None


def value_fd(root, order, leaves, enabled=True):
    """One check dict per leaf dict (`leaves`, with "id", "grad", "before"), in order."""
    if not enabled:
        return [{"note": "not computed (fd=False)"} for _ in leaves]
    ops = [v for v in order if v._op or v._children]
    bad = [v._op or "a hand-built node" for v in ops if _value_op(v) is None
           or len(v._children) not in (1, 2) or getattr(v, "_bw", None)]
    if bad:
        return [{"note": f"the graph has {bad[0]!r}, which the check cannot replay"}
                for _ in leaves]
    pos = {v: k for k, v in enumerate(order)}

    def f(k_leaf, x):
        vals = []
        for k, v in enumerate(order):
            if not (v._op or v._children):
                vals.append(Value(x if k == k_leaf else v.item()))
                continue
            vals.append(_value_op(v)(*[vals[pos[c]] for c in v._children]))
        return vals[pos[root]].item()

    leaf_pos = [k for k, v in enumerate(order) if not (v._op or v._children)]
    if abs(f(-1, 0.0) - root.item()) > 1e-12 * max(1.0, abs(root.item())):
        return [{"note": "replaying the graph does not give the root's value: no check"}
                for _ in leaves]
    out = []
    start = time.monotonic()
    for k in leaf_pos:
        if time.monotonic() - start > SECONDS:
            out.append({"note": f"not checked: the check's {SECONDS} s were spent on the "
                                "leaves above (stepper(..., fd=False) skips it)"})
            continue
        x = order[k].item()
        h = 1e-6 * max(1.0, abs(x))
        out.append({"idx": [0], "fd": [(f(k, x + h) - f(k, x - h)) / (2 * h)],
                    "dtype": "float64"})
    return out


def compare(check, grad, before, dtype):
    """The check as shown: {"text", "ok", "max_err"} from the differences and the leaf's
    gradient of this pass (`grad` minus the `.grad` it had before)."""
    if check is None or "note" in check:
        return {"text": (check or {}).get("note", "no check"), "ok": None, "max_err": None}
    if grad is None:
        return {"text": "no gradient reached this leaf", "ok": None, "max_err": None}
    g = np.asarray(grad, dtype=np.float64).reshape(-1)
    if before is not None:
        g = g - np.asarray(before, dtype=np.float64).reshape(-1)
    errs, scale, odd = [], 1.0, []
    for i, d in zip(check["idx"], check["fd"]):
        gi = float(g[i])
        if not (np.isfinite(gi) and np.isfinite(d)):  # an infinite or undefined derivative
            odd.append(f"element {i}: grad {gi}, differences {d}")
            continue
        errs.append(abs(gi - d))
        scale = max(scale, abs(gi), abs(d))
    tol = (1e-5 if check["dtype"] == "float64" else 1e-3) * scale
    err = max(errs) if errs else None
    ok = bool(err <= tol) if errs else None
    text = (f"{'ok' if ok else 'MISMATCH'}: {len(errs)} of {g.size} element(s) checked, "
            f"max |grad - fd| = {err:.2e} (tolerance {tol:.1e})") if errs else "no check"
    if odd:
        text += "; not finite, not checked: " + "; ".join(odd)
    return {"text": text, "ok": ok, "max_err": err}

"""Step through backprop: `tg.viz.stepper(root, path)` writes one self-contained HTML page.

    page = tg.viz.stepper(loss, "backprop.html")   # runs loss.backward() and watches it
    page.steps[0]["name"], page.leaves[0]["grad"]  # the same data as the page shows
    page                                           # in a notebook: the page, inline

The page shows the forward values first, then one step per node in the order the
engine ACTUALLY ran them (it is recorded while `backward` runs, not re-derived): the
node highlighted in the graph, its local rule as the op table states it (the text
`tg.explain` prints), the gradient arriving at its output, each input's share, the share
summed back to the input's shape where broadcasting stretched the input, the running
sum at a value used more than once, and the leaves' `.grad` filling in. Buttons
(reset, back, play, next) and keys (Left/Right, Home/End, Space) move through it.
Below: every leaf's final `.grad` (exact, in `data-grad` of its `[data-leaf]` row) and
a central finite-difference check of it, computed when the page is written.

How the walk is watched:
    Value   `value.run_backward(root, observer)`: the observer is called after each
            contribution is added into a child's `.grad` (what `tg.explain` narrates).
    Tensor  the walk's observer slot (`state.observers`, installed through
            `autograd.backward_checks` as anomaly mode and `tg.explain` do): called with
            (node, input index, gradient at the node's output, the rule's result) for
            every input gradient, in the engine's order. The share is then summed back
            to the input's shape with the engine's own `sum_to`, as the walk does next.
            With no observer installed the walk's hot path is unchanged.

The API (stable; lessons embed it):
    stepper(root, path=None, *, gradient=None, retain_graph=None, model=None,
            params=None, max_nodes=200, title=None, fd=True) -> StepperPage
    StepperPage.html (str), .path (or None), .steps, .leaves, .vertices (lists of dicts;
    all three, with the title and the seed, in the dict .record),
    .save(path), ._repr_html_() (an <iframe srcdoc=...>: the page's script runs in a
    notebook and its ids cannot collide with another page's).

The graph is the one backward will walk: build it, then call `stepper` instead of
`backward()` (it runs backward itself, so `.grad` is filled afterwards, accumulating as
`backward()` does). Graphs of more than `max_nodes` values draw the `max_nodes` nearest
the output; every step is still listed.
"""
import html as _html
import os

import numpy as np

from ..autograd import backward_checks
from ..core.engine import sum_to
from .._tensor import Tensor
from ..value import Value, run_backward, topo_order
from . import stepper_check, stepper_page
from .explain import _summed_axes, formula, num, param_names, rule_text, value_line, value_names
from .rules_text import VALUE_TEXT

__all__ = ["stepper", "StepperPage", "summary", "short"]

SMALL = 12  # arrays of at most this many elements are shown in full


class StepperPage:
    """The written page: `html`, `path`, and the data it shows (`vertices`, `steps`,
    `leaves`, plain lists of dicts). In a notebook it displays itself."""

    def __init__(self, data, html, path):
        self.record = data
        self.html = html
        self.path = path

    vertices = property(lambda self: self.record["vertices"])
    steps = property(lambda self: self.record["steps"])
    leaves = property(lambda self: self.record["leaves"])

    def save(self, path):
        """Write the page to `path` (one file, nothing else); returns the path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)
        self.path = os.fspath(path)
        return self.path

    def _repr_html_(self):
        return ('<iframe style="width:100%;height:760px;border:1px solid #ccc" '
                f'srcdoc="{_html.escape(self.html, quote=True)}"></iframe>')

    def __repr__(self):
        where = f", written to {self.path}" if self.path else ""
        return (f"<tg.viz.stepper: {len(self.vertices)} values, {len(self.steps)} steps, "
                f"{len(self.leaves)} leaves{where}>")


def stepper(root, path=None, *, gradient=None, retain_graph=None, model=None, params=None,
            max_nodes=200, title=None, fd=True):
    """Run backward from `root` (a `Value` or a `Tensor`), record every step the engine
    takes, and write the step-through page to `path` (if given). Returns a `StepperPage`.

    `gradient` / `retain_graph` are passed to `Tensor.backward`; `model=` / `params=`
    name the leaves as in `tg.explain`; `fd=False` skips the finite-difference check."""
    names = param_names(params, model)
    if isinstance(root, Value):
        if gradient is not None:
            raise TypeError("stepper: a Value root takes no gradient (it is seeded with 1)")
        data = _record_value(root, names, fd)
    elif isinstance(root, Tensor):
        data = _record_tensor(root, gradient, retain_graph, names, fd)
    else:
        raise TypeError(f"stepper: expected a Value or a Tensor, got {type(root).__name__}")
    data["title"] = title or f"Backprop, step by step: {data['kind']} graph"
    data["max_nodes"] = int(max_nodes)
    page = StepperPage(data, stepper_page.render(data, max_nodes), None)
    if path is not None:
        page.save(path)
    return page


# ---- numbers as text ---------------------------------------------------------------

def _fmt(x):
    return num(x) if np.isfinite(x) else str(float(x))


def summary(a):
    """A value as short text: a number, a small array in full (4 significant digits),
    or shape and statistics for a large one."""
    if a is None:
        return "-"
    if isinstance(a, (list, tuple)):
        return "(" + ", ".join(summary(x) for x in a) + ")"
    a = np.asarray(getattr(a, "_data", a))
    if a.ndim == 0:
        return _fmt(a)
    if a.size <= SMALL:
        with np.printoptions(precision=4, suppress=False, threshold=SMALL):
            return np.array2string(a, separator=", ").replace("\n", "")
    f = a.astype(np.float64)
    with np.errstate(all="ignore"):
        return (f"shape {tuple(a.shape)}: mean {f.mean():.4g}, min {f.min():.4g}, "
                f"max {f.max():.4g}, |.| {np.sqrt((f * f).sum()):.4g}")


def short(a):
    """A value in a few characters, for a box of the graph: a number, up to 3 numbers,
    or the shape and the mean."""
    if a is None:
        return "-"
    if isinstance(a, (list, tuple)):
        return "(" + ", ".join(short(x) for x in a) + ")"
    a = np.asarray(getattr(a, "_data", a))
    if a.ndim == 0:
        return _fmt(a)
    if a.size <= 3:
        return "[" + ", ".join(f"{float(x):.4g}" for x in a.reshape(-1)) + "]"
    with np.errstate(all="ignore"):
        mean = float(a.astype(np.float64).mean())
    return "(" + ",".join(map(str, a.shape)) + ("," if a.ndim == 1 else "") + \
        f") mean {mean:.4g}"


def _shape(a):
    return list(np.shape(getattr(a, "_data", a)))


def _exact(a):
    """The values as JSON numbers (floats round-trip exactly through repr)."""
    a = np.asarray(getattr(a, "_data", a), dtype=np.float64)
    return a.tolist()


# ---- Value graphs ------------------------------------------------------------------

def _value_rule(v, names):
    """The rule as tg.explain states it: one `child.grad += ...` template per child."""
    op = v._op
    key = "**c" if op.startswith("**") and len(op) > 2 else op
    tmpl = VALUE_TEXT.get(key)
    if tmpl is None or len(tmpl) != len(v._children):
        return f"{v._op}: children get d({names[v]})/d(child) * {names[v]}.grad"
    parts = []
    for c, (form, _) in zip(v._children, tmpl):
        form = form.replace("{out}", names[v]).replace("{x}", names[v._children[0]])
        if len(v._children) > 1:
            form = form.replace("{y}", names[v._children[1]])
        form = form.replace("{c}", op[2:]).replace("{cm1}", _cm1(op))
        parts.append(f"{names[c]}.grad += {form}")
    return " ; ".join(parts)


def _cm1(op):
    k = op[2:]
    try:
        e = float(k) - 1
    except ValueError:
        return f"({k} - 1)"
    return str(int(e)) if e.is_integer() and "." not in k else repr(e)


def _record_value(root, given, fd):
    names = value_names(root, given)
    order = list(reversed(topo_order(root)))  # children first
    vid = {v: f"n{k}" for k, v in enumerate(order)}
    vertices = []
    for v in order:
        is_op = bool(v._op or v._children)
        vertices.append({
            "id": vid[v], "name": names[v], "kind": "op" if is_op else "leaf",
            "op": v._op, "formula": formula(v, names) if is_op else "",
            "value": _fmt(v.item()), "short": _fmt(v.item()), "shape": [],
            "grad0": _fmt(v.grad) if not is_op else "0.0",
            "inputs": [vid[c] for c in v._children], "root": v is root})
    before = {v: v.grad for v in order}
    steps, by_v, count, last = [], {}, {}, {}

    def observer(v, i, c, contribution):
        step = by_v.get(v)
        if step is None:
            step = by_v[v] = {"v": vid[v], "name": names[v], "op": v._op,
                              "rule": _value_rule(v, names), "g": _fmt(v.grad),
                              "g_shape": [], "shares": []}
            steps.append(step)
        if c is None:  # a hand-written `_backward` ran: show what it added to each child
            step["note"] = value_line(names, v, i, c, contribution)
            for k, ch in enumerate(v._children):
                prev = last.get(ch, before[ch] if not (ch._op or ch._children) else 0.0)
                count[ch] = count.get(ch, 0) + 1
                last[ch] = ch.grad
                step["shares"].append({
                    "to": vid[ch], "to_name": names[ch], "input": f"child {k}",
                    "share": _fmt(ch.grad - prev), "summed": "", "fitted": _fmt(ch.grad - prev),
                    "count": count[ch], "after": _fmt(ch.grad), "after_short": _fmt(ch.grad),
                    "leaf": not (ch._op or ch._children), "line": ""})
            return
        count[c] = count.get(c, 0) + 1
        last[c] = c.grad
        step["shares"].append({
            "to": vid[c], "to_name": names[c], "input": f"child {i}",
            "share": _fmt(contribution), "summed": "", "fitted": _fmt(contribution),
            "count": count[c], "after": _fmt(c.grad), "after_short": _fmt(c.grad),
            "leaf": not (c._op or c._children),
            "line": value_line(names, v, i, c, contribution)})

    run_backward(root, observer)
    leaves = []
    for v in order:
        if v._op or v._children:
            continue
        leaves.append({"id": vid[v], "name": names[v], "shape": [], "dtype": "float",
                       "grad": v.grad, "grad_text": _fmt(v.grad), "before": before[v],
                       "uses": count.get(v, 0)})
    for lf, c in zip(leaves, stepper_check.value_fd(root, order, leaves, fd)):
        lf["fd"] = stepper_check.compare(c, lf["grad"], lf["before"], "float64")
        lf["before"] = _fmt(lf["before"])
    return {"kind": "Value", "vertices": vertices, "steps": steps, "leaves": leaves,
            "seed": "1.0", "seed_short": "1.0", "root": vid[root],
            "forward": [f"{names[v]} = "
                        + (f"{formula(v, names)} = " if v._op or v._children else "")
                        + _fmt(v.item()) for v in order]}


# ---- Tensor graphs -----------------------------------------------------------------

def _tensor_graph(root):
    """The graph backward will walk, children first (an explicit stack): a list of
    entries {"kind": "op"|"leaf"|"const", "obj": node or tensor, ...} and a key ->
    index map (nodes by id, leaf/constant tensors by id)."""
    if root.grad_fn is None:
        return [{"kind": "leaf" if root.requires_grad else "const", "obj": root}], \
            {id(root): 0}
    if root.grad_fn.freed or root.grad_fn.inputs is None:
        raise RuntimeError("stepper: the graph was already freed by a backward pass; build "
                           "it again (or call backward(retain_graph=True) before)")
    index, entries = {}, []
    stack = [(root.grad_fn, False)]
    while stack:
        obj, expanded = stack.pop()
        if id(obj) in index:
            continue
        if expanded:
            index[id(obj)] = len(entries)
            entries.append({"kind": "op", "obj": obj})
            continue
        stack.append((obj, True))
        producers = []
        for t in obj.inputs:  # leaves numbered in input order, producers pushed reversed
            if not isinstance(t, Tensor):
                continue
            p = t.grad_fn
            if p is not None:
                if p.freed or p.inputs is None:
                    raise RuntimeError("stepper: part of the graph was freed by an earlier "
                                       "backward pass; build it again")
                if id(p) not in index:
                    producers.append((p, False))
            elif id(t) not in index:
                index[id(t)] = len(entries)
                entries.append({"kind": "leaf" if t.requires_grad else "const", "obj": t})
        stack += producers[::-1]
    return entries, index


def _record_tensor(root, gradient, retain_graph, given, fd):
    entries, index = _tensor_graph(root)
    forward = stepper_check.replay_values(entries, index)   # {entry index: array(s)}
    vid = [f"n{k}" for k in range(len(entries))]
    names, k_leaf, k_const, opcount = [], 0, 0, {}
    for e in entries:
        obj = e["obj"]
        if e["kind"] == "op":
            c = opcount[obj.op.name] = opcount.get(obj.op.name, 0) + 1
            names.append(f"{obj.op.name}{c}")
        elif e["kind"] == "leaf":
            names.append(obj.name or given.get(id(obj)) or f"leaf{k_leaf}")
            k_leaf += 1
        else:
            names.append(obj.name or given.get(id(obj)) or f"const{k_const}")
            k_const += 1

    def where(t):
        """Index of the entry that produced tensor `t`, and its output number."""
        p = t.grad_fn
        return (index[id(p)], t._out - 1 if t._out else 0) if p is not None \
            else (index[id(t)], 0)

    vertices, fwd_lines = [], []
    for k, e in enumerate(entries):
        obj = e["obj"]
        if e["kind"] == "op":
            ins, args = [], []
            for t in obj.inputs:
                if isinstance(t, Tensor):
                    j, o = where(t)
                    ins.append(vid[j])
                    args.append(names[j] + (f"[{o}]" if entries[j]["kind"] == "op"
                                            and entries[j]["obj"].op.n_outputs > 1 else ""))
                else:
                    args.append(summary(t) if np.ndim(t) else repr(t))
            val = forward.get(k, obj.ans)
            extra = ", ".join(f"{a}={v!r}" for a, v in (obj.args or {}).items()
                              if np.ndim(v) == 0)
            formula = f"{obj.op.name}({', '.join(args)}{', ' + extra if extra else ''})"
            vertices.append({"id": vid[k], "name": names[k], "kind": "op", "op": obj.op.name,
                             "formula": formula, "rule": rule_text(obj.op),
                             "value": summary(val), "short": short(val),
                             "shape": _shape(val if not isinstance(
                                 val, tuple) else val[0]), "grad0": "-", "inputs": ins,
                             "root": obj is root.grad_fn})
        else:
            t = obj
            vertices.append({"id": vid[k], "name": names[k], "kind": e["kind"], "op": "",
                             "formula": "", "value": summary(t), "short": short(t),
                             "shape": _shape(t),
                             "grad0": short(t.grad) if t.grad is not None else "None",
                             "inputs": [], "root": t is root})
        v = vertices[-1]
        fwd_lines.append(f"{v['name']} = {v['formula'] + ' = ' if v['formula'] else ''}"
                         f"{v['value']}")

    steps, by_node, count, acc = [], {}, {}, {}

    def observer(node, i, g, gi):
        k = index.get(id(node))
        if k is None:  # a node outside the recorded graph (cannot happen; be safe)
            return
        step = by_node.get(id(node))
        if step is None:
            step = by_node[id(node)] = {
                "v": vid[k], "name": names[k], "op": node.op.name, "rule": rule_text(node.op),
                "g": summary(g), "g_shape": _shape(g if not isinstance(g, (list, tuple))
                                                   else next(x for x in g if x is not None)),
                "shares": []}
            steps.append(step)
        t = node.inputs[i]
        if (id(t.grad_fn) if t.grad_fn is not None else id(t)) not in index:
            # (an input the walk rebased after an in-place change: not in the graph as
            # recorded before backward; its share is still counted by the engine)
            step["shares"].append({"to": "", "to_name": "(a tensor changed in place)",
                                   "input": node.op.input_name(i), "share": summary(gi),
                                   "summed": "", "fitted": summary(gi), "count": 1,
                                   "after": "-", "after_short": "-", "leaf": False})
            return
        j, o = where(t)
        data = np.asarray(t._data)
        gi_a = np.asarray(getattr(gi, "_data", gi))
        fitted = sum_to(np, gi_a, data.shape) if gi_a.shape != data.shape else gi_a
        summed = ""
        if gi_a.shape != data.shape:
            summed = (f"summed from {tuple(gi_a.shape)} to {tuple(data.shape)} over axes "
                      f"{_summed_axes(gi_a.shape, data.shape)}")
        key = (j, o)
        count[key] = count.get(key, 0) + 1
        if fitted.dtype != data.dtype:  # the engine casts each share to its input's dtype
            fitted = fitted.astype(data.dtype)
        # summed as the engine sums (same dtype, same order): a leaf's last running sum is
        # its .grad bit for bit when it had none before
        acc[key] = fitted if key not in acc else acc[key] + fitted
        step["shares"].append({
            "to": vid[j], "to_name": names[j] + (f"[{o}]" if entries[j]["kind"] == "op"
                                                 and entries[j]["obj"].op.n_outputs > 1
                                                 else ""),
            "input": node.op.input_name(i), "share": summary(gi_a), "summed": summed,
            "fitted": summary(fitted), "count": count[key], "after": summary(acc[key]),
            "after_short": short(acc[key]),
            "leaf": entries[j]["kind"] == "leaf"})

    leaf_objs = [e["obj"] for e in entries if e["kind"] == "leaf"]
    before = {id(t): (None if t.grad is None else np.array(t.grad._data)) for t in leaf_objs}
    check = stepper_check.tensor_fd(entries, index, root, gradient, fd)
    backward_checks.install("stepper", observer)
    try:
        root.backward(gradient, retain_graph=retain_graph)
    finally:
        backward_checks.uninstall("stepper")
    leaves = []
    for k, e in enumerate(entries):
        if e["kind"] != "leaf":
            continue
        t = e["obj"]
        gr = t.grad
        b = before[id(t)]
        leaves.append({"id": vid[k], "name": names[k], "shape": _shape(t),
                       "dtype": str(t.dtype).replace("tapegrad.", ""),
                       "grad": None if gr is None else _exact(gr),
                       "grad_text": "None" if gr is None else summary(gr),
                       "before": None if b is None else summary(b),
                       "uses": count.get((k, 0), 0),
                       "fd": stepper_check.compare(check.get(k), None if gr is None
                                                   else gr._data, b, str(t._data.dtype))})
    seed = "1.0" if gradient is None else summary(gradient)
    seed_short = "1.0" if gradient is None else short(gradient)
    top = vid[index[id(root.grad_fn)]] if root.grad_fn is not None else vid[0]
    return {"kind": "Tensor", "vertices": vertices, "steps": steps, "leaves": leaves,
            "seed": seed, "seed_short": seed_short, "root": top, "forward": fwd_lines}


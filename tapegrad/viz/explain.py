"""Narrated backward: `tg.explain(root)` runs the REAL backward pass and tells what it did.

For a `Value` graph: one line per local rule applied, in the order the engine applied it,
with the numbers, e.g. (lesson 2)

    u.grad += loss.grad = 1.0 -> 1.0
    b.grad += loss.grad = 1.0 -> 1.0
    w.grad += x.data * u.grad = 2.0 * 1.0 -> 2.0
    x.grad += w.data * u.grad = 0.5 * 1.0 -> 0.5

(`-> ` shows the child's `.grad` after the addition; unlabeled values are named v1, v2,
... children first. The graph is micrograd's, so a number operand is a value too: `x * 2`
narrates the gradient its constant 2.0 receives, as micrograd computes it.)

For a `Tensor` graph: a header, then one row per node in the order the engine ran it:
op, where it was created (file:line; build the graph inside `tg.autograd.record_sites()`
to record it), input and output shapes, the norm of the upstream gradient, the local rule
(the op's `text`, from its table entry), the axes summed to undo broadcasting, and how many uses
(consumers) had their gradients summed into this node's output; then one row per leaf.

Leaf names: a Value's `label`, a Tensor's `name`; a leaf that is a parameter of the module
passed as `model=` is named as in `model.named_parameters()` (`leaf fc1.weight`), and
`params=` takes torchviz's `dict(model.named_parameters())` (name -> tensor or Value).
Other leaves are numbered (`leaf 0`, `leaf 1`).

Nothing is re-implemented: the Value engine calls an observer after each contribution
(`value.run_backward(root, observer)`), and the Tensor engine calls the checker slot that
anomaly mode also uses (`autograd.backward_checks`, `engine._anomaly_hook`) once per
input gradient a rule computes. Returns the lines as an `Explanation` (a list of strings
whose repr is one short line, so a REPL does not echo the trace a second time).
"""
import string
import sys

import numpy as np

from ..autograd import backward_checks
from .._tensor import Tensor
from ..value import Value, run_backward, topo_order
from .rules_text import VALUE_TEXT

__all__ = ["explain", "Explanation", "param_names"]

_FMT = string.Formatter()


class Explanation(list):
    """The narrated lines (a list of str). Its repr is short: the lines were printed."""

    def __repr__(self):
        return f"<tg.explain: {len(self)} lines>"


def param_names(params=None, model=None):
    """{id(leaf): name} from `model.named_parameters()` and/or a name -> leaf mapping."""
    names = {}
    if model is not None:
        if not hasattr(model, "named_parameters"):
            raise TypeError(f"model= must have named_parameters() (a tg.nn.Module), got "
                            f"{type(model).__name__}")
        names.update((id(p), n) for n, p in model.named_parameters())
    if params is not None:
        names.update((id(p), n) for n, p in dict(params).items())
    return names


def explain(root, gradient=None, retain_graph=None, file=None, quiet=False, limit=200,
            model=None, params=None):
    """Run backward from `root` and narrate it. Returns ALL the lines (an `Explanation`);
    prints them unless `quiet` (at most `limit` lines, then a count of the rest;
    `limit=None`: no cap). `gradient`/`retain_graph` are passed to Tensor.backward;
    `model=` / `params=` name the leaves (see the module docstring)."""
    names = param_names(params, model)
    if isinstance(root, Value):
        if gradient is not None:
            raise TypeError("explain: a Value root takes no gradient (it is seeded with 1)")
        lines = _explain_value(root, names)
    else:
        lines = _explain_tensor(root, gradient, retain_graph, names)
    if not quiet:
        out = sys.stdout if file is None else file
        shown = lines if limit is None else lines[:limit]
        for line in shown:
            print(line, file=out)
        if len(shown) < len(lines):
            print(f"... {len(lines) - len(shown)} more lines (explain(..., limit=None) "
                  "prints all; the returned list has them all)", file=out)
    return Explanation(lines)


# ---- Value -----------------------------------------------------------------------------

def num(x):
    """A short, exact-looking number: 2.0, -1.0, 0.761594, nan, inf."""
    x = float(x)
    r = repr(x)
    return r if len(r) <= 10 else f"{x:.6g}"


def value_names(root, given=None):
    """Labels where set (or a name from `given`, {id: name}); v1, v2, ... for the others,
    children first (topological order)."""
    given = given or {}
    names = {}
    k = 0
    for v in reversed(topo_order(root)):
        name = v.label or given.get(id(v))
        if not name:
            k += 1
            name = f"v{k}"
        names[v] = name
    return names


def formula(v, names):
    """`w * x`, `v3 + v4`, `u**2`, `tanh(u)`, ... in terms of the children's names."""
    op, args = v._op, [names[c] for c in v._children]
    if op in ("+", "*", "**"):
        return f" {op} ".join(args)
    if op.startswith("**"):
        return f"{args[0]}{op}"
    return f"{op}({', '.join(args)})"


def _value_key(v):
    op = v._op
    return "**c" if op.startswith("**") and len(op) > 2 else op


def _fill(template, fields):
    """Format `template`; a negative number gets parentheses after '-' or before '**'."""
    out = []
    parts = list(_FMT.parse(template))
    for k, (lit, field, _, _) in enumerate(parts):
        out.append(lit)
        if field is None:
            continue
        val = fields[field]
        if isinstance(val, float):
            s = num(val)
            nxt = parts[k + 1][0] if k + 1 < len(parts) else ""
            if s.startswith("-") and (lit.endswith("-") or nxt.startswith("**")):
                s = f"({s})"
            out.append(s)
        else:
            out.append(str(val))
    return "".join(out)


def value_line(names, v, i, c, contribution):
    """One narrated line: `c.grad += <rule> = <numbers> -> <c.grad>`, for the observer
    call of `run_backward` that added `contribution` into child `c` (input `i` of `v`)."""
    if c is None:
        return f"{names[v]}: custom _backward ran (not narrated)"
    tmpl = VALUE_TEXT.get(_value_key(v))
    cname = names[c]
    if tmpl is None:
        return (f"{cname}.grad += d({names[v]})/d({cname}) * {names[v]}.grad "
                f"= {num(contribution)} -> {num(c.grad)}")
    ch = v._children
    fields = {"out": names[v], "g": v.grad, "ans": v.data,
              "x": names[ch[0]], "xd": ch[0].data}
    if len(ch) > 1:
        fields.update(y=names[ch[1]], yd=ch[1].data, ym1=ch[1].data - 1)
    if _value_key(v) == "**c":   # the exponent as micrograd's label writes it
        k = v._op[2:]
        e = float(k) - 1
        fields.update(c=k, cm1=int(e) if e.is_integer() and "." not in k else e)
    form, numbers = tmpl[i]
    return f"{cname}.grad += {_fill(form, fields)} = {_fill(numbers, fields)} -> {num(c.grad)}"


def _explain_value(root, given):
    if root.grad != 0 and root._a is not None:
        # run_backward seeds the root with 1 and adds into the leaves: after
        # root.backward() that would silently double every leaf's .grad
        raise RuntimeError(
            "explain runs backward itself, and a backward already ran from this Value "
            f"(its .grad is {root.grad!r}): call tg.explain(loss) INSTEAD of "
            "loss.backward(), not after it (the leaves' gradients would be added twice)")
    names = value_names(root, given)
    lines = []

    def observer(v, i, c, contribution):
        lines.append(value_line(names, v, i, c, contribution))

    run_backward(root, observer)
    return lines


def recipe_lines(root, given=None):
    """The forward recipe of a Value graph, one line per value, children first."""
    names = value_names(root, given)
    out = []
    for v in reversed(topo_order(root)):
        if v._op or v._children:
            out.append(f"{names[v]} = {formula(v, names)} = {num(v.data)}")
        else:
            out.append(f"{names[v]} = {num(v.data)}")
    return out


# ---- Tensor ----------------------------------------------------------------------------

def _norm(a):
    a = getattr(a, "_data", a)
    with np.errstate(all="ignore"):
        return float(np.sqrt(np.sum(np.abs(np.asarray(a, dtype=np.float64)) ** 2)))


def _summed_axes(gshape, shape):
    """The axes the engine sums to bring a gradient of `gshape` back to `shape`."""
    gshape, shape = tuple(gshape), tuple(shape)
    if gshape == shape:
        return ()
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)


def _site(node):
    site = getattr(node, "site", None)
    if not site:
        return "?"
    path, _, line = site.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}"


def _shape(s):
    s = tuple(s)
    return "(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def rule_text(op):
    """The local rule of a Tensor op, from its table entry (`Op.text`)."""
    return op.text or f"vjp of {op.name} (its entry has no text)"


def _explain_tensor(root, gradient, retain_graph, given):

    if not isinstance(root, Tensor):
        raise TypeError(f"explain: expected a Value or a Tensor, got {type(root).__name__}")
    rows = []            # per node, in engine order: dict
    by_node = {}
    uses = {}            # node or leaf tensor -> number of gradient contributions
    leaf_order = []
    if root.grad_fn is not None:
        uses[root.grad_fn] = 1

    def checker(node, i, g, gi):
        row = by_node.get(node)
        if row is None:
            ins = node.inputs
            row = {"op": node.op, "site": _site(node), "out": tuple(g.shape),
                   "ins": [_shape(t.shape) if isinstance(t, Tensor) else "num" for t in ins],
                   "gnorm": _norm(g), "uses": uses.get(node, 0), "unb": []}
            by_node[node] = row
            rows.append(row)
        t = node.inputs[i]
        axes = _summed_axes(gi.shape, t.shape)
        if axes:
            name = node.op.input_names[i] if i < len(node.op.input_names) else f"input{i}"
            row["unb"].append(f"{name} summed over {axes}")
        target = t.grad_fn if t.grad_fn is not None else t
        if t.grad_fn is None and target not in uses:
            leaf_order.append(t)
        uses[target] = uses.get(target, 0) + 1

    backward_checks.install("explain", checker)
    try:
        root.backward(gradient, retain_graph=retain_graph)
    except RuntimeError as e:
        if "second time" not in str(e):
            raise
        raise RuntimeError(
            "explain runs backward itself, and this graph's backward already ran (its "
            "buffers are freed): call tg.explain(loss) INSTEAD of loss.backward(), not after "
            f"it. The engine said: {e}") from None
    finally:
        backward_checks.uninstall("explain")

    table = []  # (#, op, created at, shapes, |grad out|, local rule, unbroadcast, uses)
    for k, r in enumerate(rows, 1):
        table.append((str(k), r["op"].name, r["site"],
                      f"{' '.join(r['ins'])} -> {_shape(r['out'])}", f"{r['gnorm']:.4g}",
                      rule_text(r["op"]), ", ".join(r["unb"]) or "-", str(r["uses"])))
    leaf_rows = []
    for j, t in enumerate(leaf_order):
        name = t.name or given.get(id(t)) or str(j)
        gn = _norm(t.grad) if t.grad is not None else float("nan")
        leaf_rows.append(("", "leaf " + name, "", _shape(t.shape), f"{gn:.4g}",
                          ".grad += the sum of the incoming", "-", str(uses[t])))
    head = ("#", "op", "created at", "shapes (in -> out)", "|grad out|", "local rule",
            "unbroadcast", "uses")
    # every column as wide as its longest cell (long op and leaf names, e.g.
    # cross_entropy or `leaf 2.weight`, keep the columns aligned)
    minimum = (3, 12, 24, 26, 10, 44, 22, 0)
    widths = [max([m] + [len(c[i]) for c in [head] + table + leaf_rows])
              for i, m in enumerate(minimum)]

    def row(cells):
        first = cells[0].rjust(widths[0])
        mid = [cells[i].ljust(widths[i]) for i in (1, 2, 3)]
        gnorm = cells[4].rjust(widths[4])
        rest = [cells[5].ljust(widths[5]), cells[6].ljust(widths[6]), cells[7]]
        return f"{first}  {' '.join(mid)} {gnorm}  {' '.join(rest)}".rstrip()

    lines = [row(head)] + [row(c) for c in table]
    if rows and all(r["site"] == "?" for r in rows):
        lines.append("  (created at '?': build the graph inside tg.autograd.record_sites() "
                     "to record where each op was created)")
    lines += [row(c) for c in leaf_rows]
    return lines

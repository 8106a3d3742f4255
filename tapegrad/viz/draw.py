"""Graph pictures: `to_dot(x)` (DOT text, no dependency) and `draw(x)` (a graphviz.Digraph).

One box per value and one ellipse per op, edges in the direction of the forward pass:

    value box   label (or op name / leaf), then `data 0.5` (Value) or `(3, 4) float32`
                (Tensor), then `grad 2.0` / `grad |g|=...` once a gradient is there
    op ellipse  the op: `*`, `+`, `tanh`, `matmul`, ...; a Tensor op's tooltip (hover in
                SVG) is its local rule, the `text` of its table entry, e.g. mul:
                "dx = g*y ; dy = g*x"

Value graphs are micrograd's `draw_dot` picture (its lectures and trace_graph.ipynb): a
record `{ name | data 0.5 | grad 2.0 }` per Value (every Value reachable through
`_prev`, the number operands included), an ellipse per `_op` ('+', '*', '**2', 'ReLU')
with an edge to its output, and an edge from each child to the op that read it. The name
is the label (or v1, v2, ... as in tg.explain). Tensor graphs: the tensors reached
through `grad_fn` (`Node.inputs` holds the input tensors); draw BEFORE `backward()` (or
use `retain_graph=True`): a freed node no longer knows its inputs and is drawn alone with
a note. Large graphs: only the `max_nodes` values nearest the output are drawn and a note
says how many were left out.

`draw` needs the optional `graphviz` Python package (extra `viz`); turning it into SVG or
PNG (`draw(x).pipe(format="svg")`, `to_svg(x)`) also needs the `dot` program.
"""
import shutil
from collections import deque

from ..core.grad_attribute import SLOT as _GRAD
from ..core.standin import value_key
from .._tensor import Tensor
from ..value import Value
from .explain import param_names, value_names

_grad_slot = _GRAD.__get__

__all__ = ["to_dot", "draw", "to_svg", "graph_items"]

def _num(x):
    x = float(x)
    r = repr(x)
    return r if len(r) <= 10 else f"{x:.4g}"


class _Ids:
    """Stable DOT ids in order of first appearance: v0, op1, v2, ... (not addresses)."""

    def __init__(self):
        self.ids = {}
        self.keep = []  # keep keyed objects alive so id() stays unique

    def __call__(self, prefix, obj):
        key = (prefix, obj if isinstance(obj, tuple) else id(obj))
        got = self.ids.get(key)
        if got is None:
            got = self.ids[key] = f"{prefix}{len(self.ids)}"
            self.keep.append(obj)
        return got


def graph_items(x, max_nodes=150, model=None, params=None):
    """The picture as data: (nodes, edges, note).

    nodes: list of (id, kind, label lines) with kind "record" (a Value: its fields) |
    "value" | "op" | "const" | "note"; edges: list of (from id, to id). Breadth-first
    from `x`, at most `max_nodes` values. `model=` / `params=` name leaves as tg.explain.
    """
    return _items(x, max_nodes, param_names(params, model))[:3]


def _items(x, max_nodes, names):
    """graph_items plus the tooltips: {op node id: the op's local rule (`Op.text`)}."""
    if isinstance(x, Value):
        return _value_items(x, max_nodes, names) + ({},)
    if isinstance(x, Tensor):
        return _tensor_items(x, max_nodes, names)
    raise TypeError(f"draw: expected a Value or a Tensor, got {type(x).__name__}")


def _note(total, drawn):
    return (f"graph has {total} values; drawn: the {drawn} nearest the output "
            f"(pass max_nodes= to draw more)")


def _value_items(root, max_nodes, given):
    names = value_names(root, given)
    total = len(names)
    nodes, edges = [], []
    ids = _Ids()
    seen = {root}
    queue = deque([root])
    drawn = 0
    cut = False
    while queue:
        v = queue.popleft()
        drawn += 1
        vid = ids("v", v)
        lines = [names[v], f"data {_num(v.data)}", f"grad {_num(v.grad)}"]
        nodes.append((vid, "record", lines))
        if not v._op:       # micrograd: an op node only where `_op` is set
            continue
        oid = ids("op", v)
        nodes.append((oid, "op", [v._op]))
        edges.append((oid, vid))
        for p in v._children:
            if p in seen:
                edges.append((ids("v", p), oid))
                continue
            if len(seen) >= max_nodes:
                cut = True
                continue
            seen.add(p)
            queue.append(p)
            edges.append((ids("v", p), oid))
    note = _note(total, drawn) if cut else None
    return nodes, edges, note


def _drawn(t):
    """One drawn value per tensor history (core/standin.py `value_key`), as a tuple:
    `_Ids` keys tuples by value and anything else by identity."""
    return ("value", value_key(t))


def _tensor_items(root, max_nodes, given):
    nodes, edges = [], []
    ids = _Ids()
    seen = {_drawn(root): root}
    queue = deque([root])
    cut = False
    notes = []
    tips = {}
    total_seen = 1

    def tlabel(t):
        if t.name or id(t) in given:
            head = t.name or given[id(t)]
        elif t.grad_fn is None:
            head = "leaf" if t.requires_grad else "input"
        else:
            head = t.grad_fn.op.name
        shape = tuple(t.shape)
        lines = [head, f"{shape} {str(t.dtype).replace('tapegrad.', '')}"]
        if t._data.size == 1:
            lines[1] = f"data {_num(t._data.reshape(-1)[0])}  {lines[1]}"
        g = _grad_slot(t)  # no non-leaf warning: drawing is not the user's read
        if g is not None:
            if g._data.size == 1:
                lines.append(f"grad {_num(g._data.reshape(-1)[0])}")
            else:
                import numpy as np
                lines.append(f"grad |g|={_num(np.sqrt(np.sum(np.square(g._data, dtype=np.float64))))}")
        return lines

    op_seen = set()
    while queue:
        t = queue.popleft()
        tid = ids("t", _drawn(t))
        nodes.append((tid, "value", tlabel(t)))
        node = t.grad_fn
        if node is None:
            continue
        oid = ids("n", node)
        if id(node) in op_seen:  # views sharing a node: drawn once
            edges.append((oid, tid))
            continue
        op_seen.add(id(node))
        # the op's settings worth showing (axis=1, ...); defaults None/False are noise
        kw = ", ".join(f"{k}={v}" for k, v in node.args.items()
                       if isinstance(v, (int, float, tuple, str)) and v is not False)
        nodes.append((oid, "op", [node.op.name] + ([kw] if kw else [])))
        if node.op.text:
            tips[oid] = node.op.text
        edges.append((oid, tid))
        if node.freed or node.inputs is None:
            notes.append(f"{node.op.name}: graph freed by backward (draw before backward, "
                         "or backward(retain_graph=True))")
            continue
        for k, inp in enumerate(node.inputs):
            if not isinstance(inp, Tensor):
                cid = ids("c", (id(node), k))
                nodes.append((cid, "const", [_num(inp) if isinstance(inp, (int, float))
                                             else type(inp).__name__]))
                edges.append((cid, oid))
                continue
            key = _drawn(inp)
            if key in seen:
                edges.append((ids("t", key), oid))
                continue
            total_seen += 1
            if len(seen) >= max_nodes:
                cut = True
                continue
            seen[key] = inp
            queue.append(inp)
            edges.append((ids("t", key), oid))
    if cut:
        notes.append(f"more than {max_nodes} values; drawn: the {len(seen)} nearest the "
                     "output (pass max_nodes= to draw more)")
    return nodes, edges, "; ".join(notes) or None, tips


def _esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _record(lines):
    """A graphviz record label `{ a | b | c }` (its special characters escaped)."""
    esc = str.maketrans({c: "\\" + c for c in "{}|<>"})
    return "{ " + " | ".join(line.translate(esc) for line in lines) + " }"


_STYLE = {
    "record": 'shape=record style=filled fillcolor="#eef4ff"',
    "value": 'shape=box style="rounded,filled" fillcolor="#eef4ff"',
    "op": 'shape=ellipse style=filled fillcolor="#fff3d6"',
    "const": 'shape=plaintext',
    "note": 'shape=note style=filled fillcolor="#ffe0e0"',
}


def to_dot(x, max_nodes=150, rankdir="LR", model=None, params=None):
    """DOT text of the graph of `x` (a Value or a Tensor). Needs nothing installed."""
    nodes, edges, note, tips = _items(x, max_nodes, param_names(params, model))
    out = ["digraph tapegrad {", f"  rankdir={rankdir};",
           '  node [fontname="Helvetica" fontsize=11];']
    for nid, kind, lines in nodes:
        label = _esc(_record(lines)) if kind == "record" else "\\n".join(map(_esc, lines))
        tip = f' tooltip="{_esc(tips[nid])}"' if nid in tips else ""
        out.append(f'  {nid} [label="{label}" {_STYLE[kind]}{tip}];')
    for a, b in edges:
        out.append(f"  {a} -> {b};")
    if note:
        out.append(f'  note [label="{_esc(note)}" {_STYLE["note"]}];')
    out.append("}")
    return "\n".join(out) + "\n"


def draw(x, max_nodes=150, rankdir="LR", format="svg", model=None, params=None):
    """A `graphviz.Digraph` of the graph of `x` (needs `pip install graphviz`; rendering
    it to a picture also needs the `dot` program). In Jupyter it shows itself.
    `model=` / `params=` name the leaves (parameter names), as tg.explain."""
    try:
        import graphviz
    except ImportError as e:
        raise ImportError("tg.viz.draw needs the graphviz Python package: "
                          "pip install 'tapegrad[viz]' (tg.viz.to_dot needs nothing)") from e
    nodes, edges, note, tips = _items(x, max_nodes, param_names(params, model))
    dot = graphviz.Digraph("tapegrad", format=format,
                           graph_attr={"rankdir": rankdir},
                           node_attr={"fontname": "Helvetica", "fontsize": "11"})
    attrs = {
        "record": {"shape": "record", "style": "filled", "fillcolor": "#eef4ff"},
        "value": {"shape": "box", "style": "rounded,filled", "fillcolor": "#eef4ff"},
        "op": {"shape": "ellipse", "style": "filled", "fillcolor": "#fff3d6"},
        "const": {"shape": "plaintext"},
        "note": {"shape": "note", "style": "filled", "fillcolor": "#ffe0e0"},
    }
    for nid, kind, lines in nodes:
        tip = {"tooltip": tips[nid]} if nid in tips else {}
        label = _record(lines) if kind == "record" else "\n".join(lines)
        dot.node(nid, label, **attrs[kind], **tip)
    for a, b in edges:
        dot.edge(a, b)
    if note:
        dot.node("note", note, **attrs["note"])
    return dot


def has_dot():
    """True when the graphviz `dot` program is installed (needed for SVG/PNG)."""
    return shutil.which("dot") is not None


def to_svg(x, max_nodes=150, rankdir="LR", model=None, params=None):
    """SVG text of the graph (needs the graphviz package and the `dot` program)."""
    if not has_dot():
        raise RuntimeError("to_svg needs the graphviz `dot` program (apt-get install "
                           "graphviz); tg.viz.to_dot(x) gives the DOT text without it")
    return draw(x, max_nodes, rankdir, "svg", model, params).pipe(format="svg").decode()

"""tg.Value builds micrograd's graph: the same nodes, labels, edges, and pictures.

Two oracles: micrograd's own Value (the `micrograd` package of the `test` extra) on the
expressions it supports (its README and trace_graph.ipynb), compared as labelled graphs;
and, for the lecture's ops micrograd 0.1.0 lacks (tanh, exp), the structure worked out by
hand from the lecture's Value (nn-zero-to-hero, micrograd lecture) and stated below.
"""
import random

import pytest
from micrograd.engine import Value as MG

import tapegrad as tg
from tapegrad import Value
from tapegrad.value import topo_order


def graph(root):
    """(nodes, edges) as micrograd's trace() collects them through `_prev`, each node
    named by its `_op`, its data and its children's names: equal for two graphs iff
    they are the same labelled graph. An iterative walk; works for either Value."""
    order, seen, stack = [], set(), [root]
    while stack:
        v = stack.pop()
        if id(v) not in seen:
            seen.add(id(v))
            order.append(v)
            stack.extend(v._prev)
    sig = {}
    while len(sig) < len(order):    # name bottom-up (the graphs here are small)
        for v in order:
            if id(v) not in sig and all(id(c) in sig for c in v._prev):
                sig[id(v)] = (v._op, float(v.data), tuple(sorted(sig[id(c)] for c in v._prev)))
    nodes = sorted(sig[id(v)] for v in order)
    edges = sorted((sig[id(c)], sig[id(v)]) for v in order for c in v._prev)
    return nodes, edges


tg_graph = mg_graph = graph


def readme(V):
    """micrograd's README example."""
    a = V(-4.0)
    b = V(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return a, b, g


def test_trace_graph_example_is_micrographs():
    """trace_graph.ipynb: x = Value(1.0); y = (x * 2 + 1).relu(): 6 nodes, 5 edges."""
    x = Value(1.0)
    y = (x * 2 + 1).relu()
    y.backward()
    nodes = topo_order(y)
    assert len(nodes) == 6
    assert sorted(v._op for v in nodes if v._op) == ["*", "+", "ReLU"]
    assert sorted(v.data for v in nodes if not v._op) == [1.0, 1.0, 2.0]  # x, 2, 1
    assert sum(len(v._prev) for v in nodes) == 5
    xm = MG(1.0)
    ym = (xm * 2 + 1).relu()
    ym.backward()
    assert tg_graph(y) == mg_graph(ym)
    assert x.grad == xm.grad == 2.0


def test_readme_example_same_graph_and_numbers_as_micrograd():
    a, b, g = readme(Value)
    am, bm, gm = readme(MG)
    nodes, edges = tg_graph(g)
    assert (nodes, edges) == mg_graph(gm)
    assert len(nodes) == len({id(v) for v in topo_order(g)})
    g.backward()
    gm.backward()
    assert g.data == gm.data
    # micrograd sums in the order of its sets: the same numbers up to rounding
    # (and the README's numbers: 138.8338 and 645.5773)
    assert a.grad == pytest.approx(am.grad, rel=1e-12) and abs(a.grad - 138.8338) < 1e-4
    assert b.grad == pytest.approx(bm.grad, rel=1e-12) and abs(b.grad - 645.5773) < 1e-4


@pytest.mark.parametrize("expr", [
    lambda a, b: a - b, lambda a, b: 2 - a, lambda a, b: -a, lambda a, b: a / b,
    lambda a, b: a / 4, lambda a, b: 3 / a, lambda a, b: a ** 2, lambda a, b: a ** -0.5,
    lambda a, b: 1 + a, lambda a, b: 2 * a + b * 3, lambda a, b: (a * b).relu(),
])
def test_each_recipe_is_micrographs(expr):
    """-, /, negation, number operands on either side: micrograd's nodes and labels."""
    ours = expr(Value(1.5), Value(-2.0))
    theirs = expr(MG(1.5), MG(-2.0))
    assert tg_graph(ours) == mg_graph(theirs)


def test_micrograd_nn_neuron_graph():
    """trace_graph.ipynb's 2-D neuron (micrograd.nn) with tg.Value swapped in."""
    import micrograd.nn as mg_nn

    def build(V):
        old = mg_nn.Value
        mg_nn.Value = V
        try:
            random.seed(1337)
            n = mg_nn.Neuron(2)
            return n([V(1.0), V(-2.0)])
        finally:
            mg_nn.Value = old
    assert tg_graph(build(Value)) == mg_graph(build(MG))


def test_lecture_graphs_by_hand():
    """The lecture's Value: L = (a*b + c) * f has 7 nodes, 3 ops; the neuron with tanh has
    10 nodes; written with exp, micrograd's recipes give 18."""
    a, b, c, f = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c"), \
        Value(-2.0, label="f")
    L = (a * b + c) * f
    assert len(topo_order(L)) == 7
    assert [v._op for v in topo_order(L)] == ["*", "+", "*", "", "", "", ""]
    x1, x2, w1, w2, bias = (Value(v) for v in (2.0, 0.0, -3.0, 1.0, 6.8813735870195432))
    n = x1 * w1 + x2 * w2 + bias
    o = n.tanh()
    assert len(topo_order(o)) == 10 and o._op == "tanh" and o._children == (n,)
    e = (2 * n).exp()
    o2 = (e - 1) / (e + 1)
    ops = sorted(v._op for v in topo_order(o2) if v._op)
    # 2*n: '*' with the constant 2; exp; e-1 = e + Value(-1); e+1; (e+1)**-1; the product
    assert len(topo_order(o2)) == 18
    assert ops == sorted(["*", "*", "+", "+", "*", "exp", "+", "+", "**-1", "*"])
    o.backward()
    o2.backward()
    assert abs(o.data - o2.data) < 1e-12
    assert abs(x1.grad - 2 * -1.5) < 1e-6    # the lecture: x1.grad = w1 * (1 - o**2), twice


def test_picture_has_draw_dots_structure():
    """A record { name | data | grad } per Value, an op node per _op, edges op -> value
    and child -> op: micrograd's draw_dot, counted on micrograd's own graph."""
    import re
    x = Value(1.0, label="x")
    y = (x * 2 + 1).relu()
    y.backward()
    dot = tg.viz.to_dot(y)
    decl = {k: (lab, shape) for k, lab, shape in
            re.findall(r'^\s+(\w+) \[label="([^"]*)" shape=(\w+)', dot, re.M)}
    edges = re.findall(r"^\s+(\w+) -> (\w+);", dot, re.M)
    records = [lab for lab, shape in decl.values() if shape == "record"]
    ops = sorted(lab for lab, shape in decl.values() if shape == "ellipse")
    ym = (MG(1.0) * 2 + 1).relu()
    nodes_m, edges_m = mg_graph(ym)
    assert len(records) == len(nodes_m) == 6
    assert ops == sorted(n[0] for n in nodes_m if n[0]) == ["*", "+", "ReLU"]
    assert len(edges) == len(ops) + len(edges_m) == 8
    assert "{ x | data 1.0 | grad 2.0 }" in records
    assert all(re.fullmatch(r"\{ \w+ \| data \S+ \| grad \S+ \}", r) for r in records)
    kinds = {k: shape for k, (lab, shape) in decl.items()}
    assert all(kinds[a] == "ellipse" and kinds[b] == "record" for a, b in edges
               if kinds[a] == "ellipse")
    assert sum(1 for a, b in edges if kinds[a] == "record" and kinds[b] == "ellipse") == 5


def test_explain_and_draw_name_module_parameters():
    lin = tg.nn.Linear(3, 2)
    x = tg.ones(4, 3)
    loss = (lin(x) ** 2).sum()
    pic = tg.viz.to_dot(loss, model=lin)
    assert "weight\\n" in pic and "bias\\n" in pic
    lines = tg.explain(loss, quiet=True, model=lin)
    leaves = [line.split()[1] for line in lines if line.split()[0] == "leaf"]
    assert sorted(leaves) == ["bias", "weight"]
    t = tg.ones(2, requires_grad=True)   # torchviz's params=dict(name -> tensor)
    lines = tg.explain((t * 2).sum(), quiet=True, params={"t": t})
    assert any(line.split()[:2] == ["leaf", "t"] for line in lines)
    unnamed = tg.explain((tg.ones(2, requires_grad=True) * 2).sum(), quiet=True)
    assert any(line.split()[:2] == ["leaf", "0"] for line in unnamed)
    with pytest.raises(TypeError, match="named_parameters"):
        tg.explain(loss, model=object())


def test_explain_repr_is_short_in_a_repl():
    w = Value(0.5, label="w")
    lines = tg.explain(w * 2.0, quiet=True)
    assert repr(lines) == "<tg.explain: 2 lines>"
    assert lines == ["w.grad += v1.data * v2.grad = 2.0 * 1.0 -> 2.0",
                     "v1.grad += w.data * v2.grad = 0.5 * 1.0 -> 0.5"]


def test_value_module_is_small_and_imports_no_viz():
    """value.py reads top to bottom as micrograd's engine: at most 250 lines, and the
    pictures/narration observe it from outside (it imports nothing of viz)."""
    import ast
    from pathlib import Path
    src = Path(tg.value.__file__).read_text()
    assert len(src.splitlines()) <= 250
    imported = [n.module or "" for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Import)
                 for a in n.names]
    assert not [m for m in imported if "viz" in m], imported


def test_microgpt_shaped_training_is_bit_identical_to_a_microgpt_style_value():
    """bench/bench_microgpt_value.py's GPT, 2 Adam steps and 2 samples: tg.Value gives
    exactly (==) the losses and samples of the microgpt-style reference Value written in
    the benchmark (same graph, same order of the sums, same formulas)."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "bench" / "bench_microgpt_value.py"
    spec = importlib.util.spec_from_file_location("_bench_microgpt_value", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    docs = ["emma", "olivia", "ava", "isabella", "sophia", "mia"]
    ours = bench.train(Value, docs, steps=2, n_samples=2)
    ref = bench.train(bench.LocalValue, docs, steps=2, n_samples=2)
    assert ours == ref and len(ours[0]) == 2 and len(ours[1]) == 2

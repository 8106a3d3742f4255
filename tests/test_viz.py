"""tg.viz.to_dot / draw: every value and op of the graph appears; large graphs are capped."""
import re

import pytest

import tapegrad as tg
from tapegrad import Value
from tapegrad.value import topo_order
from tapegrad.viz.draw import has_dot


def _ids(dot):
    decl = re.findall(r'^\s+(\w+) \[label="([^"]*)"', dot, re.M)
    edges = re.findall(r"^\s+(\w+) -> (\w+);", dot, re.M)
    return dict(decl), edges


def _parse_ok(dot):
    import graphviz
    graphviz.Source(dot)  # constructs (rendering would need the dot binary)
    assert dot.count("{") == dot.count("}")


def test_value_graph_every_node_and_edge():
    w, x, b = Value(0.5, label="w"), Value(2.0, label="x"), Value(-1.0, label="b")
    u = w * x
    loss = (u + b).tanh() * 3.0
    loss.backward()
    dot = tg.viz.to_dot(loss)
    decl, edges = _ids(dot)
    values = topo_order(loss)
    n_ops = sum(1 for v in values if v._op)
    assert len(values) == 8                   # w, x, b, u, u + b, tanh, 3.0, loss
    assert sum(1 for k in decl if k.startswith("v")) == len(values)
    assert sum(1 for k in decl if k.startswith("op")) == n_ops == 4
    # each op: one edge out, one edge in per child
    assert len(edges) == n_ops + sum(len(v._children) for v in values)
    ends = {e for pair in edges for e in pair}
    assert ends <= set(decl)
    labels = "\n".join(decl.values())
    for text in ("{ w | data 0.5 | grad 6.0 }", "{ x | data 2.0 |", "| data 3.0 |"):
        assert text in labels
    assert sorted(lab for k, lab in decl.items() if k.startswith("op")) == \
        ["*", "*", "+", "tanh"]
    _parse_ok(dot)


def test_draw_returns_digraph_for_value_and_tensor():
    import graphviz
    a = Value(1.0, label="a")
    g = tg.viz.draw(a * a + 1)
    assert isinstance(g, graphviz.Digraph)
    assert "a" in g.source
    t = tg.ones(2, 3, requires_grad=True)
    g2 = tg.viz.draw((t * 2).sum())
    assert isinstance(g2, graphviz.Digraph) and "sum" in g2.source


def test_tensor_graph_every_node():
    W = tg.randn(3, 4, requires_grad=True)
    W.name = "W"
    X = tg.randn(5, 3)
    h = (X @ W).relu()
    L = (h * 2.0).mean()
    dot = tg.viz.to_dot(L)
    decl, edges = _ids(dot)
    ops = [lab.split("\\n")[0] for k, lab in decl.items() if k.startswith("n")]
    assert sorted(ops) == ["matmul", "mean", "mul", "relu"]
    tensors = [lab for k, lab in decl.items() if k.startswith("t")]
    assert len(tensors) == 6  # L, mul out, relu out, matmul out, X, W
    assert any(lab.startswith("W\\n(3, 4) float32") for lab in tensors)
    assert any(k.startswith("c") and lab == "2.0" for k, lab in decl.items())
    assert {e for pair in edges for e in pair} <= set(decl)
    _parse_ok(dot)


def test_large_value_feeding_add_is_drawn_once():
    """add keeps a stand-in tensor for a large non-leaf input (core/standin.py), another
    object with y's history: y is still one drawn value, with two edges out."""
    x = tg.randn(256, 128, requires_grad=True)
    y = x @ tg.randn(128, 128, requires_grad=True)  # 128 KiB: a stand-in in add's node
    L = (y + y * 2.0).sum()
    decl, edges = _ids(tg.viz.to_dot(L))
    ys = [k for k, lab in decl.items() if k.startswith("t") and lab.startswith("matmul")]
    assert len(ys) == 1
    assert sum(1 for a, _ in edges if a == ys[0]) == 2  # into add and into mul


def test_tensor_graph_after_backward_says_freed():
    x = tg.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    dot = tg.viz.to_dot(y)
    assert "freed by backward" in dot


def test_large_graph_is_capped_with_a_note():
    x = Value(1.0, label="x")
    y = x
    for _ in range(1000):
        y = y * 1.001 + 0.5
    dot = tg.viz.to_dot(y, max_nodes=50)
    decl, edges = _ids(dot)
    assert sum(1 for k in decl if k.startswith("v")) == 50
    assert "note" in decl and "4001 values" in decl["note"]  # and 2000 constants
    assert {e for pair in edges for e in pair} <= set(decl)
    _parse_ok(dot)


def test_svg_only_with_dot_binary():
    a = Value(2.0, label="a")
    if has_dot():
        assert "<svg" in tg.viz.to_svg(a * a)
    else:
        with pytest.raises(RuntimeError, match="dot"):
            tg.viz.to_svg(a * a)

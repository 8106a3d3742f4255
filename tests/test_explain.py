"""tg.explain: the narrated backward, for Value and Tensor graphs.

The narration must describe the real pass: the gradients it leaves behind equal a plain
backward's (and PyTorch's), its lines come in the engine's order, and each line's final
number is the parent's gradient at that moment.
"""
import io

import pytest
import re

import numpy as np
import torch

import tapegrad as tg
from tapegrad import Value
from tapegrad.value import topo_order


def _example2():
    w, x, b = Value(0.5, label="w"), Value(2.0, label="x"), Value(-1.0, label="b")
    u = w * x
    u.label = "u"
    loss = u + b
    loss.label = "loss"
    return w, x, b, u, loss


def test_worked_example_2_trace():
    w, x, b, u, loss = _example2()
    buf = io.StringIO()
    lines = tg.explain(loss, file=buf)
    assert lines == [
        "u.grad += loss.grad = 1.0 -> 1.0",
        "b.grad += loss.grad = 1.0 -> 1.0",
        "w.grad += x.data * u.grad = 2.0 * 1.0 -> 2.0",
        "x.grad += w.data * u.grad = 0.5 * 1.0 -> 0.5",
    ]
    assert buf.getvalue().splitlines() == lines
    assert (loss.grad, u.grad, b.grad, w.grad, x.grad) == (1.0, 1.0, 1.0, 2.0, 0.5)


def test_value_backward_has_no_explain_flag():
    # value.py does not import viz: the narrated pass is tg.explain(v), not backward(...)
    w, x, b, u, loss = _example2()
    with pytest.raises(TypeError):
        loss.backward(explain=True)


def test_one_line_per_rule_in_engine_order_and_grads_unchanged():
    def build():
        a, c = Value(-1.3, label="a"), Value(0.4, label="c")
        h = (a * c + a.exp()).tanh() * a + (c ** 2).sqrt() - 3.0 / (a - c) + a.sigmoid()
        return a, c, h

    a, c, h = build()
    lines = tg.explain(h, quiet=True)
    a2, c2, h2 = build()
    h2.backward()
    assert (a.grad, c.grad) == (a2.grad, c2.grad)
    # one line per (node, parent) contribution
    n_rules = sum(len(v._children) for v in topo_order(h))
    assert len(lines) == n_rules
    # the last line about `a` ends with a's final gradient
    last_a = [line for line in lines if line.startswith("a.grad")][-1]
    assert float(last_a.rsplit("-> ", 1)[1]) == float(f"{a.grad:.6g}")
    ta = torch.tensor(-1.3, dtype=torch.float64, requires_grad=True)
    tc = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
    th = (ta * tc + ta.exp()).tanh() * ta + (tc ** 2).sqrt() - 3.0 / (ta - tc) + ta.sigmoid()
    th.backward()
    assert np.isclose(a.grad, ta.grad.item(), rtol=1e-12)
    assert np.isclose(c.grad, tc.grad.item(), rtol=1e-12)


def test_unlabeled_values_get_creation_order_names():
    x = Value(3.0)
    y = x * x
    lines = tg.explain(y, quiet=True)
    assert lines == ["v1.grad += v1.data * v2.grad = 3.0 * 1.0 -> 3.0",
                     "v1.grad += v1.data * v2.grad = 3.0 * 1.0 -> 6.0"]


def test_every_value_op_narrates():
    from tapegrad.viz.rules_text import VALUE_TEXT
    x = Value(0.7, label="x")
    y = Value(1.9, label="y")
    exprs = [x + y, x + 1, x - y, x - 1, 1 - x, x * y, x * 2, x / y, x / 2, 2 / x,
             x ** y, x ** 3, 2 ** x, -x, x.exp(), x.log(), x.sqrt(), x.abs(), x.tanh(),
             x.sigmoid(), x.relu(), x.sin(), x.cos()]
    keys = {"**c" if v._op.startswith("**") and v._op != "**" else v._op
            for e in exprs for v in topo_order(e) if v._op}
    assert keys == set(VALUE_TEXT)
    for e in exprs:
        lines = tg.explain(e, quiet=True)
        assert len(lines) == sum(len(v._children) for v in topo_order(e))
        for line in lines:
            assert re.match(r"^(x|y|v\d+)\.grad \+= .+ = .+ -> \S+$", line), line
            assert "{" not in line and "d(" not in line


def test_tensor_rows(tmp_path):
    with tg.autograd.record_sites():
        W = tg.randn(3, 4, requires_grad=True)
        W.name = "W"
        b = tg.zeros(4, requires_grad=True)
        X = tg.randn(5, 3)
        h = (X @ W + b).tanh()
        L = (h * h).sum() + h.mean()
    lines = tg.explain(L, quiet=True)
    header, rows = lines[0], lines[1:]
    for col in ("op", "created at", "|grad out|", "local rule", "unbroadcast", "uses"):
        assert col in header
    ops = [r.split()[1] for r in rows if not r.split()[0] == "leaf"]
    assert ops == ["add", "mean", "sum", "mul", "tanh", "add", "matmul"]
    here = "test_explain.py:"
    node_rows = [r for r in rows if r.split()[0] != "leaf"]
    assert all(here in r for r in node_rows)
    tanh_row = next(r for r in node_rows if r.split()[1] == "tanh")
    assert tanh_row.rstrip().endswith(" 3")          # used by mul (twice) and mean
    assert "1-ans**2" in tanh_row
    add_row = node_rows[5]
    assert "y summed over (0,)" in add_row           # b (4,) broadcast over 5 rows
    leaf_rows = [r for r in rows if r.split()[0] == "leaf"]
    assert len(leaf_rows) == 2 and any("leaf W" in r for r in leaf_rows)
    # upstream gradient norm of tanh's output vs torch
    tW = torch.tensor(W.numpy(force=True), requires_grad=True)
    tb = torch.tensor(b.numpy(force=True), requires_grad=True)
    th = (torch.tensor(X.numpy(force=True)) @ tW + tb).tanh()
    th.retain_grad()
    ((th * th).sum() + th.mean()).backward()
    tokens = tanh_row.split()
    norm = float(tokens[tokens.index("->") + 2])      # after "-> (5,4)"
    assert np.isclose(norm, th.grad.norm().item(), rtol=1e-3)
    np.testing.assert_allclose(W.grad.numpy(force=True), tW.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_tensor_explain_leaves_no_checker_installed():
    from tapegrad.autograd import backward_checks
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.explain((x * 2).sum(), quiet=True)
    assert not backward_checks.active("explain")
    assert x.grad.tolist() == [2.0, 2.0]


def test_print_limit_and_sites_hint():
    x = Value(1.0, label="x")
    y = x
    for _ in range(50):
        y = y * 1.01
    buf = io.StringIO()
    lines = tg.explain(y, file=buf, limit=10)
    printed = buf.getvalue().splitlines()
    # micrograd's graph: each `* 1.01` has two children, y and the constant 1.01
    assert len(lines) == 100 and len(printed) == 11
    assert printed[-1].startswith("... 90 more lines")
    t = tg.ones(2, requires_grad=True)
    rows = tg.explain((t * 3).sum(), quiet=True)
    assert any("record_sites" in r for r in rows)

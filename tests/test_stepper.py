"""tg.viz.stepper's data (no browser: tests/test_stepper_browser.py opens the pages).

The steps are the engine's walk: their order is the order the engine called the nodes'
hooks (observed independently of the stepper's own observer); the shares, sums and
running sums are what the engine summed; gradients agree with PyTorch."""
import re

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad import Value
from tapegrad.value import run_backward
from tapegrad.viz.stepper import summary


def _nodes(root):
    """Every node of a tensor graph (explicit stack)."""
    seen, stack, out = set(), [root.grad_fn], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack += [t.grad_fn for t in n.inputs if isinstance(t, tg.Tensor)]
    return out


def test_tensor_steps_follow_the_engines_order():
    x = tg.randn(5, 4, requires_grad=True)
    w = tg.randn(4, 4, requires_grad=True)
    h = (x @ w).relu()
    skip = h + x                                # a skip connection: x used twice
    loss = (skip * h).mean() + h.sum() * 0.1    # h used three times
    order = []
    for n in _nodes(loss):
        n.register_hook(lambda g, n=n: order.append(n.op.name))
    page = tg.viz.stepper(loss)
    assert [s["op"] for s in page.steps] == order
    assert len(page.steps) == len(order) == 8


def test_value_steps_are_run_backwards_order_and_explains_lines():
    def build():
        a, b = Value(1.5, label="a"), Value(-0.5, label="b")
        c = a * b
        return (c * a + c.tanh() + (a ** 2).exp()).sigmoid()

    page = tg.viz.stepper(build())
    again = build()
    order = [v._op for v in run_backward(again)]
    assert [s["op"] for s in page.steps] == order
    lines = tg.explain(build(), quiet=True)
    assert [sh["line"] for s in page.steps for sh in s["shares"]] == list(lines)


def test_broadcast_share_is_summed_and_running_sums_grow():
    x = tg.randn(3, 1, 4, dtype=tg.float64, requires_grad=True)
    b = tg.randn(5, 1, dtype=tg.float64, requires_grad=True)
    y = x * b                        # (3, 5, 4): x stretched on axis 1, b on 0 and 2
    loss = (y * y).sum() + (b * 2).sum()
    page = tg.viz.stepper(loss)
    shares = {(s["op"], sh["to_name"]): sh for s in page.steps for sh in s["shares"]}
    leaf = {lf["name"]: lf for lf in page.leaves}
    names = {lf["name"]: lf["id"] for lf in page.leaves}
    xs = next(sh for s in page.steps if s["op"] == "mul" for sh in s["shares"]
              if sh["to"] == names["leaf0"])
    assert xs["summed"] == "summed from (3, 5, 4) to (3, 1, 4) over axes (1,)"
    bs = [sh for s in page.steps for sh in s["shares"] if sh["to"] == names["leaf1"]]
    assert [sh["count"] for sh in bs] == [1, 2]
    assert "summed from (3, 5, 4) to (5, 1) over axes (0, 2)" in [sh["summed"] for sh in bs]
    assert bs[-1]["after"] == summary(b.grad) == leaf["leaf1"]["grad_text"]
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tb = torch.tensor(b.detach().numpy(), requires_grad=True)
    ty = tx * tb
    ((ty * ty).sum() + (tb * 2).sum()).backward()
    np.testing.assert_allclose(np.array(leaf["leaf0"]["grad"]), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.array(leaf["leaf1"]["grad"]), tb.grad.numpy(), rtol=1e-12)
    assert all(lf["fd"]["ok"] for lf in page.leaves)
    assert shares  # every share names its target


def test_accumulates_into_existing_grad_like_backward():
    w = tg.randn(3, requires_grad=True)
    (w * w).sum().backward()
    first = w.grad.numpy().copy()
    page = tg.viz.stepper((w * 3.0).sum())
    np.testing.assert_allclose(w.grad.numpy(), first + 3.0, rtol=1e-6)
    lf = page.leaves[0]
    assert lf["before"] == summary(first) and lf["fd"]["ok"]


def test_non_scalar_root_with_gradient_and_several_outputs():
    x = tg.randn(4, 3, dtype=tg.float64, requires_grad=True)
    vals, _ = tg.max(x * x, dim=0)          # a node with two outputs
    seed = tg.tensor([1.0, -2.0, 0.5], dtype=tg.float64)
    page = tg.viz.stepper(vals, gradient=seed)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.max(tx * tx, dim=0).values.backward(torch.tensor([1.0, -2.0, 0.5],
                                                           dtype=torch.float64))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert page.record["seed"] == summary(seed)
    assert page.leaves[0]["fd"]["ok"]


def test_a_wrong_rule_fails_the_finite_difference_check():
    from tapegrad.core.record import apply
    from tapegrad.ops.registry import Op
    # an op of the table's kind (not registered) whose rule forgets the factor 2
    square = Op("square", lambda x: x * x, vjp=[lambda xp, g, ans, x: g * x], reads=["x"],
                text="dx = g*x (wrong)")
    x = tg.tensor([1.0, 2.0, -3.0], dtype=tg.float64, requires_grad=True)
    page = tg.viz.stepper(apply(square, x).sum())
    fd = page.leaves[0]["fd"]
    assert fd["ok"] is False and fd["text"].startswith("MISMATCH")
    assert fd["max_err"] == pytest.approx(3.0)
    assert "MISMATCH" in page.html
    assert page.steps[-1]["rule"] == "dx = g*x (wrong)"


def test_a_custom_function_is_not_replayed_and_says_so():
    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    x = tg.tensor([1.0, 2.0, -3.0], dtype=tg.float64, requires_grad=True)
    page = tg.viz.stepper(Square.apply(x).sum())
    assert page.leaves[0]["fd"]["ok"] is None
    assert "custom autograd.Function" in page.leaves[0]["fd"]["text"]
    assert page.leaves[0]["grad"] == [2.0, 4.0, -6.0]


def test_large_graph_draws_the_nearest_and_lists_every_step():
    x = tg.tensor(0.3, dtype=tg.float64, requires_grad=True)
    y = x
    for _ in range(150):
        y = 3.7 * y * (1 - y)       # the logistic map: 450 nodes
    page = tg.viz.stepper(y, max_nodes=60)
    assert len(page.steps) == 450
    assert page.html.count('class="vertex') == 60
    assert "drawn: the 60 nearest the output" in page.html
    assert page.html.count("<li data-step=") == len(page.steps)


def test_page_is_self_contained_and_notebook_ready(tmp_path):
    a = Value(2.0, label="a")
    page = tg.viz.stepper(a * a + a, tmp_path / "p.html")
    text = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert text == page.html and page.path == str(tmp_path / "p.html")
    # nothing to fetch: no src/href, no import, no url() but the SVG's own marker
    assert not re.search(r"\bsrc\s*=|\bhref\s*=|@import", text)
    assert re.findall(r"url\(([^)]*)\)", text) == ["#arrow"] * text.count("marker-end")
    assert page.leaves[0]["grad"] == a.grad == 5.0
    assert 'data-leaf="a"' in text and 'data-grad="5.0"' in text
    frame = page._repr_html_()
    assert frame.startswith("<iframe") and "srcdoc=" in frame and "<script" not in frame
    assert repr(page).startswith("<tg.viz.stepper: 3 values, 2 steps, 1 leaves")


def test_leaves_named_by_model():
    model = tg.nn.Linear(3, 2)
    page = tg.viz.stepper(model(tg.randn(4, 3)).pow(2).sum(), model=model)
    assert sorted(lf["name"] for lf in page.leaves) == ["bias", "weight"]


def test_bad_input_gets_a_clear_error():
    with pytest.raises(TypeError, match="stepper: expected a Value or a Tensor"):
        tg.viz.stepper(3.0)
    with pytest.raises(TypeError, match="a Value root takes no gradient"):
        tg.viz.stepper(Value(1.0), gradient=1.0)
    x = tg.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="freed by a backward pass"):
        tg.viz.stepper(y)


def test_value_with_a_hand_written_backward():
    # micrograd's style: a node whose `_backward` closure the user wrote
    a = Value(2.0, label="a")
    five_a = Value(a.item() * 5, (a,), "x5")

    def _backward():
        a.grad += 5 * five_a.grad
    five_a._backward = _backward
    page = tg.viz.stepper(five_a * a)
    assert a.grad == 20.0 == page.leaves[0]["grad"]
    last = page.steps[-1]
    assert last["note"].endswith("custom _backward ran (not narrated)")
    assert [(sh["share"], sh["after"], sh["count"]) for sh in last["shares"]] == \
        [("10.0", "20.0", 2)]
    assert "cannot replay" in page.leaves[0]["fd"]["text"]


def test_the_check_has_a_budget(monkeypatch):
    from tapegrad.viz import stepper_check
    monkeypatch.setattr(stepper_check, "BUDGET", 8)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Tanh(), tg.nn.Linear(4, 1))
    page = tg.viz.stepper(model(tg.randn(5, 3)).sum(), model=model)
    assert [lf["fd"]["text"].split(" of ")[0] for lf in page.leaves] == ["ok: 1"] * 4
    monkeypatch.setattr(stepper_check, "SECONDS", -1)
    page = tg.viz.stepper(model(tg.randn(5, 3)).sum(), model=model)
    assert all(lf["fd"]["text"].startswith("not checked: the check's -1 s")
               for lf in page.leaves)
    a = Value(1.0)
    page = tg.viz.stepper(a * a)
    assert page.leaves[0]["fd"]["text"].startswith("not checked")

"""Lesson 2 (docs/lessons/02-value.md): the scalar engine step by step.

    w = Value(0.5); x = Value(2.0); b = Value(-1.0)
    u = w * x; v = u + b; loss = v; loss.backward()

prints the recipe, the reverse topological order, the narrated backward, the gradients,
the DOT text of the picture, and the same graph as Tensors with the per-node table.

    python examples/lesson_02_value.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402
from tapegrad.value import topo_order  # noqa: E402
from tapegrad.viz.explain import recipe_lines, value_names  # noqa: E402


def build():
    w = Value(0.5, label="w")
    x = Value(2.0, label="x")
    b = Value(-1.0, label="b")
    u = w * x
    u.label = "u"
    loss = u + b
    loss.label = "loss"
    return w, x, b, u, loss


def main():
    w, x, b, u, loss = build()
    print("== forward: the recipe each value remembers ==")
    for line in recipe_lines(loss):
        print("  " + line)
    names = value_names(loss)
    order = [names[v] for v in topo_order(loss)]
    print("reverse topological order:", ", ".join(order))
    print("== backward, narrated ==")
    trace = tg.explain(loss, quiet=True)
    for line in trace:
        print("  " + line)
    grads = {n: v.grad for n, v in (("loss", loss), ("u", u), ("b", b), ("w", w), ("x", x))}
    print("gradients: " + "  ".join(f"{n}.grad = {g}" for n, g in grads.items()))
    print("== the picture (tg.viz.to_dot; tg.viz.draw gives a graphviz object) ==")
    dot = tg.viz.to_dot(loss)
    print(dot, end="")

    print("== the same graph with Tensors: one row per node ==")
    with tg.autograd.record_sites():
        wt = tg.tensor([0.5], requires_grad=True)
        wt.name = "w"
        xt = tg.tensor([2.0], requires_grad=True)
        xt.name = "x"
        bt = tg.tensor(-1.0, requires_grad=True)
        bt.name = "b"
        lt = (wt * xt + bt).sum()
    table = tg.explain(lt, quiet=True)
    for line in table:
        print(line.rstrip())
    print(f"w.grad = {wt.grad.tolist()}  x.grad = {xt.grad.tolist()}  b.grad = {bt.grad.item()}")
    return {"grads": grads, "order": order, "trace": trace, "dot": dot, "table": table,
            "tensor_grads": (wt.grad.item(), xt.grad.item(), bt.grad.item())}


if __name__ == "__main__":
    main()

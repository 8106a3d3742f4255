"""Lesson 11 (docs/lessons/11-inside-a-tensor.md): a tensor carries its recipe.

A tensor made by an op has a `grad_fn`: the node of the graph that made it. The node
knows its op (torch's name: MulBackward0, ExpBackward0, ...), its inputs
(`next_functions`: the node of each input, AccumulateGrad for a leaf that requires
grad, None for a constant) and the values its rule will read (`_saved_self`,
`_saved_other`, `_saved_result`). The script walks the graph of L = exp(x * w).sum()
through that public API only, once with tapegrad and once with PyTorch, and shows that
both print the same; then what backward does to the saved values.

    python examples/lesson_11_inside_a_tensor.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402

SAVED = ("_saved_self", "_saved_other", "_saved_result", "_saved_exponent")
X = [1.0, 2.0, 3.0]
W = [0.5, -1.0, 0.25]


def torch_name(fn):
    """The node's class name in torch, read from the repr both libraries print
    (`<MulBackward0 object at 0x...>`)."""
    return repr(fn)[1:].split(" object at")[0]


def build(lib):
    """x, w (leaves), c (a constant), h = x * w, a = exp(h), L = (a * c).sum()."""
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    c = lib.tensor([1.0, 1.0, 2.0])               # requires no grad: no edge for it
    h = x * w
    a = h.exp()
    loss = (a * c).sum()
    return x, w, c, h, a, loss


def _show(v, names):
    if v is None:
        return "None"
    if id(v) in names:
        return f"{names[id(v)]} itself"
    if hasattr(v, "tolist"):
        return "[" + ", ".join(f"{e:.4g}" for e in v.detach().reshape(-1).tolist()) + "]"
    return repr(v)


def walk(loss, names):
    """One line per node, from loss.grad_fn down (a stack, not recursion): its name, the
    nodes of its inputs, and its saved values."""
    lines, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        edges = ", ".join(torch_name(f) if f is not None else "None"
                          for f, _ in fn.next_functions)
        if torch_name(fn) == "AccumulateGrad":
            lines.append(f"AccumulateGrad  variable = {names[id(fn.variable)]}")
            continue
        saved = "; ".join(f"{s} = {_show(getattr(fn, s), names)}"
                          for s in SAVED if s in dir(fn))
        lines.append(f"{torch_name(fn)}  next_functions: ({edges})  saved: {saved or '-'}")
        stack.extend(f for f, _ in reversed(fn.next_functions))
    return lines


def picture():
    """L's graph after backward(retain_graph=True): docs/images/lesson_11_recipe.svg."""
    x, w, c, h, a, loss = build(tg)
    x.name, w.name, c.name, h.name, a.name, loss.name = "x", "w", "c", "h", "a", "L"
    loss.backward(retain_graph=True)
    return loss


def main(lib=tg):
    x, w, c, h, a, loss = build(lib)
    names = {id(x): "x", id(w): "w", id(c): "c", id(h): "h", id(a): "a"}
    print("== the tensors ==")
    print(f"loss = {loss!r}")
    for name, t in (("x", x), ("c", c), ("h", h)):
        print(f"{name}: is_leaf {t.is_leaf}, requires_grad {t.requires_grad}, "
              f"grad_fn {torch_name(t.grad_fn) if t.grad_fn is not None else None}")
    print("== the recipe, node by node (grad_fn, next_functions, _saved_*) ==")
    lines = walk(loss, names)
    for line in lines:
        print("  " + line)
    print("== saved values are the forward's own tensors ==")
    fn_mul = a.grad_fn.next_functions[0][0]
    print(f"h.grad_fn is a.grad_fn.next_functions[0][0]: {h.grad_fn is fn_mul}")
    print(f"h.grad_fn._saved_self is x: {fn_mul._saved_self is x}")
    print(f"a.grad_fn._saved_result equals a: {bool((a.grad_fn._saved_result == a).all())}")
    loss.backward()
    print("== after backward: the saved values are freed ==")
    print(f"x.grad = {_show(x.grad, {})}  (= w * exp(x * w) * c)")
    try:
        fn_mul._saved_self
    except RuntimeError as e:
        print(f"RuntimeError: {str(e)[:66]}...")
    _, _, _, _, a2, loss2 = build(lib)
    loss2.backward(retain_graph=True)
    print("with backward(retain_graph=True) they stay: a.grad_fn._saved_result = "
          f"{_show(a2.grad_fn._saved_result, {})}")
    return {"lines": lines, "grad": x.grad.tolist()}


# the expressions whose nodes make the table of local derivatives below
EXPRESSIONS = {
    "x + y": lambda x, y: x + y, "x - y": lambda x, y: x - y, "x * y": lambda x, y: x * y,
    "x / y": lambda x, y: x / y, "x ** 3": lambda x, y: x ** 3, "-x": lambda x, y: -x,
    "x.exp()": lambda x, y: x.exp(), "x.log()": lambda x, y: x.log(),
    "x.sqrt()": lambda x, y: x.sqrt(), "x.abs()": lambda x, y: x.abs(),
    "x.sin()": lambda x, y: x.sin(), "x.tanh()": lambda x, y: x.tanh(),
    "x.sigmoid()": lambda x, y: x.sigmoid(), "x.relu()": lambda x, y: x.relu(),
    "x @ y": lambda x, y: x @ y, "x.sum()": lambda x, y: x.sum(),
    "x.mean()": lambda x, y: x.mean(), "x.max()": lambda x, y: x.max(),
    "x.reshape(-1)": lambda x, y: x.reshape(-1), "x.softmax(-1)": lambda x, y: x.softmax(-1),
}


def rule_table():
    """(expression, torch's node name, the local rule) for each of EXPRESSIONS: the rule
    is `grad_fn.op.text`, the op table's entry (g: the incoming gradient, ans: the
    output; `;` between the inputs' rules)."""
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = tg.tensor([[0.5, 1.0], [1.5, 2.0]], requires_grad=True)
    rows = []
    for text, fn in EXPRESSIONS.items():
        node = fn(x, y).grad_fn
        rows.append((text, torch_name(node), node.op.text))
    return rows


def print_rule_table():
    print("== the table of local derivatives, read from the nodes (grad_fn.op.text) ==")
    for text, name, rule in rule_table():
        print(f"  {text:14s} {name:17s} {rule}")


def compare_with_torch():
    """The same walk with PyTorch: the lines it prints are tapegrad's."""
    import torch
    x, w, c, h, a, loss = build(torch)
    names = {id(x): "x", id(w): "w", id(c): "c", id(h): "h", id(a): "a"}
    return walk(loss, names)


if __name__ == "__main__":
    result = main()
    print_rule_table()
    try:
        same = compare_with_torch() == result["lines"]
        print(f"== PyTorch, the same walk: the same lines: {same} ==")
    except ImportError:
        print("== (PyTorch is not installed: the comparison is skipped) ==")

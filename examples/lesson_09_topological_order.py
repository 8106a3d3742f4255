"""Lesson 9 (docs/lessons/09-topological-order.md): a node must wait for every consumer.

A skip connection: a = x * 2, b = tanh(a), c = a + b. `a` has two consumers, `b` and
`c`, and `b` is itself computed before `c`. Backward may run a's rule only after both
shares arrived. Three walks over the same tg.Value graph, written with micrograd's
public pieces (`_children`, `_op`, `data`) and the three local rules the graph uses:

  naive recursion        run a node's rule, then recurse into each child: a's rule runs
                         twice, the second time with its whole gradient (wrong);
  recursion + visited    each rule once, but a's runs before b's share arrived (wrong);
  wait for consumers     a node is ready when every use of it has sent its share
                         (Kahn's topological order): right, each rule once.

Then the cost of thinking in paths: the gradient is the sum, over every path from the
output to the input, of the product of the local derivatives along it. n residual
blocks `y = y + tanh(y)` have 2^n paths; backward's work grows like n.

    python examples/lesson_09_topological_order.py
"""
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402

X0 = 0.5
PATH_BLOCKS = [1, 2, 4, 8, 12]     # residual blocks whose paths are enumerated one by one
COUNT_ONLY = 40                    # and one too large to enumerate: paths counted only


def skip_graph():
    """x -> a = x*2 -> b = tanh(a); c = a + b (the skip connection)."""
    x = Value(X0, label="x")
    a = x * 2;     a.label = "a"
    b = a.tanh();  b.label = "b"
    c = a + b;     c.label = "c"
    return x, a, b, c


def local_derivatives(v):
    """(child, d v / d child) for each child: the local rules of +, * and tanh."""
    kids = v._children
    if v._op == "+":
        return [(kids[0], 1.0), (kids[1], 1.0)]
    if v._op == "*":
        return [(kids[0], kids[1].data), (kids[1], kids[0].data)]
    if v._op == "tanh":
        return [(kids[0], 1.0 - v.data ** 2)]
    return []                                   # a leaf: nothing to pass on


def _name(v):
    return v.label or f"({v.data:g})"          # the number operand 2 is a Value too


def _apply(v, grads, log):
    """Run v's rule: add d v/d child * v's gradient into each child's gradient."""
    parts = []
    for child, d in local_derivatives(v):
        grads[child] = grads.get(child, 0.0) + d * grads[v]
        parts.append(f"{_name(child)} += {d:.6g} * {grads[v]:.6g}")
    if parts:
        log.append(f"  rule of {_name(v)} ({v._op}): " + ", ".join(parts))


# Recursion is the point of the two naive walks (tapegrad's own walks use a stack).
def naive_recursive(root):
    """Run the rule, then recurse into every child: no waiting, no memory."""
    grads, log = {root: 1.0}, []

    def visit(v):
        _apply(v, grads, log)
        for child in v._children:
            visit(child)
    visit(root)
    return grads, log


def recursive_visited(root):
    """The same, but each node's rule runs once: the first time the walk reaches it."""
    grads, log, seen = {root: 1.0}, [], set()

    def visit(v):
        if v in seen:
            return
        seen.add(v)
        _apply(v, grads, log)
        for child in v._children:
            visit(child)
    visit(root)
    return grads, log


def wait_for_consumers(root):
    """A node's rule runs when all its uses have sent their share (Kahn's algorithm)."""
    waiting, seen, stack = Counter(), {root}, [root]
    while stack:                                # count the uses of every value
        v = stack.pop()
        for child in v._children:
            waiting[child] += 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    grads, log, ready = {root: 1.0}, [], [root]
    # the order among ready nodes does not matter; every one has its whole gradient
    while ready:
        v = ready.pop()
        _apply(v, grads, log)
        for child, _ in local_derivatives(v):
            waiting[child] -= 1
            if waiting[child] == 0:             # its last consumer just sent its share
                ready.append(child)
    return grads, log


def residual_chain(n):
    """n blocks of y = y + tanh(y), from the leaf x."""
    x = y = Value(X0, label="x")
    for _ in range(n):
        y = y + y.tanh()
    return x, y


def count_paths(root):
    """Paths from root to each value, by dynamic programming over a topological order."""
    order = tg.value.topo_order(root)
    paths = {root: 1}
    for v in order:
        for child in v._children:
            paths[child] = paths.get(child, 0) + paths.get(v, 0)
    return paths


def enumerate_paths(root):
    """Walk every path separately, pushing d(root)/d(node) along it: right, but it
    multiplies by a local derivative once per path prefix, not once per edge."""
    grads, work = {}, [0]

    def push(v, g):
        grads[v] = grads.get(v, 0.0) + g
        for child, d in local_derivatives(v):
            work[0] += 1
            push(child, d * g)
    push(root, 1.0)
    return grads, work[0]


def _edges(root):
    """Multiplications of one backward pass: one per (node, child) edge."""
    return sum(len(local_derivatives(v)) for v in tg.value.topo_order(root))


def picture():
    """The skip graph after backward: docs/images/lesson_09_skip.svg."""
    x, a, b, c = skip_graph()
    c.backward()
    return c


def main():
    x, a, b, c = skip_graph()
    exact = 2 * (1 + (1 - math.tanh(2 * X0) ** 2))
    print("== the graph: a = x*2, b = tanh(a), c = a + b (a skip connection) ==")
    print(f"x = {x.data}  a = {a.data}  b = {b.data:.6f}  c = {c.data:.6f}")
    print("a has two consumers: b and c; dc/da = 1 + (1 - b**2) = "
          f"{1 + (1 - b.data ** 2):.6f}, dc/dx = 2 * dc/da = {exact:.6f}")
    results = {}
    for title, walk in (("naive recursion", naive_recursive),
                        ("recursion with a visited set", recursive_visited),
                        ("wait for every consumer (topological order)", wait_for_consumers)):
        grads, log = walk(c)
        results[title] = grads[x]
        print(f"== {title} ==")
        print("\n".join(log))
        verdict = "right" if abs(grads[x] - exact) < 1e-12 else "WRONG"
        print(f"x.grad = {grads[x]:.6f}   ({verdict}; {len(log)} rules run)")
    c.backward()
    print("== tapegrad's backward (tg.explain narrates the real pass) ==")
    x2, _, _, c2 = skip_graph()
    trace = tg.explain(c2, quiet=True)
    print("\n".join("  " + line for line in trace))
    xt = tg.tensor(X0, dtype=tg.float64, requires_grad=True)
    at = xt * 2
    (at + at.tanh()).backward()
    print(f"x.grad: tg.Value {x.grad:.6f}, tg.Tensor {xt.grad.item():.6f}")

    print("== the cost of enumerating paths: n blocks of y = y + tanh(y) ==")
    print("  n   values   paths x -> y   multiplications: path by path   backward")
    table = {}
    for n in PATH_BLOCKS:
        xs, ys = residual_chain(n)
        n_values = len(tg.value.topo_order(ys))
        paths = count_paths(ys)[xs]
        grads, work = enumerate_paths(ys)
        ys.backward()
        n_mult = _edges(ys)
        assert abs(grads[xs] - xs.grad) <= 1e-12 * abs(xs.grad)
        table[n] = (n_values, paths, work, n_mult, xs.grad)
        print(f"{n:3d} {n_values:8d} {paths:14d} {work:31d} {n_mult:10d}")
    xs, ys = residual_chain(COUNT_ONLY)
    paths = count_paths(ys)[xs]
    print(f"{COUNT_ONLY:3d} {len(tg.value.topo_order(ys)):8d} {paths:14d} "
          f"{'(not tried)':>31s} {_edges(ys):10d}")
    print("path by path and backward give the same x.grad for every n above "
          "(to 1e-12)")
    return {"exact": exact, "walks": results, "value_grad": x.grad,
            "tensor_grad": xt.grad.item(), "trace": trace, "table": table,
            "big_paths": paths}


if __name__ == "__main__":
    main()

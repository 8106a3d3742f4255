"""Lesson 3 (docs/lessons/03-logistic-map.md): differentiate code, not formulas.

f(x): repeat x = 4*x*(1-x) k times. For k = 6 at x = 0.3:
reverse mode vs the exact derivative (rational arithmetic), the tape of 18 entries,
why symbolic differentiation blows up, the finite-difference error table, forward mode,
and a 100000-iteration loop (a 300000-node graph) through backward without recursion.

    python examples/lesson_03_logistic_map.py
"""
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402
from tapegrad.value import topo_order  # noqa: E402

K = 6
X0 = 0.3
STEPS = [1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14]
BIG_K = 100_000


def f(x, k=K):
    """The code we differentiate: the same lines work for floats, Values, Tensors."""
    for _ in range(k):
        x = 4 * x * (1 - x)
    return x


def exact_derivative(x, k=K):
    """f'(x) exactly, in rational arithmetic (chain rule by hand: d <- d * 4(1 - 2x))."""
    d = Fraction(1)
    for _ in range(k):
        d = d * 4 * (1 - 2 * x)
        x = 4 * x * (1 - x)
    return d


def poly_coeffs(k=K):
    """f as a polynomial in x with integer coefficients (lowest degree first)."""
    p = [0, 1]
    for _ in range(k):
        q = [(1 if i == 0 else 0) - c for i, c in enumerate(p)]   # 1 - p
        prod = [0] * (len(p) + len(q) - 1)
        for i, a in enumerate(p):
            if a:
                for j, b in enumerate(q):
                    prod[i + j] += 4 * a * b
        while len(prod) > 1 and prod[-1] == 0:
            prod.pop()
        p = prod
    return p


def symbolic_sizes(kmax=K):
    """Tree sizes of f and of its naive symbolic derivative (product rule, no sharing,
    no simplification): expression swell."""
    s, d = 1, 1          # f_0 = x (1 node), f_0' = 1 (1 node)
    out = []
    for k in range(1, kmax + 1):
        # f_k = (4 * E) * (1 - E):                     2 copies of E + 5 nodes
        # f_k' = (0*E + 4*E') * (1 - E) + (4*E) * (0 - E')
        s, d = 2 * s + 5, 2 * d + 3 * s + 14
        out.append((k, s, d))
    return out


def main():
    exact = exact_derivative(Fraction(3, 10))
    print(f"== reverse mode, k = {K}, x = {X0} ==")
    x = Value(X0, label="x")
    y = f(x)
    trace = tg.explain(y, quiet=True)
    print(f"f(0.3) = {y.data:.10f}")
    print(f"f'(0.3) by reverse mode = {x.grad:.10f}")
    print(f"f'(0.3) exact (rational arithmetic) = {float(exact):.10f}")
    err = abs(Fraction(x.grad) - exact)
    print(f"|reverse mode - exact| = {float(err):.1e}")

    print("== the tape ==")
    ops = [v for v in topo_order(y) if v._op]
    first = [v._op for v in reversed(ops)][:len(ops) // K]
    print(f"recorded operations (micrograd's graph): {len(ops)} ({len(ops) // K} per "
          f"iteration: {', '.join(first)} for 4*x, -x = x*-1, 1 + (-x), the product)")
    mults = sum(1 for line in trace if " * " in line.split(" = ", 1)[1].split(" -> ")[0])
    print(f"backward: {len(trace)} local rules applied, {mults} of them a multiplication")
    xt = tg.tensor(X0, dtype=tg.float64, requires_grad=True)
    yt = f(xt)
    n_nodes, stack, seen = 0, [yt.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        n_nodes += 1
        stack.extend(t.grad_fn for t in node.inputs if isinstance(t, tg.Tensor))
    yt.backward()
    print(f"tg.Tensor: {n_nodes} nodes, x.grad = {xt.grad.item():.10f}")

    print("== symbolic differentiation swells ==")
    coeffs = poly_coeffs()
    print(f"f for k = {K} is a polynomial of degree {len(coeffs) - 1} "
          f"(f' has degree {len(coeffs) - 2}); largest coefficient {max(map(abs, coeffs))}")
    print(" k  size of f  size of f' (naive tree)  growth of f'")
    prev = None
    for k, s, d in symbolic_sizes():
        growth = f"x{d / prev:.2f}" if prev else ""
        print(f"{k:2d} {s:10d} {d:24d}  {growth}")
        prev = d

    print("== finite differences (f(x+h) - f(x)) / h in float64 ==")
    print("      h     error")
    fd_errors = {}
    for h in STEPS:
        fd = (f(X0 + h) - f(X0)) / h
        e = abs(fd - float(exact))
        fd_errors[h] = e
        print(f"{h:7.0e}  {e:8.1e}")
    best = min(fd_errors.values())
    print(f"best: {best:.1e} (relative {best / abs(float(exact)):.1e}); and it needs one "
          "more evaluation of f per input")

    print("== forward mode (dual numbers, tg.autograd.forward_ad) ==")
    from tapegrad.autograd import forward_ad as fwAD
    with fwAD.dual_level():
        xd = fwAD.make_dual(tg.tensor(X0, dtype=tg.float64), tg.tensor(1.0, dtype=tg.float64))
        tangent = fwAD.unpack_dual(f(xd)).tangent.item()
    print(f"f'(0.3) by forward mode = {tangent:.10f}")

    xb = Value(X0)
    yb = f(xb, BIG_K)
    n_values = len(topo_order(yb))
    n_big = sum(1 for v in topo_order(yb) if v._op)
    print(f"== k = {BIG_K}: a {n_values}-value graph ==")
    yb.backward()
    print(f"recorded operations: {n_big}; backward finished (no recursion)")
    return {"grad": x.grad, "exact": exact, "err": float(err), "n_ops": len(ops),
            "mults": mults, "n_nodes": n_nodes, "tensor_grad": xt.grad.item(),
            "degree": len(coeffs) - 1, "fd_errors": fd_errors, "forward": tangent,
            "n_big": n_big}


if __name__ == "__main__":
    main()

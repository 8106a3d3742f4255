"""Lesson 3 (docs/lessons/03-logistic-map.md): differentiate code, not formulas.

f(x): repeat x = 4*x*(1-x) k times. For k = 6 at x = 0.3:
reverse mode vs the exact derivative (rational arithmetic), the tape of 18 entries,
why symbolic differentiation blows up, one-sided vs central finite differences, forward
mode, the derivative that grows like 2^k until float64 overflows (k = 1024: nan), and a
100000-iteration loop through backward without recursion, whose x.grad is nan.

    python examples/lesson_03_logistic_map.py
"""
import math
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402
from tapegrad.value import topo_order  # noqa: E402

K = 6
X0 = 0.3
STEPS = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14]
GROWTH_KS = [10, 20, 30, 40, 50, 100, 200, 500, 1000]
OVERFLOW_SCAN = range(1000, 1031)   # where float64 (max 1.8e308 = 2^1024) gives out
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

    print("== finite differences in float64: error against the exact f'(0.3) ==")
    print("      h   one-sided (f(x+h) - f(x)) / h   central (f(x+h) - f(x-h)) / 2h")
    fd_errors, central_errors = {}, {}
    for h in STEPS:
        fd_errors[h] = abs((f(X0 + h) - f(X0)) / h - float(exact))
        central_errors[h] = abs((f(X0 + h) - f(X0 - h)) / (2 * h) - float(exact))
        print(f"{h:7.0e}  {fd_errors[h]:30.1e}  {central_errors[h]:31.1e}")
    for name, errs in (("one-sided", fd_errors), ("central", central_errors)):
        h = min(errs, key=errs.get)
        rel = errs[h] / abs(float(exact))
        print(f"best {name}: {errs[h]:.1e} at h = {h:.0e} (relative {rel:.1e}: about "
              f"{-math.log10(rel):.0f} significant digits)")
    print("each needs extra evaluations of f per input (one-sided 1, central 2)")

    print("== forward mode (dual numbers, tg.autograd.forward_ad) ==")
    from tapegrad.autograd import forward_ad as fwAD
    with fwAD.dual_level():
        xd = fwAD.make_dual(tg.tensor(X0, dtype=tg.float64), tg.tensor(1.0, dtype=tg.float64))
        tangent = fwAD.unpack_dual(f(xd)).tangent.item()
    print(f"f'(0.3) by forward mode = {tangent:.10f}")

    growth, overflow_k, overflow_lines = exploding_derivative()

    xb = Value(X0)
    yb = f(xb, BIG_K)
    n_values = len(topo_order(yb))
    n_big = sum(1 for v in topo_order(yb) if v._op)
    print(f"== k = {BIG_K}: a {n_values}-value graph ==")
    yb.backward()
    print(f"recorded operations: {n_big}; backward finished (no recursion), "
          f"but x.grad = {xb.grad}")
    return {"grad": x.grad, "exact": exact, "err": float(err), "n_ops": len(ops),
            "mults": mults, "n_nodes": n_nodes, "tensor_grad": xt.grad.item(),
            "degree": len(coeffs) - 1, "fd_errors": fd_errors,
            "central_errors": central_errors, "forward": tangent, "n_big": n_big,
            "growth": growth, "overflow_k": overflow_k, "overflow_lines": overflow_lines,
            "big_grad": xb.grad}


def picture():
    """One iteration as a graph (tg.Value, after backward): docs/images/lesson_03_one_step.svg."""
    x = Value(X0, label="x")
    y = f(x, 1)
    y.label = "f"
    y.backward()
    return y


def reverse_grad(k):
    """f'(0.3) for k iterations by reverse mode (tg.Value)."""
    x = Value(X0)
    f(x, k).backward()
    return x.grad


def exploding_derivative():
    """f'(0.3) per k: each step multiplies the derivative by 4(1 - 2x), on average by 2
    (the map doubles distances), so |f'| ~ 2^k, until float64 overflows."""
    print("== the derivative explodes: f'(0.3) after k iterations ==")
    print("    k             f'(0.3)   log2|f'| / k")
    growth = {}
    for k in GROWTH_KS:
        g = growth[k] = reverse_grad(k)
        print(f"{k:5d}  {g:18.6e}   {math.log2(abs(g)) / k:12.3f}")
    overflow_k = next(k for k in OVERFLOW_SCAN if not math.isfinite(reverse_grad(k)))
    print(f"f'(0.3) is finite for k = {OVERFLOW_SCAN[0]}..{overflow_k - 1}; k = {overflow_k}: "
          f"{reverse_grad(overflow_k)} (|f'| ~ 2^k, and the largest float64 is "
          f"{sys.float_info.max:.3e} ~ 2^1024)")
    x = Value(X0, label="x")
    trace = tg.explain(f(x, overflow_k), quiet=True)
    first_inf = next(i for i, line in enumerate(trace) if "inf" in line)
    first_nan = next(i for i, line in enumerate(trace) if "nan" in line)
    lines = trace[first_inf:first_nan + 1]
    print(f"where: lines {first_inf + 1}-{first_nan + 1} of the narrated backward for "
          f"k = {overflow_k} ({len(trace)} lines)")
    for line in lines:
        print("  " + line)
    print("a product passes 1.8e308 (-inf); a value used twice then receives -inf and +inf,"
          " whose sum is nan; from there on every gradient it reaches is nan, and no error"
          " is raised")
    return growth, overflow_k, lines


if __name__ == "__main__":
    main()

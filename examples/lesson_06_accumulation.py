"""Lesson 6 (docs/lessons/06-accumulation.md): gradients accumulate.

L = 0.5*(w*x - y)**2 with w = 0.5, x = 2, y = 3: dL/dw = (w*x - y)*x = -4. Recomputing L
and calling backward three times without zeroing gives w.grad = -4, -8, -12; zero_grad
resets it. A value used in two places receives the SUM of both uses' gradients, the same
rule inside one backward pass.

    python examples/lesson_06_accumulation.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402

W, X, Y = 0.5, 2.0, 3.0


def loss(w):
    return 0.5 * (w * X - Y) ** 2


def picture():
    """s = a*a + 2*a at a = 3 after backward: three edges leave a, and a.grad = 8 is the
    sum of their gradients. docs/images/lesson_06_shared.svg."""
    a = Value(3.0, label="a")
    p = a * a
    p.label = "p"
    q = 2.0 * a
    q.label = "q"
    s = p + q
    s.label = "s"
    s.backward()
    return s


def main():
    out = {}
    print(f"dL/dw = (w*x - y)*x = {(W * X - Y) * X}")
    print("== tg.Value: three backward calls, no zeroing ==")
    w = Value(W, label="w")
    vals = []
    for k in range(1, 4):
        loss(w).backward()
        vals.append(w.grad)
        print(f"after backward #{k}: w.grad = {w.grad}")
    w.grad = 0.0
    print(f"after w.grad = 0 (micrograd's zero_grad): w.grad = {w.grad}")
    out["value"] = vals

    print("== tg.Tensor and an optimizer ==")
    wt = tg.tensor(W, requires_grad=True)
    opt = tg.optim.SGD([wt], lr=0.1)
    tvals = []
    for k in range(1, 4):
        loss(wt).backward()
        tvals.append(wt.grad.item())
        print(f"after backward #{k}: w.grad = {wt.grad.item()}")
    opt.zero_grad()
    print(f"after opt.zero_grad(): w.grad = {wt.grad}")
    out["tensor"] = tvals
    out["after_zero"] = wt.grad

    print("== one value, two uses: the gradients add ==")
    a = Value(3.0, label="a")
    p = a * a
    p.label = "p"
    q = 2.0 * a
    q.label = "q"
    s = p + q
    s.label = "s"
    trace = tg.explain(s, quiet=True)
    for line in trace:
        print("  " + line)
    print(f"a.grad = 2*a + 2 = {a.grad}")
    out["shared"] = a.grad
    out["trace"] = trace
    return out


if __name__ == "__main__":
    main()

"""Lesson 1 (docs/lessons/01-reuse.md): backprop computes each local derivative once and
reuses it. The example: u = x**2, y = 2*u at x = 3 gives 9, 18 and dy/dx = 12.

    python examples/lesson_01_reuse.py
"""
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402

X = 3.0
N_INPUTS = 1000


def main():
    print("== the two-step function, with tg.Value ==")
    x = Value(X, label="x")
    u = x ** 2
    u.label = "u"
    y = 2 * u
    y.label = "y"
    print(f"forward:  u = x**2 = {u.data}   y = 2*u = {y.data}")
    dy_du, du_dx = 2.0, 2 * x.data
    print(f"local derivatives:  dy/du = {dy_du}   du/dx = 2*x = {du_dx}")
    print(f"chain rule:  dy/dx = dy/du * du/dx = {dy_du * du_dx}")
    print("backward, narrated (one line per local rule):")
    for line in tg.explain(y, quiet=True):
        print("  " + line)
    print(f"x.grad = {x.grad}")

    print("== the same with tg.Tensor ==")
    xt = tg.tensor(X, requires_grad=True)
    yt = 2 * xt ** 2
    yt.backward()
    print(f"y = {yt.item()}   x.grad = {xt.grad.item()}")

    print("== reuse: one local derivative serves every input ==")
    a, b, c = Value(1.0, label="a"), Value(-2.0, label="b"), Value(0.5, label="c")
    s = a * b + c
    s.label = "s"
    L = s.tanh()
    L.label = "L"
    trace = tg.explain(L, quiet=True)
    for line in trace:
        print("  " + line)
    n_tanh = sum(1 for line in trace if "(1 - L.data**2)" in line)
    print(f"tanh's local derivative was computed {n_tanh} time(s), used for a, b and c")

    print(f"== {N_INPUTS} inputs: one forward + one backward gives all {N_INPUTS} gradients ==")
    rng = random.Random(0)
    ws = [Value(rng.uniform(-1, 1)) for _ in range(N_INPUTS)]
    cs = [rng.uniform(-1, 1) for _ in range(N_INPUTS)]

    def f(vals):
        return sum((w * cc for w, cc in zip(vals, cs)), 0.0).tanh()

    out = f(ws)
    out.backward()
    # central differences need two evaluations of f per input
    h = 1e-6
    base = [w.data for w in ws]
    worst = 0.0
    for i in range(0, N_INPUTS, 100):  # a sample of inputs, to keep this quick
        plus = base.copy()
        minus = base.copy()
        plus[i] += h
        minus[i] -= h
        fd = (math.tanh(sum(p * cc for p, cc in zip(plus, cs)))
              - math.tanh(sum(m * cc for m, cc in zip(minus, cs)))) / (2 * h)
        worst = max(worst, abs(fd - ws[i].grad))
    print(f"backward passes: 1   gradients filled: {sum(1 for w in ws if w.grad != 0.0)}")
    print(f"central differences would need {2 * N_INPUTS} evaluations of f")
    print(f"sampled inputs agree with central differences to 1e-8: {worst < 1e-8}")
    return {"u": u.data, "y": y.data, "dydx": x.grad, "tensor_grad": xt.grad.item(),
            "trace": trace, "n_tanh": n_tanh, "fd_ok": worst < 1e-8}


if __name__ == "__main__":
    main()

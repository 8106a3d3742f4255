"""Lesson 5 (docs/lessons/05-abs-vs-sqrt.md): same function, different code.

abs(x) and sqrt(x*x) are the same function, but their gradients at 0 differ: abs gives
0.0, sqrt(x*x) gives nan, because backward computes 1/(2*sqrt(0)) = inf and multiplies
it by d(x*x)/dx = 0, and inf * 0 = nan. The fix sqrt(x*x + eps) is finite.
Anomaly mode, which names the sqrt, is lesson material of
`tg.autograd.detect_anomaly` (see docs/lessons/05-abs-vs-sqrt.md).

    python examples/lesson_05_abs_vs_sqrt.py
"""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402

EPS = 1e-12
FORMS = {
    "abs(x)": lambda x: x.abs(),
    "sqrt(x*x)": lambda x: (x * x).sqrt(),
    "sqrt(x*x+eps)": lambda x: (x * x + EPS).sqrt(),
}


def picture():
    """sqrt(x*x) at 0 after backward: sq's gradient is inf, x's nan.
    docs/images/lesson_05_sqrt.svg."""
    x = Value(0.0, label="x")
    sq = x * x
    sq.label = "sq"
    r = sq.sqrt()
    r.label = "r"
    r.backward()
    return r


def grad_value(form, x0):
    x = Value(x0, label="x")
    FORMS[form](x).backward()
    return x.grad


def grad_tensor(form, x0):
    x = tg.tensor(x0, dtype=tg.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        FORMS[form](x).backward()
    return x.grad.item()


def main():
    out = {}
    print("  form               x        grad (tg.Value)       grad (tg.Tensor)")
    for x0 in (-3.0, 0.0):
        for form in FORMS:
            g, gt = grad_value(form, x0), grad_tensor(form, x0)
            out[(form, x0)] = (g, gt)
            print(f"  {form:<14} {x0:5.1f}   {g!r:>20}   {gt!r:>20}")
    print("== why nan: the narrated backward of sqrt(x*x) at 0 ==")
    x = Value(0.0, label="x")
    sq = x * x
    sq.label = "sq"
    r = sq.sqrt()
    r.label = "r"
    trace = tg.explain(r, quiet=True)
    for line in trace:
        print("  " + line)
    print("0.5 / 0.0 = inf; inf * 0.0 (= d(x*x)/dx at 0, as x.data) = nan")
    out["trace"] = trace
    return out


if __name__ == "__main__":
    main()

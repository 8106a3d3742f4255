"""Lesson 4 (docs/lessons/04-taxi-fare.md): autodiff differentiates the branch that ran.

    def fare(d):            # d in km; price in won
        if d <= 2: return 4000 + 0*d
        else:      return 4000 + 1000*(d - 2)

fare(1.5) = 4000 with gradient 0; fare(5) = 7000 with gradient 1000 (not 1400, the
average price per km); at the kink d = 2 the gradient is that of the branch the code
took: 0 with `<=`, 1000 with `<`.

    python examples/lesson_04_taxi_fare.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad import Value  # noqa: E402


def fare(d):
    if d <= 2:
        return 4000 + 0 * d
    else:
        return 4000 + 1000 * (d - 2)


def fare_lt(d):
    """The same price list written with `<`: the same prices, a different gradient at 2."""
    if d < 2:
        return 4000 + 0 * d
    else:
        return 4000 + 1000 * (d - 2)


def picture():
    """fare(5) as a graph (tg.Value, after backward): only the `else` branch was
    recorded. docs/images/lesson_04_fare.svg."""
    d = Value(5.0, label="d")
    y = fare(d)
    y.label = "fare"
    y.backward()
    return y


def grad_of(fn, km, kind):
    if kind == "Value":
        d = Value(km)
        y = fn(d)
        y.backward()
        return y.data, d.grad
    d = tg.tensor(km, dtype=tg.float64, requires_grad=True)
    y = fn(d)
    y.backward()
    return y.item(), d.grad.item()


def main():
    results = {}
    print("  code        d (km)   fare (won)   d fare / d d   (tg.Value | tg.Tensor)")
    for name, fn, km in (("d <= 2", fare, 1.5), ("d <= 2", fare, 5.0),
                         ("d <= 2", fare, 2.0), ("d < 2", fare_lt, 2.0)):
        v = grad_of(fn, km, "Value")
        t = grad_of(fn, km, "Tensor")
        results[(name, km)] = (v, t)
        print(f"  {name:<10} {km:7.1f} {v[0]:12.1f} {v[1]:14.1f}   | {t[0]:.1f} {t[1]:.1f}")
    print(f"average price per km at 5 km: {fare(5.0) / 5.0:.1f} won (not the gradient)")
    return results


if __name__ == "__main__":
    main()

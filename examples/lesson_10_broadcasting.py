"""Lesson 10 (docs/lessons/10-broadcasting.md): broadcasting's backward is a sum.

`x + b` with x (4, 3) and b (3,) adds b to every row: broadcasting copies b four times.
A value used four times receives the sum of four gradients (lesson 6), so b.grad is the
incoming gradient summed over the rows: `g.sum(0)`. The same for every broadcast: sum
over the dims that were added in front, and (keeping them) over the dims of size 1 that
were stretched. The script checks that rule on the bias, a column, a scalar and an outer
sum, shows that four explicit copies and `b.expand(4, 3)` give the same gradient, writes
the rule as a 6-line function `unbroadcast(g, shape)` and compares it with autograd on
random shapes, and shows what forgetting the sum looks like to `tg.testing.compare`.

    python examples/lesson_10_broadcasting.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad.testing import compare  # noqa: E402

SEED = 0
N_RANDOM = 200          # random shape pairs for unbroadcast vs autograd


def unbroadcast(g, shape):
    """Sum the gradient `g` (the broadcast result's shape) back to an input's `shape`."""
    g = np.asarray(g)
    while g.ndim > len(shape):                    # dims broadcasting added in front
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):           # dims of size 1 it stretched
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def weights(shape):
    """A fixed, non-uniform upstream gradient: L = (y * m).sum() gives dL/dy = m."""
    return tg.arange(float(np.prod(shape))).reshape(shape)


def grads_of(shapes, out_shape):
    """Leaves of the given shapes, y = their broadcast sum, L = (y * m).sum(); backward."""
    leaves = [tg.ones(s, dtype=tg.float64, requires_grad=True) for s in shapes]
    y = leaves[0]
    for t in leaves[1:]:
        y = y + t
    m = weights(out_shape).to(tg.float64)
    (y * m).sum().backward()
    return [t.grad.numpy() for t in leaves], m.numpy()


def picture():
    """y = x + b, L = (y * m).sum(), after backward(retain_graph=True):
    docs/images/lesson_10_bias.svg."""
    x = tg.zeros(4, 3, dtype=tg.float64, requires_grad=True); x.name = "x"
    b = tg.zeros(3, dtype=tg.float64, requires_grad=True); b.name = "b"
    y = x + b; y.name = "y"
    m = weights((4, 3)).to(tg.float64); m.name = "m"
    loss = (y * m).sum(); loss.name = "L"
    loss.backward(retain_graph=True)
    return loss


def main():
    print("== a bias: y = x + b, x (4, 3), b (3,); L = (y * m).sum(), so dL/dy = m ==")
    (gx, gb), m = grads_of([(4, 3), (3,)], (4, 3))
    print("dL/dy = m =")
    print(m)
    print(f"b.grad          = {gb}")
    print(f"m.sum(0)        = {m.sum(0)}   (b was copied to the 4 rows: 4 uses, 4 shares)")
    print(f"x.grad == m: {np.array_equal(gx, m)}   (x was not broadcast: no sum)")

    print("== other broadcasts: sum over what was added or stretched ==")
    cases = {}
    for label, shapes, out in (("column c (4, 1) + x (4, 3)", [(4, 1), (4, 3)], (4, 3)),
                               ("scalar s () + x (4, 3)", [(), (4, 3)], (4, 3)),
                               ("outer sum u (4, 1) + v (1, 3)", [(4, 1), (1, 3)], (4, 3)),
                               ("v (3,) + x (2, 4, 3)", [(3,), (2, 4, 3)], (2, 4, 3))):
        gs, m = grads_of(shapes, out)
        cases[label] = gs
        print(label)
        for shape, g in zip(shapes, gs):
            if tuple(shape) == out:
                continue
            print(f"  grad of the {shape} input: {g.tolist()}"
                  f"  = unbroadcast(m, {shape}): {np.array_equal(g, unbroadcast(m, shape))}")

    print("== broadcasting is copying: the same gradient three ways ==")
    x = tg.zeros(4, 3, dtype=tg.float64)
    m = weights((4, 3)).to(tg.float64)
    ways = {}
    for way in ("broadcast", "expand", "four copies"):
        b = tg.zeros(3, dtype=tg.float64, requires_grad=True)
        if way == "broadcast":
            y = x + b
        elif way == "expand":
            y = x + b.expand(4, 3)
        else:
            y = tg.stack([x[i] + b for i in range(4)])
        (y * m).sum().backward()
        ways[way] = b.grad.numpy()
        print(f"  {way:12s} b.grad = {b.grad.tolist()}")

    print("== the rule in tg.explain's table (column unbroadcast) ==")
    b = tg.zeros(3, dtype=tg.float64, requires_grad=True); b.name = "b"
    with tg.autograd.record_sites():
        loss = ((x + b) * m).sum()
    table = tg.explain(loss, quiet=True)
    for line in table:
        print("  " + line)

    print(f"== unbroadcast vs autograd on {N_RANDOM} random shape pairs ==")
    rng = np.random.default_rng(SEED)
    agree = 0
    for _ in range(N_RANDOM):
        out = tuple(int(s) for s in rng.integers(1, 4, size=rng.integers(0, 4)))
        shape = tuple(1 if rng.random() < 0.4 else s for s in out)[rng.integers(0, len(out) + 1):]
        (g_small, _), g = grads_of([shape, out], out)
        agree += np.array_equal(unbroadcast(g, shape), g_small) and g_small.shape == shape
    print(f"equal (values and shape): {agree} of {N_RANDOM}")

    print("== forgetting the sum: tg.testing.compare sees the shape ==")
    b = tg.zeros(3, dtype=tg.float64, requires_grad=True)
    ((x + b) * m).sum().backward()
    try:
        compare("b", m.numpy(), b)                 # the broadcast gradient, not summed
    except ValueError as e:
        print(f"ValueError: {e}")
    compare("b", m.numpy().sum(0), b)
    return {"gb": gb, "gx": gx, "m": m.numpy(), "cases": cases, "ways": ways,
            "agree": agree, "table": table}


if __name__ == "__main__":
    main()

"""Bench: tg.Value vs micrograd's Value on the same scalar graph (build + backward).

The graph: micrograd's README model, an MLP 2-16-16-1 (ReLU) on a batch of 2-D points
with an SVM max-margin loss plus L2, the workload of micrograd's demo notebook. Both
engines run the same Python code (the MLP below is written against a `Value` class
passed in), in the same process, alternating, with the garbage collector ON as in real
use (micrograd's per-node closures make reference cycles; the cyclic collector pays for
them). Prints the time per step of each and the ratio tg/micrograd (target <= 0.5).

    python bench/bench_value.py [--batch 32] [--steps 5]
"""
import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tapegrad.value import Value as TGValue  # noqa: E402


def make_mlp(Value, sizes, rng):
    layers = []
    for nin, nout in zip(sizes[:-1], sizes[1:]):
        layers.append([([Value(rng.uniform(-1, 1)) for _ in range(nin)], Value(0.0))
                       for _ in range(nout)])
    return layers


def forward(layers, x):
    for li, layer in enumerate(layers):
        last = li == len(layers) - 1
        out = []
        for w, b in layer:
            act = sum((wi * xi for wi, xi in zip(w, x)), b)
            out.append(act if last else act.relu())
        x = out
    return x[0]


def step(Value, layers, X, y):
    """One training step's graph: forward over the batch, loss, backward."""
    scores = [forward(layers, x) for x in X]
    losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    params = [p for layer in layers for w, b in layer for p in w + [b]]
    reg = 1e-4 * sum((p * p for p in params))
    loss = data_loss + reg
    for p in params:
        p.grad = 0
    loss.backward()
    return loss.data, [p.grad for p in params]


def bench(Value, X, y, steps, seed=0, clock=time.process_time):
    """Per-step times (CPU time of this process by default: other processes on a busy
    machine disturb it less than wall time). Returns (best, median, last result)."""
    rng = random.Random(seed)
    layers = make_mlp(Value, [2, 16, 16, 1], rng)
    times = []
    for _ in range(steps):
        t0 = clock()
        out = step(Value, layers, X, y)
        times.append(clock() - t0)
    return min(times), sorted(times)[len(times) // 2], out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--skip-gc-off", action="store_true",
                    help="skip the second measurement with the garbage collector off")
    args = ap.parse_args(argv)
    rng = random.Random(1)
    X = [[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(args.batch)]
    y = [1.0 if a * b > 0 else -1.0 for a, b in X]
    gc.enable()
    try:
        from micrograd.engine import Value as MGValue
    except ImportError:
        MGValue = None
    best_tg, med_tg, out_tg = bench(TGValue, X, y, args.steps)
    print(f"tg.Value   : best {best_tg * 1e3:8.1f} ms   median {med_tg * 1e3:8.1f} ms  "
          f"CPU time per step (batch {args.batch}, MLP 2-16-16-1, gc on)")
    if MGValue is None:
        print("micrograd not installed (pip install micrograd): no ratio")
        return None
    best_mg, med_mg, out_mg = bench(MGValue, X, y, args.steps)
    print(f"micrograd  : best {best_mg * 1e3:8.1f} ms   median {med_mg * 1e3:8.1f} ms")
    same = abs(out_tg[0] - out_mg[0]) <= 1e-12 * max(1.0, abs(out_mg[0])) and all(
        abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(out_tg[1], out_mg[1]))
    ratio = med_tg / med_mg
    # The same with the cyclic garbage collector off: the pure Python cost of each engine
    # (micrograd's reference cycles are then never collected while this runs).
    if not args.skip_gc_off:
        gc.disable()
        try:
            _, med_tg0, _ = bench(TGValue, X, y, args.steps)
            _, med_mg0, _ = bench(MGValue, X, y, args.steps)
        finally:
            gc.enable()
        print(f"gc off     : tg.Value {med_tg0 * 1e3:.1f} ms, micrograd {med_mg0 * 1e3:.1f} "
              f"ms, ratio {med_tg0 / med_mg0:.3f} (micrograd's garbage is then never freed)")
    print(f"ratio tg/micrograd (median): {ratio:.3f}  (target <= 0.5)   "
          f"same loss and grads: {same}")
    return ratio


if __name__ == "__main__":
    main()

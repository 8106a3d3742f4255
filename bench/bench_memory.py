"""Bench: memory held by the graph with and without checkpointing, and under no_grad.

A chain of n tanh(Linear) layers (width W, batch B, float32). For each setting it
prints the bytes the live graph holds after forward (`tg.utils.memory.saved_bytes`,
activations only: parameters and the input exist anyway), the peak NumPy memory
during forward + backward (tracemalloc: NumPy reports its buffers to it; this
includes the parameter gradients, which backward collects before it accumulates
them), the best time of one forward + backward (without tracemalloc), and whether
the gradients equal the plain run's.

Checkpointing with s segments keeps the s-1 segment ends plus the last segment's
values: about n/s + s activations of 2-3 arrays each, smallest near s = sqrt(n). The
price is one more forward of every checkpointed layer.

    python bench/bench_memory.py [--layers 64] [--width 128] [--batch 512] [--repeat 5]
"""
import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402
from tapegrad.utils.checkpoint import checkpoint_sequential  # noqa: E402
from tapegrad.utils.memory import saved_bytes  # noqa: E402


def make_model(n, width, seed=0):
    tg.manual_seed(seed)
    params = [(tg.randn(width, width) * (1.0 / width ** 0.5), tg.zeros(width))
              for _ in range(n)]
    for w, b in params:
        w.requires_grad_()
        b.requires_grad_()
    layers = [(lambda h, w=w, b=b: tg.tanh(h @ w + b)) for w, b in params]
    return layers, [t for p in params for t in p]


def run(layers, params, x, segments, trace):
    """One forward + backward; returns (graph bytes after forward, peak bytes, seconds)."""
    for p in params:
        p.grad = None
    if trace:
        tracemalloc.start()
        tracemalloc.reset_peak()
    t0 = time.perf_counter()
    if segments == "no_grad":
        with tg.no_grad():
            h = x
            for f in layers:
                h = f(h)
        held = saved_bytes(h)
    else:
        if segments:
            h = checkpoint_sequential(layers, segments, x)
        else:
            h = x
            for f in layers:
                h = f(h)
        held = saved_bytes(h)
        (h * h).mean().backward()
    dt = time.perf_counter() - t0
    peak = None
    if trace:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return held, peak, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=64)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    layers, params = make_model(a.layers, a.width)
    x = tg.randn(a.batch, a.width)
    act = a.batch * a.width * 4
    print(f"{a.layers} layers tanh(h @ W + b), width {a.width}, batch {a.batch}, float32; "
          f"one activation = {act / 2**20:.3f} MiB")
    print(f"{'setting':>16} {'graph MiB':>10} {'activations':>11} {'peak MiB':>9} "
          f"{'time ms':>8}  grads == plain")
    ref = None
    rows = []
    for seg in [0, 2, 4, int(round(a.layers ** 0.5)), 16, 32, "no_grad"]:
        if seg in [r[0] for r in rows] or (isinstance(seg, int) and seg > a.layers):
            continue
        held, peak, _ = run(layers, params, x, seg, trace=True)
        dt = min(run(layers, params, x, seg, trace=False)[2] for _ in range(a.repeat))
        same = ""
        if seg != "no_grad":
            grads = [p.grad.numpy().copy() for p in params]
            if ref is None:
                ref = grads
            same = all(np.array_equal(u, v) for u, v in zip(ref, grads))
        name = ("plain" if seg == 0 else "no_grad (fwd)" if seg == "no_grad"
                else f"checkpoint s={seg}")
        rows.append((seg, held))
        print(f"{name:>16} {held / 2**20:10.2f} {held / act:11.1f} {peak / 2**20:9.2f} "
              f"{dt * 1e3:8.1f}  {same}")
    return rows


if __name__ == "__main__":
    main()

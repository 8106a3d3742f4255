"""Benchmark: issue 30's compiled rows, each timed in ONE interleaved run with its eager
and reference rows (a quick check of the goals between full bench/run.py runs).

  w2   tanh(a*b+c).sum() on 8x8 float32, forward+backward (bench/run.py (d)), the call
       compiled; reference torch; goal compiled <= 0.25x torch
  w3   the 784-256-128-10 ReLU MLP step, batch 128, F.cross_entropy, SGD (run.py (b)),
       the whole step compiled; reference hand-written NumPy; goal <= 1.05x
  w4   the makemore MLP+BatchNorm step, batch 32 (bench_char.mlp_steps, run.py (e'')),
       the whole step compiled; reference hand-written NumPy; goal <= 1.15x
  gpt  the tiny GPT step (bench_char.gpt_steps, run.py (f)), the whole step compiled
       (AdamW, clip_grad_norm_); reference torch; goal <= 0.8x

Usage: python bench/bench_compile.py [--only w2 w4 ...] [--rounds 10] [--wall]

One BLAS thread, thread CPU time (--wall: the wall clock), freed memory kept in the heap
for every row (tapegrad._alloc.keep_freed_memory, as bench_char.py). The rows of a
workload run in turns (bench_char.best_of_each: the order rotated every round, the min
per row, gc.collect() before each round as bench/run.py's (d): the eager row's garbage
would otherwise start the collector inside the next row's calls), so all see the same
machine: on a shared machine compare these ratios, not
the absolute times. The compiled rows must give the eager row's results bit for bit
(checked before timing where the step returns one: "same results"), and are timed with the eager-vs-replay trial off (every
timed call replays).
"""
import argparse
import os
import sys

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--only", nargs="+", choices=("w2", "w3", "w4", "gpt"))
_p.add_argument("--rounds", type=int, default=10)
_p.add_argument("--wall", action="store_true", help="time with the wall clock")
ARGS = _p.parse_args() if __name__ == "__main__" else _p.parse_args([])
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_here, ".."))
sys.path.insert(0, _here)
import bench_char  # noqa: E402  (sets torch to 1 thread)
import w3_mlp  # noqa: E402
import tapegrad as tg  # noqa: E402
import torch  # noqa: E402

F = tg.nn.functional


def w2_steps():
    """bench/run.py (d): four recorded ops a call; eager, compiled, torch."""
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((8, 8)).astype(np.float32),
              rng.uniform(0.5, 1.5, (8, 8)).astype(np.float32),
              rng.standard_normal((8, 8)).astype(np.float32))

    def make(mod, compiled):
        a, b, c = (mod.tensor(v, requires_grad=True) for v in arrays)

        def fwd_bwd():
            (a * b + c).tanh().sum().backward()
        run = tg.compile(fwd_bwd) if compiled else fwd_bwd

        def step():
            run()
            out = a.grad
            a.grad = b.grad = c.grad = None
            return out
        return step
    return {"eager": make(tg, False), "compiled": make(tg, True), "ref": make(torch, False)}


def w3_steps():
    """bench/run.py (b): the MLP step, hand-written NumPy as the reference."""
    batch, lr = 128, 0.01
    rng = np.random.default_rng(0)
    init = w3_mlp.init(rng)
    X = rng.standard_normal((batch, w3_mlp.SIZES[0])).astype(np.float32)
    Y = rng.integers(0, w3_mlp.SIZES[-1], batch)
    onehot = np.eye(w3_mlp.SIZES[-1], dtype=np.float32)[Y]

    def make(compiled):
        P = [tg.tensor(p.copy(), requires_grad=True) for p in init]
        step = w3_mlp.tg_sgd_step(tg, P, tg.optim.SGD(P, lr=lr))
        run = tg.compile(step) if compiled else step
        x, y = tg.tensor(X), tg.tensor(Y)
        return lambda: run(x, y)

    P = [p.copy() for p in init]
    return {"eager": make(False), "compiled": make(True),
            "ref": lambda: w3_mlp.numpy_step(P, X, onehot, lr)}


def w4_steps():
    eager, np_step = bench_char.mlp_steps(False)
    compiled, _ = bench_char.mlp_steps("step")
    return {"eager": eager, "compiled": compiled, "ref": np_step}


def gpt_steps():
    s = bench_char.gpt_steps()
    return {"eager": s["tapegrad"], "compiled": s["tapegrad, tg.compile(step)"],
            "ref": s["torch"]}


CASES = {"w2": ("W2 tanh(a*b+c).sum() fwd+bwd", w2_steps, "torch", 0.25, 250),
         "w3": ("W3 MLP step (b)", w3_steps, "NumPy", 1.05, 3),
         "w4": ("W4 makemore step", w4_steps, "NumPy", 1.15, 60),
         "gpt": ("tiny GPT step", gpt_steps, "torch", 0.8, 6)}


def _result(out):
    """A step's result as an array, to compare eager and compiled runs bit for bit."""
    if out is None:
        return None
    return np.array(out._data if hasattr(out, "_data") else out, copy=True)


def main():
    from tapegrad._alloc import keep_freed_memory
    keep_freed_memory()
    tg._dynamo.config.fallback_if_slower = False  # every timed compiled call replays
    clock = time.perf_counter if ARGS.wall else time.thread_time
    print(f"1 thread, {'wall' if ARGS.wall else 'CPU'} time, best of {ARGS.rounds * 2} "
          f"interleaved rounds per workload, load average {os.getloadavg()[0]:.2f} at start")
    for name in ARGS.only or CASES:
        title, make, ref, goal, reps = CASES[name]
        steps = make()
        # the compiled step captures on its first call and replays from its second: its
        # results equal eager's from the same state
        same = set()
        for _ in range(4):
            a, b = _result(steps["eager"]()), _result(steps["compiled"]())
            same.add("n/a" if a is None or b is None else
                     bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
        same = same.pop() if len(same) == 1 else False
        t = bench_char.best_of_each(steps, reps, rounds=ARGS.rounds * 2, clock=clock,
                                    before_round=gc.collect)
        r_e, r_c = t["eager"] / t["ref"], t["compiled"] / t["ref"]
        print(f"{title:30s} {ref} {t['ref'] * 1e6:9.1f} us | eager {r_e:5.2f}x | "
              f"compiled {r_c:5.2f}x (goal <= {goal}x: {'met' if r_c <= goal else 'NOT met'}) "
              f"| compiled/eager {t['compiled'] / t['eager']:.2f} | same results: {same}")
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()

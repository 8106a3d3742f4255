"""Benchmark: eager vs `tg.compile` (capture and replay), interleaved in one process.

  gpt  the tiny GPT training step of bench_char.bench_gpt (2 layers, n_embd 64, 4 heads,
       T 16, batch 32, AdamW, clip_grad_norm_), the model compiled with tg.compile
  mlp  the W3 MLP step of bench/run.py (b) (784-256-128-10 ReLU, batch 128,
       F.cross_entropy, SGD by hand), its loss function compiled

Usage: python bench/bench_compile.py [--threads 1] [--rounds 7] [--steps 20]

Each round times `steps` eager steps and `steps` compiled steps (two models from the same
weights; which goes first alternates); the best round of each is reported, with the ratio and the load average. The
losses of the two runs are compared: they must be equal, bit for bit.
"""
import argparse
import os
import sys

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=1)
_p.add_argument("--rounds", type=int, default=7)
_p.add_argument("--steps", type=int, default=20)
_p.add_argument("--only", choices=("gpt", "mlp"))
_p.add_argument("--default-malloc", action="store_true",
                help="keep glibc's malloc defaults (by default, as bench_char.py, "
                     "tapegrad._alloc.keep_freed_memory() for the whole process: both columns)")
_p.add_argument("--cpu-time", action="store_true",
                help="time with this thread's CPU time (time.thread_time): on a loaded shared "
                     "machine the wall clock counts other jobs' time slices too")
ARGS = _p.parse_args() if __name__ == "__main__" else _p.parse_args([])
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)

import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tapegrad as tg  # noqa: E402
from tapegrad.train.char_models import GPT  # noqa: E402

V = 27


def gpt_step(compiled):
    """One tiny-GPT training step (bench_char.bench_gpt's), eager or compiled."""
    T, B = 16, 32
    rng = np.random.default_rng(0)
    Xt, Yt = tg.tensor(rng.integers(0, V, (B, T))), tg.tensor(rng.integers(0, V, (B, T)).reshape(-1))
    tg.manual_seed(0)
    model = GPT(V, T, n_layer=2, n_embd=64, n_head=4)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    if compiled:
        model = tg.compile(model)
    losses = []

    def step():
        loss = tg.nn.functional.cross_entropy(model(Xt).reshape(-1, V), Yt)
        opt.zero_grad()
        loss.backward()
        tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss._data.item())
    return step, losses


def mlp_step(compiled):
    """The (b) MLP step of bench/run.py with F.cross_entropy; the forward+loss compiled."""
    sizes, batch, lr = (784, 256, 128, 10), 128, 0.01
    rng = np.random.default_rng(0)
    P = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        P += [tg.tensor(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                        requires_grad=True),
              tg.tensor(rng.uniform(-bound, bound, fan_out).astype(np.float32),
                        requires_grad=True)]
    x = tg.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
    y = tg.tensor(rng.integers(0, sizes[-1], batch))

    def loss_fn(x, y, W1, b1, W2, b2, W3, b3):
        h = (x @ W1 + b1).relu()
        h = (h @ W2 + b2).relu()
        return tg.nn.functional.cross_entropy(h @ W3 + b3, y)
    fn = tg.compile(loss_fn) if compiled else loss_fn
    losses = []

    def step():
        loss = fn(x, y, *P)
        loss.backward()
        for p in P:
            p.data -= lr * p.grad.data
            p.grad = None
        losses.append(loss._data.item())
    return step, losses


def interleaved(make, rounds, steps):
    clock = time.thread_time if ARGS.cpu_time else time.perf_counter
    (eager, le), (comp, lc) = make(False), make(True)
    eager(), comp()  # the compiled one captures here (and learns its backward next call)
    best = [float("inf"), float("inf")]
    for r in range(rounds):  # the order alternates: neither column always goes first
        for k, fn in (enumerate((eager, comp)) if r % 2 == 0 else
                      reversed(list(enumerate((eager, comp))))):
            t = clock()
            for _ in range(steps):
                fn()
            best[k] = min(best[k], (clock() - t) / steps)
    return best[0], best[1], le == lc


def main():
    from tapegrad._alloc import keep_freed_memory
    malloc = "default" if ARGS.default_malloc else (
        "tuned" if keep_freed_memory() else "default")
    print(f"malloc: {malloc}")
    print(f"threads {ARGS.threads}, {'CPU' if ARGS.cpu_time else 'wall'} time, best of "
          f"{ARGS.rounds} rounds of {ARGS.steps} steps, load average "
          f"{os.getloadavg()[0]:.2f} at start")
    cases = {"gpt": ("tiny GPT step", gpt_step), "mlp": ("W3 MLP step (b)", mlp_step)}
    for name, (title, make) in cases.items():
        if ARGS.only and name != ARGS.only:
            continue
        e, c, same = interleaved(make, ARGS.rounds, ARGS.steps)
        print(f"{title:18s} eager {e * 1e3:8.3f} ms | tg.compile {c * 1e3:8.3f} ms | "
              f"ratio {c / e:.2f}x | losses identical: {same}")
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()

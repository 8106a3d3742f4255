"""cat / stack / split / unbind with many pieces: forward + backward, tapegrad vs torch.

    python bench/bench_cat.py [--sizes 8000,100000] [--threads 1]

Issue 14: the backward of an op of N inputs must be linear in N (it was quadratic:
every rule received all N input arrays and `cat` re-summed the preceding sizes;
100,000 inputs took 297 s). Target: within 3x of torch's time at 8,000 and 100,000
pieces. Each case builds N leaves of shape (4,) (cat/stack) or splits one leaf into N
pieces (split/unbind), then times forward + backward once per round; the best of the
rounds is reported (CPU time of this process: less disturbed by other processes), with
the ratio to torch from the same run.
"""
import argparse
import os
import sys
import time

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--sizes", default="8000,100000", help="numbers of pieces, comma separated")
_p.add_argument("--rounds", type=int, default=3)
_p.add_argument("--threads", type=int, default=1)
ARGS = _p.parse_args()
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)  # must precede `import numpy`
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import tapegrad as tg  # noqa: E402

torch.set_num_threads(ARGS.threads)


def _cat(lib, n):
    xs = [lib.ones(4, requires_grad=True) for _ in range(n)]
    return lambda: lib.cat(xs).sum().backward()


def _stack(lib, n):
    xs = [lib.ones(4, requires_grad=True) for _ in range(n)]
    return lambda: lib.stack(xs, 1).sum().backward()


def _split(lib, n):
    x = lib.ones(n * 4, requires_grad=True)
    w = [float(i % 7) for i in range(n)]

    def run():
        pieces = x.split(4)
        loss = None
        for p, c in zip(pieces[::50], w[::50]):  # a few pieces used, as a real program
            loss = p.sum() * c if loss is None else loss + p.sum() * c
        loss.backward()
    return run


def _unbind(lib, n):
    x = lib.ones(n, 3, requires_grad=True)
    return lambda: lib.stack(x.unbind(0)[::2]).sum().backward()


def _chunk(lib, n):
    x = lib.ones(n * 2, requires_grad=True)
    return lambda: lib.cat(x.chunk(n)[::3]).sum().backward()


CASES = {"cat": _cat, "stack": _stack, "split": _split, "unbind": _unbind, "chunk": _chunk}


def best(make, lib, n):
    times = []
    for _ in range(ARGS.rounds):
        fn = make(lib, n)  # fresh leaves each round (no accumulation into old grads)
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main():
    sizes = [int(s) for s in ARGS.sizes.split(",")]
    print(f"| case | pieces | tapegrad s | torch s | ratio |  (threads {ARGS.threads}, "
          f"best of {ARGS.rounds})")
    print("|---|---:|---:|---:|---:|")
    for name, make in CASES.items():
        for n in sizes:
            t_tg = best(make, tg, n)
            t_torch = best(make, torch, n)
            print(f"| {name} | {n} | {t_tg:.3f} | {t_torch:.3f} | "
                  f"{t_tg / t_torch:.2f} |", flush=True)
    np.seterr(all="ignore")


if __name__ == "__main__":
    main()

"""Micro-benchmark: fused nn kernels vs their op-by-op composites (and PyTorch CPU).

For each kernel: forward + backward time, best of several repeats, float32.
Prints `composite / fused` (how much the fused table entry saves) and
`tapegrad fused / torch` (how far from PyTorch's C++ kernels we are).
Run: python bench/bench_nn.py   (one BLAS thread for both libraries, set below: on a
loaded 2-core machine a multi-threaded OpenBLAS matmul was measured 30x slower)
"""
import os
import sys

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import tapegrad as tg  # noqa: E402
import tapegrad.nn.functional as F  # noqa: E402
from tapegrad.nn import composite_reference as R  # noqa: E402

REPEAT = 50
ROUNDS = 5
torch.set_num_threads(1)
rng = np.random.default_rng(0)


def best(fn):
    t = float("inf")
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(REPEAT):
            fn()
        t = min(t, (time.perf_counter() - t0) / REPEAT)
    return t


def case(name, arrays, fused, composite, torch_fn, ints=()):
    arrays = [a.astype(np.float32) for a in arrays]

    def run_tg(f):
        def go():
            ts = [tg.tensor(a, requires_grad=True) for a in arrays]
            out = f(*ts, *[tg.tensor(i) for i in ints])
            (out if out.ndim == 0 else out.sum()).backward()
        return go

    def run_th():
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        out = torch_fn(*ts, *[torch.tensor(i) for i in ints])
        (out if out.ndim == 0 else out.sum()).backward()

    tf, tc, tt = best(run_tg(fused)), best(run_tg(composite)), best(run_th)
    print(f"{name:<34} fused {tf * 1e6:8.0f} us  composite {tc * 1e6:8.0f} us  "
          f"torch {tt * 1e6:8.0f} us   composite/fused {tc / tf:5.2f}x   fused/torch {tf / tt:5.2f}x")


def main():
    print(f"forward + backward, float32, best of {ROUNDS} x {REPEAT}")
    y = rng.integers(0, 27, 32)
    case("cross_entropy (32, 27)", [rng.standard_normal((32, 27))],
         lambda x, t: F.cross_entropy(x, t), lambda x, t: R.cross_entropy(x, t),
         lambda x, t: TF.cross_entropy(x, t), ints=(y,))
    y = rng.integers(0, 10, 256)
    case("cross_entropy (256, 10) MNIST", [rng.standard_normal((256, 10))],
         lambda x, t: F.cross_entropy(x, t), lambda x, t: R.cross_entropy(x, t),
         lambda x, t: TF.cross_entropy(x, t), ints=(y,))
    bn_args = [rng.standard_normal((32, 200)), rng.standard_normal(200), rng.standard_normal(200)]
    case("batch_norm (32, 200)", bn_args,
         lambda x, w, b: F.batch_norm(x, None, None, w, b, True), R.batch_norm,
         lambda x, w, b: TF.batch_norm(x, None, None, w, b, True))
    ln_args = [rng.standard_normal((64, 256)), rng.standard_normal(256), rng.standard_normal(256)]
    case("layer_norm (64, 256)", ln_args,
         lambda x, w, b: F.layer_norm(x, (256,), w, b),
         lambda x, w, b: R.layer_norm(x, (256,), w, b),
         lambda x, w, b: TF.layer_norm(x, (256,), w, b))
    lin_args = [rng.standard_normal((256, 784)), rng.standard_normal((256, 784)) * 0.03,
                rng.standard_normal(256)]
    case("linear (256, 784) -> 256", lin_args, F.linear, R.linear, TF.linear)
    idx = rng.integers(0, 27, (32, 3))
    case("embedding (27, 10)[32, 3]", [rng.standard_normal((27, 10))],
         lambda w, i: F.embedding(i, w), lambda w, i: R.embedding(i, w),
         lambda w, i: TF.embedding(i, w), ints=(idx,))


if __name__ == "__main__":
    main()

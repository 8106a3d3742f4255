"""Benchmark: one training epoch of the MNIST MLP (784-256-10, ReLU, Adam lr 1e-3, batch
64, shuffled), tapegrad vs PyTorch CPU, same data, same thread count; reported as a ratio.

The data are 60,000 synthetic 28x28 images (full-MNIST size; speed does not depend on the
pixel values, and this machine has no network for the real files). Both loops do the
same work per batch: index the batch, forward, cross-entropy, backward, optimizer step.

Usage: python bench/bench_mnist_epoch.py [--threads 2] [--n 60000] [--batch 64] [--reps 3]
"""
import argparse
import os
import sys

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=2)
_p.add_argument("--n", type=int, default=60000)
_p.add_argument("--batch", type=int, default=64)
_p.add_argument("--reps", type=int, default=3, help="epochs timed per library (best kept)")
ARGS = _p.parse_args() if __name__ == "__main__" else _p.parse_args([])
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)

import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tapegrad as tg  # noqa: E402
from tapegrad.utils.data import DataLoader, TensorDataset  # noqa: E402

torch.set_num_threads(ARGS.threads)


def data(n):
    rng = np.random.default_rng(0)
    x = ((rng.integers(0, 256, (n, 1, 28, 28)).astype(np.float32) / 255 - 0.1307) / 0.3081)
    y = rng.integers(0, 10, n).astype(np.int64)
    return x, y


def epoch_tapegrad(x, y):
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Flatten(), tg.nn.Linear(784, 256), tg.nn.ReLU(),
                             tg.nn.Linear(256, 10))
    opt = tg.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = tg.nn.CrossEntropyLoss()
    loader = DataLoader(TensorDataset(tg.tensor(x), tg.tensor(y)), batch_size=ARGS.batch,
                        shuffle=True, generator=tg.Generator().manual_seed(0))
    t = time.perf_counter()
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    return time.perf_counter() - t, float(loss.item())


def epoch_torch(x, y):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        batch_size=ARGS.batch, shuffle=True, generator=torch.Generator().manual_seed(0))
    t = time.perf_counter()
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    return time.perf_counter() - t, float(loss.item())


def main():
    x, y = data(ARGS.n)
    res = {}
    for name, fn in [("tapegrad", epoch_tapegrad), ("torch", epoch_torch)]:
        times = [fn(x, y)[0] for _ in range(ARGS.reps)]
        res[name] = min(times)
        print(f"{name:>9}: best epoch {min(times):6.2f}s  (all: "
              + ", ".join(f"{t:.2f}" for t in times) + ")")
    print(f"ratio tapegrad / torch = {res['tapegrad'] / res['torch']:.2f}  "
          f"({ARGS.n} images, batch {ARGS.batch}, {ARGS.threads} threads)")


if __name__ == "__main__":
    main()

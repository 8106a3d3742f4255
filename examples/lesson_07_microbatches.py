"""Lesson 7 (docs/lessons/07-microbatches.md): gradient accumulation over micro-batches.

A batch of 32 with a mean loss, split into 4 micro-batches of 8: calling
`(loss_i / 4).backward()` on each and zeroing only after all four gives the gradient of
one backward on the full batch, to float rounding. The model: a linear
model with 3 parameters (2 weights, 1 bias), mean squared error.

    python examples/lesson_07_microbatches.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapegrad as tg  # noqa: E402

BATCH = 32
MICRO = 8
SEED = 0


def grads(model):
    return np.concatenate([p.grad.numpy().reshape(-1).astype(np.float64)
                           for p in model.parameters()])


def picture():
    """The graph of the first micro-batch's loss, divided by 4, after backward
    (retain_graph=True): docs/images/lesson_07_micro.svg."""
    tg.manual_seed(SEED)
    model = tg.nn.Linear(2, 1).to(tg.float64)
    model.weight.name, model.bias.name = "weight", "bias"
    X = tg.randn(BATCH, 2).to(tg.float64)
    y = (X @ tg.tensor([[1.5], [-2.0]]).to(tg.float64) + 0.3
         + 0.1 * tg.randn(BATCH, 1).to(tg.float64))
    loss = tg.nn.functional.mse_loss(model(X[:MICRO]), y[:MICRO]) / (BATCH // MICRO)
    loss.name = "loss_0 / 4"
    loss.backward(retain_graph=True)
    return loss


def run(dtype):
    tg.manual_seed(SEED)
    model = tg.nn.Linear(2, 1).to(dtype)
    X = tg.randn(BATCH, 2).to(dtype)
    y = (X @ tg.tensor([[1.5], [-2.0]]).to(dtype) + 0.3 + 0.1 * tg.randn(BATCH, 1).to(dtype))
    # one backward on the full batch
    data = (X.detach().numpy().copy(), y.detach().numpy().copy(), model.weight.detach().numpy().copy(), model.bias.detach().numpy().copy())
    model.zero_grad()
    tg.nn.functional.mse_loss(model(X), y).backward()
    full = grads(model)
    # four micro-batches, each loss divided by their number, zeroed only before
    model.zero_grad()
    n = BATCH // MICRO
    for i in range(n):
        xb, yb = X[i * MICRO:(i + 1) * MICRO], y[i * MICRO:(i + 1) * MICRO]
        (tg.nn.functional.mse_loss(model(xb), yb) / n).backward()
    acc = grads(model)
    return full, acc, data


def main():
    out = {}
    n_params = None
    for name, dtype, tol in (("float32", tg.float32, 1e-6), ("float64", tg.float64, 1e-14)):
        full, acc, data = run(dtype)
        n_params = full.size
        diff = float(np.max(np.abs(full - acc)))
        out[name] = (full, acc, diff, data)
        print(f"== {name} ==")
        print("full batch   grads: " + "  ".join(f"{g:+.6f}" for g in full))
        print("4 x 8 accum. grads: " + "  ".join(f"{g:+.6f}" for g in acc))
        print(f"max |difference| below {tol:.0e}: {diff < tol}")
    print(f"parameters: {n_params}; batch {BATCH} = {BATCH // MICRO} micro-batches of {MICRO}")
    return out


if __name__ == "__main__":
    main()

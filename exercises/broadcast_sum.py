"""Exercise: broadcasting's backward is a sum (lesson 10).

    y = x @ W             x (5, 3), W (3, 4)
    z = y * s + b / t     s (5, 1) a scale per row, b (4,) a bias, t () a temperature
    loss = (z ** 2).mean()

`dz`, the gradient of the loss w.r.t. z, is given. Fill in dW, ds, db and dt: NumPy
arrays of the shapes of W, s, b and t. Each of s, b and t was broadcast to z's shape
(5, 4), so its gradient is a sum; then run

    python exercises/broadcast_sum.py

to check them against autograd's. The solution is exercises/solutions/broadcast_sum.py
(`python exercises/broadcast_sum.py --solution` checks it).
"""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "exercises")]

import tapegrad as tg  # noqa: E402
from check import check, main  # noqa: E402


def gradients(v):
    """v: the forward values (x, W, s, b, t, y, z) as NumPy arrays, and dz."""
    x, W, s, b, t, y, dz = v["x"], v["W"], v["s"], v["b"], v["t"], v["y"], v["dz"]
    d = {}
    d["W"] = ...    # z = (x @ W) * s + ...: first back through * s, then through x @ W
    d["s"] = ...    # (5, 1): s was stretched over the 4 columns
    d["b"] = ...    # (4,): b / t was added to each of the 5 rows
    d["t"] = ...    # (): t divided every entry of b, and b / t was added to every row
    return d


def forward():
    """The leaves, the forward pass and autograd's backward; returns (values, leaves)."""
    g = tg.Generator().manual_seed(0)
    leaves = {"x": tg.randn(5, 3, generator=g, dtype=tg.float64),
              "W": tg.randn(3, 4, generator=g, dtype=tg.float64),
              "s": tg.rand(5, 1, generator=g, dtype=tg.float64) + 0.5,
              "b": tg.randn(4, generator=g, dtype=tg.float64),
              "t": tg.tensor(2.0, dtype=tg.float64)}
    for leaf in leaves.values():
        leaf.requires_grad_()
    L = leaves
    y = L["x"] @ L["W"]
    z = y * L["s"] + L["b"] / L["t"]
    z.retain_grad()
    (z ** 2).mean().backward()
    values = {k: t.detach().numpy() for k, t in L.items()}
    values.update(y=y.detach().numpy(), z=z.detach().numpy(), dz=z.grad.numpy())
    return values, L


def run(fn=gradients):
    values, leaves = forward()
    return check(fn(values), {name: leaves[name] for name in ("W", "s", "b", "t")})


if __name__ == "__main__":
    main(run, gradients, "exercises/solutions/broadcast_sum.py")

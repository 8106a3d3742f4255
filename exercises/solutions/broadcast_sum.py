"""Solution of exercises/broadcast_sum.py: each broadcast input's gradient is the
incoming gradient summed over the dims broadcasting added or stretched."""
import numpy as np


def gradients(v):
    x, W, s, b, t, y, dz = v["x"], v["W"], v["s"], v["b"], v["t"], v["y"], v["dz"]
    d = {}
    d["W"] = x.T @ (dz * s)                          # s: broadcast over columns, not summed here
    d["s"] = (dz * y).sum(axis=1, keepdims=True)     # stretched dim of size 1: keep it
    d["b"] = (dz / t).sum(axis=0)                    # added in front: sum it away
    d["t"] = np.sum(dz * (-b / t ** 2))              # a scalar: sum over everything
    return d

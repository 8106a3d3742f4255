"""Solution of exercises/shared_node.py: a value used in several places receives the sum
of the gradients of its uses (a * a counts as two uses: 2a)."""
import numpy as np


def gradients(v):
    x, w, a = v["x"], v["w"], v["a"]
    d = {}
    d["a_from_square"] = 2 * a                 # a * a: a * g from each factor
    d["a_from_linear"] = 3 * np.ones_like(a)
    d["a_from_exp"] = np.exp(a)
    d["a"] = d["a_from_square"] + d["a_from_linear"] + d["a_from_exp"]
    d["x"] = w * d["a"]
    d["w"] = x * d["a"]
    return d

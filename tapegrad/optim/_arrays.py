"""Small in-place array helpers shared by the optimizer update functions."""
import numpy as np


def lerp_(a, b, w):
    """a <- a + w * (b - a), in place, with PyTorch's two-branch formula (exact at w=1)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        np.subtract(b, (b - a) * (1 - w), out=a)
    return a

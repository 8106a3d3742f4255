"""Small in-place array helpers shared by the optimizer update functions."""
import numpy as np


def lerp_(a, b, w):
    """a <- a + w * (b - a), in place, with PyTorch's two-branch formula (exact at w=1)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        np.subtract(b, (b - a) * (1 - w), out=a)
    return a


def scalar_dtype():
    """The dtype of 0-d optimizer state (`step`, NAdam's `mu_product`): float64 when the
    default dtype is float64, else float32 (PyTorch's `_get_scalar_dtype`). It matters:
    NAdam's running product is rounded to this dtype every step."""
    from ..dtypes import float64, get_default_dtype
    return np.dtype(np.float64) if get_default_dtype() == float64 else np.dtype(np.float32)

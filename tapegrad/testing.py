"""Testing helpers: compare a hand-derived gradient with autograd's, assert closeness.

`compare(name, manual, tensor)` is the check of the manual-backprop exercise: it
prints whether the hand-computed gradient equals `tensor.grad` exactly, whether it is
close (allclose), and the largest absolute difference, and returns those three.
"""
from collections import namedtuple

import numpy as np

Comparison = namedtuple("Comparison", ["exact", "approx", "maxdiff"])


def _arr(x):
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "_data"):          # a tapegrad tensor
        return np.asarray(x._data)
    if hasattr(x, "detach"):         # a torch tensor that may require grad
        x = x.detach()
    return np.asarray(x)


def compare(name, manual, tensor, rtol=1e-5, atol=1e-8, verbose=True):
    """Compare a manually computed gradient with `tensor.grad` (autograd's)."""
    if tensor.grad is None:
        raise RuntimeError(f"{name}: the tensor has no .grad (call backward first, and "
                           "retain_grad() on intermediate tensors)")
    m, g = _arr(manual), _arr(tensor.grad)
    if m.shape != g.shape:
        raise ValueError(f"{name}: manual gradient has shape {m.shape}, autograd's has "
                         f"{g.shape}")
    exact = bool(np.array_equal(m, g))
    approx = bool(np.allclose(m, g, rtol=rtol, atol=atol))
    maxdiff = float(np.max(np.abs(m - g))) if m.size else 0.0
    if verbose:
        print(f"{name:15s} | exact: {str(exact):5s} | approx: {str(approx):5s} | "
              f"maxdiff: {maxdiff:.3g}")
    return Comparison(exact, approx, maxdiff)


def assert_close(actual, expected, rtol=None, atol=None, msg=None):
    """Like torch.testing.assert_close: tolerances by dtype, a clear report on failure."""
    a, e = _arr(actual), _arr(expected)
    if a.shape != e.shape:
        raise AssertionError(f"shapes differ: {a.shape} vs {e.shape}")
    if rtol is None or atol is None:
        tight = a.dtype == np.float64 or e.dtype == np.float64
        rtol = (1e-7 if tight else 1.3e-6) if rtol is None else rtol
        atol = (1e-7 if tight else 1e-5) if atol is None else atol
    if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        idx = np.unravel_index(np.nanargmax(diff), diff.shape) if diff.size else ()
        raise AssertionError(msg or f"not close: max abs diff {np.nanmax(diff):.3g} at index "
                             f"{idx} (rtol={rtol}, atol={atol})")

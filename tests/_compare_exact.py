"""Exact comparison helpers: NumPy views of tapegrad/torch tensors, values and dtypes equal
within float64 rounding, and a tensor's version counter in either library.
"""
import numpy as np


def _np(t):
    return t.detach().numpy()


def _same(a, b, rtol=1e-12, atol=1e-12):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _version(t):
    return t._version  # an int in both libraries

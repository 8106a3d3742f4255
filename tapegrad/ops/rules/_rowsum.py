"""Reductions over an array's trailing axes, faster than ndarray.sum/max on short rows.

NumPy reduces along a short contiguous last axis one row at a time: on the tiny GPT's
attention scores (32, 4, 16, 16) float32, `s.sum(-1)` takes ~52 us and `s.max(-1)` ~96 us
(1 thread, measured), against ~6 us for the same sum as one BLAS matrix-vector
product and ~31 us for the max over a transposed copy (the max then runs across
contiguous rows). Used inside NumPy kernels only (forward functions), never in
xp-rules; the sums differ from ndarray.sum in the last bits (summation order), the
max is exact.

`sum_leading` is the same trick over the LEADING axes (a bias or norm-weight gradient:
(32, 16, 192) f32 -> (192,)): ones @ a as a vector-matrix product, ~7.5 vs ~19.5 us
(1 thread, measured), and closer to the float64 sum (max error 1.3e-5 vs 4.1e-5 there).
"""
import numpy as np

_ONES = {}
# the ufunc reductions themselves: ndarray.sum/max reach them through NumPy's Python
# wrappers (numpy/_core/_methods.py), one frame more per call
_sum, _max = np.add.reduce, np.maximum.reduce


def _ones(k, dtype):
    key = (k, dtype)
    one = _ONES.get(key)
    if one is None:
        one = _ONES[key] = np.ones(k, dtype=dtype)
        one.flags.writeable = False
    return one


def _trailing(a, axes):
    """k = size of the trailing `axes` when they are the last ones of a float32/float64
    array, else None (the caller falls back to ndarray methods)."""
    nd = a.ndim
    dt = a.dtype
    if dt.kind != "f" or dt.itemsize < 4 or not axes or not nd:
        return None
    if len(axes) == 1:  # the last axis alone (softmax, layer norm): no sort, no loop
        if axes[0] != -1 and axes[0] != nd - 1:
            return None
        k = a.shape[-1]
    else:
        axes = [ax % nd for ax in axes]
        if sorted(axes) != list(range(nd - len(axes), nd)):
            return None
        k = 1
        for ax in axes:
            k *= a.shape[ax]
    return k if k > 1 and a.size else None


def sum_trailing(a, axes=(-1,)):
    """a.sum(axis=axes, keepdims=True) for trailing axes, as a matrix-vector product."""
    k = _trailing(a, axes)
    if k is None:
        return _sum(a, axis=axes, keepdims=True)
    n = len(axes)
    kept = a.shape[:-n] + (1,) * n
    return np.matmul(a.reshape(-1, k), _ones(k, a.dtype)).reshape(kept)


def max_last(a):
    """a.max(axis=-1, keepdims=True) (exact), over a transposed copy for short rows."""
    k = _trailing(a, (-1,))
    if k is None or k > 64:
        return _max(a, axis=-1, keepdims=True)
    rows = np.ascontiguousarray(a.reshape(-1, k).T)          # (k, rows)
    return rows.max(axis=0).reshape(a.shape[:-1] + (1,))


def sum_leading(a, nlead):
    """a.sum(axis=tuple(range(nlead))) as ones @ a (a C-contiguous float32/float64 array;
    others, and nothing to sum, fall back to ndarray.sum)."""
    k = 1
    for n in a.shape[:nlead]:
        k *= n
    if (a.dtype.kind != "f" or a.dtype.itemsize < 4 or nlead < 1 or k < 2 or not a.size
            or not a.flags.c_contiguous):
        return _sum(a, axis=tuple(range(nlead)))
    out = np.matmul(_ones(k, a.dtype), a.reshape(k, -1))
    # (no reshape to the shape it has: that would return a view, and the engine steals
    # only a gradient that owns its memory: a view is copied into `.grad`)
    return out if a.ndim == nlead + 1 else out.reshape(a.shape[nlead:])

"""Gradient clipping: `clip_grad_norm_` and `clip_grad_value_` (in place on `.grad`).

clip_grad_norm_: treat all gradients as one long vector g and compute its p-norm

    total = || ( ||g_1||_p, ||g_2||_p, ... ) ||_p        (p = inf: the largest |g|)

then, if total > max_norm, scale every gradient by max_norm / (total + 1e-6). The 1e-6
keeps the scale finite for zero gradients and makes the clipped norm slightly below
max_norm, exactly as PyTorch does. Returns `total` (the norm BEFORE clipping) as a Tensor.

The common case (p = 2, one real floating dtype) is one pass per gradient: its sum of
squares as a BLAS dot product, the total the square root of their sum (torch's
sqrt(sum ||g_i||^2) up to rounding; ~0.55 -> ~0.15 ms on the tiny GPT's 29 gradients).
A scale of exactly 1 (the norm already small enough) leaves the gradients untouched:
multiplying by 1.0 changes no bit.
"""
import math

import numpy as np

from ...core import tape as _tape
from ..._tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "get_total_norm"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(a, p):
    a = np.abs(a)
    if p == math.inf:
        return a.max() if a.size else np.zeros((), a.dtype)
    if p == -math.inf:
        return a.min()
    if p == 0:
        return np.asarray(np.count_nonzero(a), dtype=a.dtype)
    if p == 1:
        return a.sum()
    if p == 2:
        return np.sqrt(np.sum(a * a))
    return np.sum(a ** p) ** (1.0 / p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The p-norm of the norms of `tensors` (a Tensor or an iterable of them)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._of(np.zeros((), np.float32))
    arrays = [t._data for t in tensors]
    # float16 accumulates in float32 and rounds once, as torch (grads 300 and 400: 500)
    half = all(a.dtype == np.float16 for a in arrays)
    if half:
        arrays = [a.astype(np.float32) for a in arrays]
    if norm_type == 2.0 and _one_real_dtype(arrays):
        total = np.sqrt(np.asarray(sum(float(np.dot(a.ravel(), a.ravel())) for a in arrays),
                                   dtype=arrays[0].dtype))
        total = total.astype(np.float16) if half else total
        _check_finite(total, norm_type, error_if_nonfinite)
        return Tensor._of(np.asarray(total))  # the grads' dtype (Tensor() would cast)
    norms = np.stack([_vector_norm(a, norm_type) for a in arrays])
    total = _vector_norm(norms, norm_type)
    total = total.astype(np.float16) if half else total
    _check_finite(total, norm_type, error_if_nonfinite)
    return Tensor._of(np.asarray(total))


def _one_real_dtype(arrays):
    dtype = arrays[0].dtype
    return dtype.kind == "f" and all(a.dtype == dtype for a in arrays)


def _check_finite(total, norm_type, error_if_nonfinite):
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients of `parameters` in place so their total p-norm is at most
    `max_norm`. Returns the total norm before clipping (a 0-d Tensor)."""
    if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
        if not isinstance(parameters, Tensor):
            parameters = list(parameters)  # (a generator would be spent after one call)
        return _tape.call(clip_grad_norm_, parameters, max_norm, norm_type,
                          error_if_nonfinite, foreach)
    grads = _grads(parameters)
    if not grads:
        return Tensor._of(np.zeros((), np.float32))
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    coef = float(max_norm) / (total._data + 1e-6)
    coef = np.minimum(coef, 1.0)  # never scale up; nan stays nan (as torch.clamp)
    scale = {}
    for g in grads:
        if not coef == 1.0:  # x * 1.0 == x bit for bit: skip the pass (nan coef scales)
            c = scale.get(g._data.dtype)
            if c is None:
                c = scale[g._data.dtype] = coef.astype(g._data.dtype)
            with np.errstate(invalid="ignore"):  # inf * 0 -> nan, silently as torch
                g._data *= c
        g._version_counter[0] += 1
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of `clip_grad_norm_` (kept because PyTorch keeps it)."""
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
        if not isinstance(parameters, Tensor):
            parameters = list(parameters)  # (a generator would be spent after one call)
        return _tape.call(clip_grad_value_, parameters, clip_value, foreach)
    clip_value = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._data, -clip_value, clip_value, out=g._data)
        g._version_counter[0] += 1

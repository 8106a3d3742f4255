"""Stable softmax and log_softmax as fused primitives.

Composite forms (exp / sum) need no derivative code, but they overflow for large
inputs and record several nodes. The fused forms subtract the row maximum and have
one rule each, computed from the saved output:
    softmax:     dx = s * (g - sum(g * s))
    log_softmax: dx = g - exp(ls) * sum(g)
"""
import numpy as np

from ..registry import defop


def _dense(x):
    """torch's softmaxes compute on a contiguous input: their results are contiguous."""
    # (a copy in C order; not np.ascontiguousarray, which makes a 0-d array 1-d)
    return x.copy() if type(x) is np.ndarray and not x.flags.c_contiguous else x


def _softmax_forward(x, axis):
    x = _dense(x)
    # initial=-inf: an empty axis has no maximum (NumPy raises); the result is empty
    z = x - np.amax(x, axis=axis, keepdims=True, initial=-np.inf)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax_forward(x, axis):
    x = _dense(x)
    z = x - np.amax(x, axis=axis, keepdims=True, initial=-np.inf)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


softmax = defop("softmax", _softmax_forward, vjp=[
    lambda xp, g, ans, x, axis: ans * (g - xp.sum(g * ans, axis=axis, keepdims=True))
], jvp=lambda xp, t, ans, x, axis: ans * (t[0] - xp.sum(t[0] * ans, axis=axis, keepdims=True)), reads=["ans"],
    text="dx = ans*(g - sum(g*ans))",
    hint=("softmax's rule uses the output, in [0, 1]: finite for finite inputs (a slice of all"
          " -inf is nan already in forward)"))

log_softmax = defop("log_softmax", _log_softmax_forward, vjp=[
    lambda xp, g, ans, x, axis: g - xp.exp(ans) * xp.sum(g, axis=axis, keepdims=True)
], jvp=lambda xp, t, ans, x, axis: t[0] - xp.sum(xp.exp(ans) * t[0], axis=axis, keepdims=True), reads=["ans"],
    text="dx = g - exp(ans)*sum(g)",
    hint=("log_softmax's rule uses exp(output), in [0, 1]: finite for finite inputs (a slice "
          "of all -inf is nan already in forward)"))

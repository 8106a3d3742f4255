"""`tapegrad.nn.composite_reference`: composite (op-by-op) reference versions of the fused
nn kernels.

These are the formulas written with ordinary tapegrad ops, so every step records its
own node and takes its derivative from the generic table entries. They are slower and
use more memory than the fused kernels in `tapegrad/ops/rules/nn.py`, but each line is
easy to check; the tests assert that both give the same values and gradients
(worked examples 8 and 9).
"""
import numpy as np

from ..ops import pointwise as _pointwise
from ..ops import products as _products
from ..ops import reductions as _reductions
from ..ops import shape as _shape
from .._tensor import Tensor


def onehot(target, num_classes, dtype=np.float64):
    """A constant (n, C) matrix with a 1 at (i, target[i])."""
    t = np.asarray(target._data if isinstance(target, Tensor) else target).reshape(-1)
    m = np.zeros((t.size, num_classes), dtype=dtype)
    m[np.arange(t.size), t] = 1.0
    return Tensor._of(m)


def linear(x, w, b=None):
    """Y = X W^T + b with matmul, transpose and add: three nodes."""
    y = _products.matmul(x, _shape.t(w))
    return y if b is None else y + b


def cross_entropy(logits, target, return_logprobs=False):
    """Mean cross-entropy as log_softmax -> pick -> mean (the "pick" multiplies by a
    one-hot matrix). With `return_logprobs` also returns the log-probabilities, whose
    gradient is -1/n at the picked entries and 0 elsewhere (worked example 8)."""
    n, C = logits.shape
    logp = _reductions.log_softmax(logits, 1)                               # (n, C)
    picked = _reductions.sum(logp * onehot(target, C, logits.dtype), 1)     # (n,)
    loss = -_reductions.mean(picked)
    return (loss, logp) if return_logprobs else loss


def batch_norm(x, w=None, b=None, eps=1e-5, correction=0):
    """Training-mode batch norm, step by step (x: (N, C) or (N, C, L) ...).

    correction=0: PyTorch's biased variance (divide by n); 1: Bessel's (n - 1)."""
    axes = (0,) + tuple(range(2, x.ndim))
    n = 1
    for a in axes:
        n *= x.shape[a]
    mean = _reductions.mean(x, axes, keepdim=True)                          # (1, C, 1...)
    xc = x - mean
    var = _reductions.sum(xc * xc, axes, keepdim=True) / (n - correction)
    xhat = xc / _pointwise.sqrt(var + eps)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if w is not None:
        xhat = xhat * _shape.reshape(w, shape)
    if b is not None:
        xhat = xhat + _shape.reshape(b, shape)
    return xhat


def layer_norm(x, normalized_shape, w=None, b=None, eps=1e-5):
    """Layer norm over the trailing dims, step by step (biased variance)."""
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = _reductions.mean(x, axes, keepdim=True)
    xc = x - mean
    var = _reductions.mean(xc * xc, axes, keepdim=True)
    y = xc / _pointwise.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def embedding(idx, w):
    """W[idx] as onehot(idx) @ W: the backward onehot^T @ dY IS the scatter-add."""
    idx_arr = np.asarray(idx._data if isinstance(idx, Tensor) else idx)
    oh = onehot(idx_arr, w.shape[0], w.dtype)                     # (numel, V)
    out = _products.matmul(oh, w)                                         # (numel, D)
    return _shape.reshape(out, idx_arr.shape + (w.shape[1],))


def gelu_tanh(x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + _pointwise.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x * x * x)))


def binary_cross_entropy_with_logits(x, y):
    """Mean of (1 - y) x + log(1 + exp(-x)) written with max/abs for stability."""
    sp = _pointwise.relu(-x) + _pointwise.log(1.0 + _pointwise.exp(-_pointwise.abs(x)))
    return _reductions.mean((1.0 - y) * x + sp)

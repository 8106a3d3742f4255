"""The fused attention primitive behind `F.scaled_dot_product_attention`, and its
composite reference.

`fused_scaled_dot_product_attention` calls the fused table entry (ops/rules/attention.py);
`sdpa_reference` is the same math op by op (matmul -> mask -> softmax -> matmul),
kept as the reference the tests compare the fused backward against.
"""
import math

import numpy as np

from ...core import tape as _tape
from ...core.record import apply
from ...ops import pointwise as _pointwise
from ...ops import products as _products
from ...ops import reductions as _reductions
from ...ops import shape as _shape
from ...ops.rules import attention as _A
from ...random import rng
from ..._tensor import Tensor

__all__ = ["fused_scaled_dot_product_attention", "sdpa_reference"]


def _mask_array(attn_mask):
    if attn_mask is None:
        return None
    m = attn_mask._data if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
    return m


def _check(query, key, value):
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            "scaled_dot_product_attention: expected query (..., T, D), key (..., S, D) and "
            f"value (..., S, Dv), got {tuple(query.shape)}, {tuple(key.shape)} and "
            f"{tuple(value.shape)}")


def fused_scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                       is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v, fused (one node, one backward rule)."""
    _check(query, key, value)
    if dropout_p:
        # Dropout on the attention weights needs the composite path (the same keep/scale
        # rule as F.dropout, written here so that this module does not import functional).
        p = sdpa_reference(query, key, value, attn_mask, is_causal, scale, probs_only=True)
        keep = _tape.host(_keep_mask, tuple(p.shape), p.dtype, dropout_p)  # tg.compile
        return _products.matmul(p * Tensor._of(keep), value)
    return apply(_A.scaled_dot_product_attention, query, key, value,
                 attn_mask=_mask_array(attn_mask), is_causal=bool(is_causal), scale=scale)


def sdpa_reference(query, key, value, attn_mask=None, is_causal=False, scale=None,
                   probs_only=False):
    """The composite: every step its own node, differentiated by the generic rules."""
    _check(query, key, value)
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    s = _products.matmul(query, _shape.transpose(key, -1, -2)) * sc                  # (..., T, S)
    T, S = query.shape[-2], key.shape[-2]
    if is_causal:
        keep = _tape.const(np.tril(np.ones((T, S), dtype=bool)))  # from shapes only
        s = _pointwise.where(keep, s, float("-inf"))
    m = _mask_array(attn_mask)
    if m is not None:
        s = _pointwise.where(m, s, float("-inf")) if m.dtype == np.bool_ else s + Tensor._of(m)
    p = _reductions.softmax(s, -1)
    return p if probs_only else _products.matmul(p, value)                        # (..., T, Dv)


def _keep_mask(shape, dtype, dropout_p):
    """Dropout's keep mask, scaled (F.dropout's rule), drawn from tapegrad.random."""
    keep = (rng(None).random(shape) >= dropout_p).astype(dtype)
    keep *= np.asarray(0.0 if dropout_p >= 1 else 1.0 / (1.0 - dropout_p), dtype=dtype)
    return keep

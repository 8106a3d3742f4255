"""`F.scaled_dot_product_attention` with PyTorch's full signature and semantics.

    out = softmax(q @ k^T * scale + mask) @ v       q (..., L, E), k (..., S, E), v (..., S, Ev)

- `attn_mask` bool: keep where True; float: added to the scores (it may require grad).
- `is_causal`: keys after the query position are masked (top-left aligned, as torch);
  together with `attn_mask` it is an error, as in torch.
- `scale` defaults to 1/sqrt(E); `enable_gqa` repeats key/value heads (dim -3).
- A query row whose keys are ALL masked gives zeros (torch's "safe softmax"), not nan.

No mask and no dropout goes to the fused table entry (one node, one backward rule) via
`functional_attention.scaled_dot_product_attention`; everything else is a composite of
public ops so that masks may be learned and dropout can act on the weights.
"""
import math

import numpy as np

import tapegrad as tg

from ..core import tape as _tape
from ..random import rng as _rng
from .._tensor import Tensor
from .functional_attention import scaled_dot_product_attention as _fused

__all__ = ["scaled_dot_product_attention"]


def _check_tensor(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be a Tensor, "
                        f"not {type(x).__name__}")


def _check_shapes(query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must have at least 2 "
                               f"dimensions (..., seq, features), got shape {tuple(t.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            "scaled_dot_product_attention: expected query (..., L, E), key (..., S, E) and "
            f"value (..., S, Ev), got {tuple(query.shape)}, {tuple(key.shape)} and "
            f"{tuple(value.shape)}")


def _repeat_kv_heads(query, key, value):
    """enable_gqa: each key/value head serves Hq // Hkv consecutive query heads."""
    if query.ndim < 3 or key.ndim < 3:
        return key, value
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hq == hk == hv:
        return key, value
    if hk != hv or hq % hk:
        raise RuntimeError(
            "scaled_dot_product_attention (enable_gqa=True): number of heads in key and value "
            f"must divide the number of heads in query, got query {hq}, key {hk}, value {hv}")
    r = hq // hk
    return tg.repeat_interleave(key, r, dim=-3), tg.repeat_interleave(value, r, dim=-3)


def _as_mask(attn_mask, query):
    if attn_mask is None:
        return None
    m = attn_mask if isinstance(attn_mask, Tensor) else Tensor._of(np.asarray(attn_mask))
    if m.dtype != np.bool_ and not m.is_floating_point():
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {m.dtype} and query.dtype: {query.dtype} instead.")
    return m


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query key^T * scale + mask) value, with torch's arguments (see module doc)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, name)
    _check_shapes(query, key, value)
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    mask = _as_mask(attn_mask, query)
    if is_causal and mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if mask is None and not dropout_p:
        return _fused(query, key, value, is_causal=bool(is_causal), scale=sc)
    return _composite(query, key, value, mask, dropout_p, bool(is_causal), sc)


def _composite(query, key, value, mask, dropout_p, is_causal, sc):
    s = query.matmul(key.transpose(-2, -1)) * sc                       # (..., L, S)
    L, S = query.shape[-2], key.shape[-2]
    dead = None                                                       # rows with no key left
    if is_causal:
        s = tg.where(_tape.const(np.tril(np.ones((L, S), dtype=bool))), s, float("-inf"))
    elif mask is not None:
        if mask.dtype == np.bool_:
            keep = mask._data
            s = tg.where(keep, s, float("-inf"))
            dead = ~np.any(keep, axis=-1, keepdims=True)
        else:
            s = s + mask.to(s.dtype)
            dead = np.all(np.isneginf(mask._data), axis=-1, keepdims=True)
        if not dead.any():
            dead = None
    if dead is not None:
        # Give dead rows finite scores so softmax (and its backward) stays nan-free, then
        # zero their weights: torch's safe softmax.
        s = tg.where(dead, 0.0, s)
    p = s.softmax(-1)
    if dead is not None:
        p = tg.where(dead, 0.0, p)
    if dropout_p:
        # Same rule as F.dropout (the mask drawn from tapegrad.random): keep with 1 - p and
        # scale by 1 / (1 - p); torch applies it whenever dropout_p > 0, training or not.
        if dropout_p == 1.0:
            keep = _tape.const(np.zeros(tuple(p.shape), dtype=p.dtype))
        else:  # a tg.compile replay draws it again (core/tape.py)
            keep = _tape.host(_keep_mask, tuple(p.shape), p.dtype, dropout_p)
        p = p * Tensor._of(keep)
    return p.matmul(value)


def _keep_mask(shape, dtype, dropout_p):
    keep = (_rng(None).random(shape) >= dropout_p).astype(dtype)
    keep *= np.asarray(1.0 / (1.0 - dropout_p), dtype=dtype)
    return keep

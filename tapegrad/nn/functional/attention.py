"""torch.nn.functional's attention functions: `scaled_dot_product_attention` and
`multi_head_attention_forward` (the computation behind `nn.MultiheadAttention`).

`scaled_dot_product_attention`, PyTorch's full signature and semantics:

    out = softmax(q @ k^T * scale + mask) @ v       q (..., L, E), k (..., S, E), v (..., S, Ev)

- `attn_mask` bool: keep where True; float: added to the scores (it may require grad).
- `is_causal`: keys after the query position are masked (top-left aligned, as torch);
  together with `attn_mask` it is an error, as in torch.
- `scale` defaults to 1/sqrt(E); `enable_gqa` repeats key/value heads (dim -3).
- A query row whose keys are ALL masked gives zeros (torch's "safe softmax"), not nan.

No mask and no dropout goes to the fused table entry (one node, one backward rule) via
`_fused_attention.fused_scaled_dot_product_attention`; everything else is a composite of
public ops so that masks may be learned and dropout can act on the weights.

`multi_head_attention_forward`: PyTorch's algorithm, step for step, on sequence-first
tensors (L, N, E):
    project q, k, v (one packed weight, or three when kdim/vdim differ)
    [append bias_k / bias_v as one more key]  ->  split into heads (N*H, L, hd)
    [append a zero key]  ->  merge attn_mask and key_padding_mask into one float mask
    need_weights: explicit softmax (weights returned, averaged over heads by default)
    otherwise:    F.scaled_dot_product_attention (weights not returned)
    out_proj
MHA's masks are the OPPOSITE of scaled_dot_product_attention's: a bool True here means
"may NOT attend" (it becomes -inf); float masks are added.
"""
import math
import warnings

import numpy as np

from ...core import tape as _tape
from ...ops import _opmath
from ...ops.creation import zeros
from ...ops.pointwise import where
from ...ops.indexing import repeat_interleave
from ...ops.shape import cat
from ..._tensor import Tensor
from ._fused_attention import _keep_mask, fused_scaled_dot_product_attention as _fused
from .dropout import dropout
from .linear import linear
from .vision import pad


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
    return repeat_interleave(key, r, dim=-3), repeat_interleave(value, r, dim=-3)


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
    wide = _opmath.widened(query, key, value, mask)
    if wide is not None:  # float16: computed in float32 as torch's CPU kernels
        if not dropout_p and query.ndim == key.ndim == value.ndim == 4:
            return _flash_half(*wide, is_causal, sc)
        return _opmath.rounded(scaled_dot_product_attention(
            *wide, dropout_p=dropout_p, is_causal=is_causal, scale=sc))
    if mask is None and not dropout_p:
        return _fused(query, key, value, is_causal=bool(is_causal), scale=sc)
    return _composite(query, key, value, mask, dropout_p, bool(is_causal), sc)


def _flash_half(query, key, value, mask, is_causal, sc):
    """float16 4-D attention as torch's CPU flash-attention kernel (inputs widened to
    float32): scores and softmax in float32, the unnormalized weights exp(s - max) rounded
    to float16 before the product with value, divided by their float32 sum, rounded once."""
    s = query.matmul(key.transpose(-2, -1)) * sc
    L, S = query.shape[-2], key.shape[-2]
    if is_causal:
        s = where(_tape.const(np.tril(np.ones((L, S), dtype=bool))), s, float("-inf"))
    elif mask is not None:
        s = where(mask._data, s, float("-inf")) if mask.dtype == np.bool_ else s + mask
    m = s.detach().amax(-1, keepdim=True)  # a constant shift: softmax does not change
    m = where(_tape.const(np.isfinite(m._data)), m, 0.0)
    p = (s - m).exp()
    return (p.half().float().matmul(value) / p.sum(-1, keepdim=True)).half()


def _composite(query, key, value, mask, dropout_p, is_causal, sc):
    s = query.matmul(key.transpose(-2, -1)) * sc                       # (..., L, S)
    L, S = query.shape[-2], key.shape[-2]
    dead = None                                                       # rows with no key left
    if is_causal:
        s = where(_tape.const(np.tril(np.ones((L, S), dtype=bool))), s, float("-inf"))
    elif mask is not None:
        if mask.dtype == np.bool_:
            keep = mask._data
            s = where(keep, s, float("-inf"))
            dead = ~np.any(keep, axis=-1, keepdims=True)
        else:
            s = s + mask.to(s.dtype)
            dead = np.all(np.isneginf(mask._data), axis=-1, keepdims=True)
        if not dead.any():
            dead = None
    if dead is not None:
        # Give dead rows finite scores so softmax (and its backward) stays nan-free, then
        # zero their weights: torch's safe softmax.
        s = where(dead, 0.0, s)
    p = s.softmax(-1)
    if dead is not None:
        p = where(dead, 0.0, p)
    if dropout_p:
        # Same rule as F.dropout (the mask drawn from tapegrad.random): keep with 1 - p and
        # scale by 1 / (1 - p); torch applies it whenever dropout_p > 0, training or not.
        if dropout_p == 1.0:
            keep = _tape.const(np.zeros(tuple(p.shape), dtype=p.dtype))
        else:  # a tg.compile replay draws it again (core/tape.py)
            keep = _tape.host(_keep_mask, tuple(p.shape), p.dtype, dropout_p)
        p = p * Tensor._of(keep)
    return p.matmul(value)


def _is_float(m):
    return m.is_floating_point()



def canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """bool mask -> float mask (True -> -inf); float masks pass; other dtypes are errors."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        mask = Tensor._of(np.asarray(mask))
    if mask.dtype != np.bool_ and not _is_float(mask):
        raise AssertionError(f"only bool and floating types of {mask_name} are supported "
                             f"(got {mask.dtype})")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if mask.dtype == np.bool_:
        return Tensor._of(np.where(mask._data, -np.inf, 0.0).astype(target_type))
    return mask



def _dtype_or_none(t):
    return None if t is None else t.dtype



def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) input, False for unbatched (2-D); torch's messages."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     "instead")
            want = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != want:
                raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                     f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")



def _project(query, key, value, w, b, use_separate, q_w, k_w, v_w):
    if not use_separate:
        if w is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:  # self-attention: one matmul, then split
            return linear(query, w, b).chunk(3, dim=-1)
        wq, wk, wv = w.chunk(3)
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
    else:
        for name, t in (("q", q_w), ("k", k_w), ("v", v_w)):
            if t is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        wq, wk, wv = q_w, k_w, v_w
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)



def _pad_last(mask):
    return None if mask is None else pad(mask, (0, 1))



def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Sequence-first multi-head attention (see the module docstring); returns
    (attn_output, attn_weights or None)."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      _dtype_or_none(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone: scaled_dot_product_attention(is_causal=True)
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but "
                               f"should be {(bsz * num_heads, tgt_len, src_len)}.")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must be given together")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key / value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz, num_heads, head_dim, "static_k")
    v = _heads(v, static_v, bsz, num_heads, head_dim, "static_v")
    if add_zero_attn:
        zero_key = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k, v = cat([k, zero_key], dim=1), cat([v, zero_key], dim=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / float(head_dim))).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.matmul(v)                                        # (N*H, L, hd)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    return out, None



def _heads(t, static, bsz, num_heads, head_dim, name):
    """(S, N, E) -> (N*H, S, hd), or the caller's precomputed `static` (N*H, S, hd)."""
    if static is None:
        return t.reshape(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static

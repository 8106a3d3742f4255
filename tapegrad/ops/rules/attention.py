"""Fused scaled-dot-product attention: one table entry with its own backward.

Forward, for queries q (..., T, D), keys k (..., S, D), values v (..., S, Dv):
    s = q @ k^T * scale            (..., T, S)   scale defaults to 1/sqrt(D)
    s = s masked (causal: future keys get -inf; bool mask: False -> -inf; float mask: added)
    p = softmax(s, dim=-1)
    out = p @ v                    (..., T, Dv)
Backward (the softmax rule folded in, p saved from forward):
    dv = p^T @ g
    dp = g @ v^T
    ds = p * (dp - sum(dp * p, -1))
    dq = ds @ k * scale,   dk = ds^T @ q * scale
The composite version (matmul -> masked fill -> softmax -> matmul) is the reference
the tests compare against (`tapegrad.nn.functional._fused_attention.sdpa_reference`).

Two NumPy kernels the rules call through table entries of their own (so that
create_graph records them and differentiates them with their own rules):
`softmax_back_rows` (ds from dp and p, the row sums as a BLAS matrix-vector product)
and `matmul_heads_inner` (a batched matmul written into memory in a given axis order).
The result is laid out like q, and dq, dk, dv like q, k, v (`memory_order`: torch's
CPU kernel does the same): for multi-head code's q, k, v, views of a (B, T, 3 H D)
projection, that is (B, T, H, D) order, so its `transpose(1, 2).reshape(B, T, H * D)`
is a view, not a copy, forward and backward.
"""
import math

import numpy as np

from ._within_rule import within_rule as _call
from ._rowsum import max_last, sum_trailing
from ..registry import defop


_CAUSAL = {}


def _causal(t, s, dtype):
    """The (t, s) additive causal mask (0 on and below the diagonal, -inf above) in
    `dtype`, made once per shape and dtype and kept read-only: building it (np.tril,
    np.where, a float64 -> float32 copy) took ~40 us of each tiny-GPT attention forward
    inside the step (1 thread, measured), more than the q k^T product."""
    key = (t, s, dtype)
    add = _CAUSAL.get(key)
    if add is None:
        if len(_CAUSAL) > 64:  # many sequence lengths: keep the cache small
            _CAUSAL.clear()
        keep = np.tril(np.ones((t, s), dtype=bool))
        add = np.where(keep, 0.0, -np.inf).astype(dtype)
        add.flags.writeable = False
        _CAUSAL[key] = add
    return add


def _mask(t, s, is_causal, attn_mask, dtype=np.float64):
    """Additive float mask of shape broadcastable to (..., T, S), or None (a causal
    mask alone comes in `dtype`, read-only, from `_causal`'s cache)."""
    add = None
    if is_causal:
        add = _causal(t, s, np.dtype(dtype) if attn_mask is None else np.dtype(np.float64))
    if attn_mask is not None:
        m = attn_mask if attn_mask.dtype != np.bool_ else np.where(attn_mask, 0.0, -np.inf)
        add = m if add is None else add + m
    return add


def _scale(q, scale):
    return 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale


def _sdpa_forward(q, k, v, attn_mask=None, is_causal=False, scale=None, **_):
    p = _sdpa_scores_softmax(q, k, attn_mask, is_causal, scale)
    # laid out as torch's CPU kernel lays it out: like the query (4-D, Dv == D), else C
    # order (programs `.view` torch's result, or call `.contiguous()`, a copy or not)
    order = memory_order(q) if v.shape[-1] == q.shape[-1] else _C_ORDER
    return _matmul_heads_inner_forward(p, v, order=order), {"probs": p}


_C_ORDER = (0, 1, 2, 3)
_HEADS_INNER = (0, 2, 1, 3)


def memory_order(x):
    """The axis order of a 4-D (B, H, T, D) array's memory, outermost first, as torch's
    CPU attention lays out a result like its operand: the first three axes by
    decreasing stride (ties in axis order), D last; an operand whose last axis is not
    unit-stride counts as C order (torch makes it contiguous first). nanoGPT's q, k, v
    (`x.view(B, T, H, D).transpose(1, 2)`) give (0, 2, 1, 3): the result's
    `transpose(1, 2).reshape(B, T, H * D)` is then a view, not a copy. Other ranks:
    None."""
    a = getattr(x, "_data", x)
    if np.ndim(a) != 4:
        return None
    st = a.strides
    if st[-1] != a.itemsize:
        return _C_ORDER
    return tuple(sorted(range(3), key=lambda i: -st[i])) + (3,)


def _probs_forward(q, k, attn_mask=None, is_causal=False, scale=None, probs=None):
    if probs is not None:  # saved by the forward (q and k are unchanged: version check)
        return probs
    return _sdpa_scores_softmax(q, k, attn_mask, is_causal, scale)


def _sdpa_scores_softmax(q, k, attn_mask, is_causal, scale):
    sc = _scale(q, scale)
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= sc  # NOTE: in place on the fresh scores (as `s * sc`, one array fewer)
    add = _mask(q.shape[-2], k.shape[-2], is_causal, attn_mask, s.dtype)
    if add is not None:
        if np.broadcast_shapes(add.shape, s.shape) == s.shape:
            s += add.astype(s.dtype, copy=False)
        else:  # a mask with more batch dims than q k^T
            s = s + add.astype(s.dtype, copy=False)
    if 1 < s.shape[-1] <= 64 and s.flags.c_contiguous and s.dtype.kind == "f":
        return _softmax_short_rows(s)
    m = max_last(s)  # row max and row sum: ops/rules/_rowsum.py (short rows: ~4x faster)
    m[~np.isfinite(m)] = 0  # a fully masked row gives nan, as in PyTorch
    s -= m
    e = np.exp(s, out=s)
    with np.errstate(invalid="ignore", divide="ignore"):
        e /= sum_trailing(e)
    return e


def _softmax_short_rows(s):
    """softmax over the last axis of C-contiguous scores with short rows (<= 64 keys),
    computed across a transposed copy: NumPy runs an elementwise op between (..., S)
    and a (..., 1) row value one row at a time, S elements per inner loop, so `s - max`
    and `e / sum` cost more than the exp itself on short rows; on the (S, rows) copy each
    is S passes over contiguous rows (the tiny GPT's (32, 4, 16, 16) float32 scores:
    ~163 -> ~141 us for the whole scores-and-softmax, 1 thread, measured). The same
    formula as the row-wise path below (a fully masked row: nan), the row sums in
    another order."""
    k = s.shape[-1]
    st = np.ascontiguousarray(s.reshape(-1, k).T)  # (S, rows)
    m = np.maximum.reduce(st, axis=0)
    m[~np.isfinite(m)] = 0  # a fully masked row gives nan, as in PyTorch
    st -= m
    np.exp(st, out=st)
    with np.errstate(invalid="ignore", divide="ignore"):
        st /= np.add.reduce(st, axis=0)
    return np.ascontiguousarray(st.T).reshape(s.shape)


# ---- the rules' kernels: table entries with rules of their own ----------------------
def _softmax_back_forward(dp, p):
    """p * (dp - sum(dp * p, -1)) in ONE fresh full-size array (dp * p's buffer is
    reused for dp - s), the row sums as a BLAS matrix-vector product (ops/rules/_rowsum.py:
    on (32, 4, 16, 16) float32 ~10 vs ~41 us for ndarray.sum, measured; the sums may
    differ from ndarray.sum's in the last bits). The reference: `_softmax_back_ref`."""
    t = dp * p
    s = sum_trailing(t)
    if t.shape != np.broadcast_shapes(dp.shape, s.shape) or t.dtype != np.result_type(dp, s):
        return p * (dp - s)
    k = t.shape[-1]
    if 1 < k <= 32 and t.ndim > 1:
        # short rows: NumPy subtracts a (..., 1) row value one row at a time, k elements
        # per inner loop; the row sums repeated k times make it one full-size pass (the
        # same numbers): (32, 4, 16, 16) float32 34 -> 22 us (1 thread, measured)
        s = np.repeat(s.reshape(-1), k).reshape(t.shape)
    r = np.subtract(dp, s, out=t)
    r *= p
    return r


def _softmax_back_ref(xp, dp, p):
    """The formula the kernel computes, in xp (the tests compare the two)."""
    return p * (dp - xp.sum(dp * p, axis=-1, keepdims=True))


def _softmax_back_ddp(xp, u, ans, dp, p):
    # ds is linear in dp with the symmetric Jacobian diag(p) - p p^T: its own adjoint
    return _call(xp, softmax_back_rows, u, p)


def _softmax_back_dprobs(xp, u, ans, dp, p):
    # ds_i = p_i (dp_i - s), s = sum_j dp_j p_j: d/dp_j = delta_ij (dp_i - s) - p_i dp_j
    s = xp.sum(dp * p, axis=-1, keepdims=True)
    return u * (dp - s) - dp * xp.sum(u * p, axis=-1, keepdims=True)


softmax_back_rows = defop(
    "softmax_back_rows", _softmax_back_forward, inputs=("grad", "probs"),
    vjp=[_softmax_back_ddp, _softmax_back_dprobs], reads=["probs", "grad probs"],
    doc="p * (g - sum(g * p, -1)): softmax's backward over the last axis (attention's ds)",
    text="dgrad = p * (g - sum(g*p, -1)) ; dprobs = g*(grad - s) - grad*sum(g*p, -1)",
    hint="finite for finite inputs (p lies in [0, 1] in attention)")


def _matmul_heads_inner_forward(a, b, *, scale=None, order=_HEADS_INNER):
    """a @ b (times `scale`); for (B, H, T, K) @ (B, H, K, D) written into memory laid
    out in `order` (axes outermost first; by default (B, T, H, D), "heads inner") and
    returned as its (B, H, T, D) view; other shapes np.matmul.

    Why: multi-head code moves the heads back next to the features,
    `y.transpose(1, 2).reshape(B, T, H * D)`, and its backward reshapes dq, dk, dv the
    same way. On a (B, H, T, D)-contiguous array that reshape is a copy (~15 us per
    (32, 4, 16, 16) float32 array, measured); heads inner, it is a view. BLAS writes
    the strided output directly (a (T, D) block has row stride H * D, an ordinary
    leading dimension): the values of np.matmul(a, b) * scale."""
    if (a.ndim == 4 and b.ndim == 4 and a.shape[:2] == b.shape[:2] and a.dtype == b.dtype
            and a.dtype.kind == "f" and order is not None):
        shape = a.shape[:3] + b.shape[3:]
        out = np.empty(tuple(shape[i] for i in order), dtype=a.dtype)
        out = out.transpose(np.argsort(order))
        np.matmul(a, b, out=out)
    else:
        out = np.matmul(a, b)
    if scale is not None:
        out *= scale  # in place on the fresh product: the bits of matmul(a, b) * scale
    return out


def _mhi_da(xp, u, ans, a, b, *, scale=None, order=None):
    da = xp.matmul(u, xp.swapaxes(b, -1, -2))
    return da if scale is None else da * scale


def _mhi_db(xp, u, ans, a, b, *, scale=None, order=None):
    db = xp.matmul(xp.swapaxes(a, -1, -2), u)
    return db if scale is None else db * scale


matmul_heads_inner = defop(
    "matmul_heads_inner", _matmul_heads_inner_forward, inputs=("a", "b"),
    vjp=[_mhi_da, _mhi_db], reads=["b", "a"],
    doc="a @ b * scale, the (B, H, T, D) output stored in a given axis order: attention's "
        "result, dq, dk, dv",
    text="da = g @ b^T * scale ; db = a^T @ g * scale",
    hint="finite for finite inputs (a matrix product)")


def _ds_of(xp, dp, p):
    return _call(xp, softmax_back_rows, dp, p)


def _mm(xp, a, b, scale=None, like=None):
    """a @ b * scale laid out as `like` (attention's dq like q, dk like k, dv like v)."""
    return _call(xp, matmul_heads_inner, a, b, scale=scale, order=memory_order(like))


def _probs_dq(xp, u, ans, q, k, attn_mask=None, is_causal=False, scale=None, probs=None):
    ds = _ds_of(xp, u, _probs(xp, q, k, attn_mask, is_causal, scale, probs))
    return _mm(xp, ds, k, _scale(q, scale), like=q)


def _probs_dk(xp, u, ans, q, k, attn_mask=None, is_causal=False, scale=None, probs=None):
    ds = _ds_of(xp, u, _probs(xp, q, k, attn_mask, is_causal, scale, probs))
    return _mm(xp, xp.swapaxes(ds, -1, -2), q, _scale(q, scale), like=k)


# p = softmax(mask(q k^T * scale)) as a table entry of its own: the attention rules read
# p through it, so an ordinary backward reuses the forward's p and create_graph
# differentiates through it (its rules are the softmax and matmul rules).
attention_probs = defop("attention_probs", _probs_forward, inputs=("q", "k"),
                        vjp=[_probs_dq, _probs_dk], reads=["q k", "q k"],
                        doc="softmax(q k^T * scale + mask): the attention weights",
                        text="ds = p * (g - sum(g*p, -1)) ; dq = ds @ k * scale ; "
                             "dk = ds^T @ q * scale",
                        hint=("finite for finite q, k (p lies in [0, 1]); a fully masked row "
                              "has nan weights, as in PyTorch: keep one key per query"))


def _probs(xp, q, k, attn_mask, is_causal, scale, probs):
    """p: the forward's (raw), or recorded through `attention_probs` under create_graph."""
    return _call(xp, attention_probs, q, k, attn_mask=_const(attn_mask), is_causal=is_causal,
                 scale=scale, probs=probs)


def _const(m):
    return None if m is None else np.asarray(getattr(m, "_data", m))


def _ds(xp, g, q, k, v, attn_mask, is_causal, scale, probs):
    p = _probs(xp, q, k, attn_mask, is_causal, scale, probs)
    return _ds_of(xp, xp.matmul(g, xp.swapaxes(v, -1, -2)), p)


def _dq(xp, g, ans, q, k, v, attn_mask=None, is_causal=False, scale=None, probs=None):
    return _mm(xp, _ds(xp, g, q, k, v, attn_mask, is_causal, scale, probs), k,
               _scale(q, scale), like=q)


def _dk(xp, g, ans, q, k, v, attn_mask=None, is_causal=False, scale=None, probs=None):
    ds = _ds(xp, g, q, k, v, attn_mask, is_causal, scale, probs)
    return _mm(xp, xp.swapaxes(ds, -1, -2), q, _scale(q, scale), like=k)


def _dv(xp, g, ans, q, k, v, attn_mask=None, is_causal=False, scale=None, probs=None):
    p = _probs(xp, q, k, attn_mask, is_causal, scale, probs)
    return _mm(xp, xp.swapaxes(p, -1, -2), g, like=v)


def _sdpa_backward(xp, g, ans, q, k, v, attn_mask=None, is_causal=False, scale=None,
                   probs=None):
    """(dq, dk, dv) in one call: ds (a batched matmul and the softmax rule) is computed
    once for dq and dk instead of once per rule (the GPT step: 2 of its 6 attention
    rule calls were this repeat). The per-input rules above stay for tools that need one
    input's rule; both give the same arrays."""
    p = _probs(xp, q, k, attn_mask, is_causal, scale, probs)
    ds = _ds_of(xp, xp.matmul(g, xp.swapaxes(v, -1, -2)), p)
    sc = _scale(q, scale)
    return (_mm(xp, ds, k, sc, like=q), _mm(xp, xp.swapaxes(ds, -1, -2), q, sc, like=k),
            _mm(xp, xp.swapaxes(p, -1, -2), g, like=v))


def _sdpa_node(node):
    q = node.inputs[0]
    if np.ndim(q._data) == 4:
        return "ScaledDotProductFlashAttentionForCpuBackward0"
    return "UnsafeViewBackward0"


scaled_dot_product_attention = defop(
    "scaled_dot_product_attention", _sdpa_forward, extra=True, inputs=("q", "k", "v"),
    vjp=[_dq, _dk, _dv], backward=_sdpa_backward, reads=["q k v", "q k v", "q k"],
    text="dQ, dK, dV through softmax(QK^T/sqrt(d))V",
    hint=("attention's rules go through softmax probabilities in [0, 1]: finite for finite q, "
          "k, v; a query row whose keys are all masked is nan already in forward (mask at "
          "least one key per row)"),
    node=_sdpa_node)

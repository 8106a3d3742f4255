"""scaled_dot_product_attention (torch signature), MultiheadAttention and the transformer
layers against PyTorch 2.13 from identical weights: values, input and parameter gradients,
state-dict keys and shapes; plus a nanoGPT-shaped GPT and word_language_model's
TransformerModel written in those programs' style, run by tapegrad and by torch."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

TOL = {np.float64: dict(rtol=1e-10, atol=1e-10), np.float32: dict(rtol=2e-4, atol=2e-5)}
TDT = {np.float64: torch.float64, np.float32: torch.float32}


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.numpy(force=True))


def _close(a, b, dtype, what):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def _pair(arrays, grad=True):
    return ([tg.tensor(a, requires_grad=grad) for a in arrays],
            [torch.tensor(a, requires_grad=grad) for a in arrays])


def _backward_both(out, tout, seed=7):
    c = np.random.default_rng(seed).standard_normal(tuple(tout.shape)).astype(_np(tout).dtype)
    out.backward(tg.tensor(c))
    tout.backward(torch.tensor(c))


# ---- F.scaled_dot_product_attention ----------------------------------------------------------
SDPA_SHAPES = [((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 6)),    # (B, H, L, E), L == S
               ((2, 3, 4, 4), (2, 3, 7, 4), (2, 3, 7, 5)),    # L != S
               ((4, 3), (6, 3), (6, 2)),                      # no batch dims
               ((2, 2, 2, 3, 4), (2, 2, 2, 5, 4), (2, 2, 2, 5, 4))]  # extra leading dims


def _sdpa_case(shapes, dtype, mask_kind, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    L, S = shapes[0][-2], shapes[1][-2]
    if mask_kind == "bool":
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True  # every query keeps a key
    elif mask_kind == "float":
        m = rng.standard_normal((L, S)).astype(dtype)
    elif mask_kind == "bool_batched":
        m = rng.random(shapes[0][:-2] + (L, S)) > 0.3
        m[..., 0] = True
    else:
        m = None
    return arrays, m


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mask_kind", [None, "causal", "bool", "float", "bool_batched"])
@pytest.mark.parametrize("shapes", SDPA_SHAPES)
def test_sdpa_matches_torch(shapes, mask_kind, dtype):
    arrays, m = _sdpa_case(shapes, dtype, mask_kind)
    ours, theirs = _pair(arrays)
    kw = dict(is_causal=mask_kind == "causal")
    out = F.scaled_dot_product_attention(*ours, attn_mask=None if m is None else tg.tensor(m),
                                         **kw)
    tout = TF.scaled_dot_product_attention(
        *theirs, attn_mask=None if m is None else torch.tensor(m), **kw)
    _close(out, tout, dtype, "sdpa output")
    _backward_both(out, tout)
    for name, a, b in zip("qkv", ours, theirs):
        _close(a.grad, b.grad, dtype, f"sdpa grad {name}")


@pytest.mark.parametrize("scale", [None, 0.3, 2.0])
def test_sdpa_scale_and_learned_float_mask(scale):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 3, 4)) for _ in range(3)] + [rng.standard_normal((3, 3))]
    ours, theirs = _pair(arrays)
    out = F.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3], scale=scale)
    tout = TF.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3], scale=scale)
    _close(out, tout, np.float64, "sdpa output")
    _backward_both(out, tout)
    for a, b in zip(ours, theirs):  # the float mask gets its gradient too
        _close(a.grad, b.grad, np.float64, "sdpa grad")


def test_sdpa_fully_masked_rows_give_zeros_like_torch():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((2, 3, 4)) for _ in range(3)]
    m = rng.random((3, 3)) > 0.5
    m[0] = True
    m[1] = False                   # query 1 sees nothing
    fm = np.where(m, 0.0, -np.inf)
    for mask in (m, fm):
        ours, theirs = _pair(arrays)
        out = F.scaled_dot_product_attention(*ours, attn_mask=tg.tensor(mask))
        tout = TF.scaled_dot_product_attention(*theirs, attn_mask=torch.tensor(mask))
        _close(out, tout, np.float64, "sdpa output, dead row")
        assert not np.any(out.numpy(force=True)[:, 1])
        _backward_both(out, tout)
        for a, b in zip(ours, theirs):
            assert np.isfinite(a.grad.numpy(force=True)).all()
            _close(a.grad, b.grad, np.float64, "sdpa grad, dead row")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sdpa_gqa(dtype):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((2, 6, 4, 8), (2, 2, 5, 8),
                                                              (2, 2, 5, 3))]
    ours, theirs = _pair(arrays)
    out = F.scaled_dot_product_attention(*ours, enable_gqa=True)
    tout = TF.scaled_dot_product_attention(*theirs, enable_gqa=True)
    _close(out, tout, dtype, "gqa output")
    _backward_both(out, tout)
    for a, b in zip(ours, theirs):
        _close(a.grad, b.grad, dtype, "gqa grad")


def test_sdpa_dropout():
    q = tg.randn(2, 2, 6, 4, dtype=tg.float64)
    k, v = tg.randn(2, 2, 6, 4, dtype=tg.float64), tg.randn(2, 2, 6, 4, dtype=tg.float64)
    assert not np.any(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy(force=True))
    tg.manual_seed(0)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True)
    tg.manual_seed(0)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True)
    np.testing.assert_array_equal(a.numpy(force=True), b.numpy(force=True))            # seeded: reproducible
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert not np.allclose(a.numpy(force=True), full.numpy(force=True))                # and it did drop something


def test_sdpa_errors_name_the_problem():
    q, k, v = tg.randn(2, 3, 4), tg.randn(2, 5, 4), tg.randn(2, 5, 6)
    m = tg.ones(3, 5, dtype=tg.bool)
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True)
    with pytest.raises(RuntimeError, match=r"\(2, 3, 4\), \(2, 5, 3\)"):
        F.scaled_dot_product_attention(q, tg.randn(2, 5, 3), v)
    with pytest.raises(RuntimeError, match="dropout probability.*1.5"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    with pytest.raises(RuntimeError, match="attn_mask dtype.*int64"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=tg.zeros(3, 5, dtype=tg.int64))
    with pytest.raises(RuntimeError, match="enable_gqa.*query 4, key 3"):
        F.scaled_dot_product_attention(tg.randn(1, 4, 2, 8), tg.randn(1, 3, 2, 8),
                                       tg.randn(1, 3, 2, 8), enable_gqa=True)
    with pytest.raises(TypeError, match="'key' must be a Tensor"):
        F.scaled_dot_product_attention(q, np.zeros((2, 5, 4)), v)


# ---- nn.MultiheadAttention -------------------------------------------------------------------
def _load_into_torch(ours, theirs):
    theirs.load_state_dict({k: torch.tensor(np.array(v.numpy(force=True))) for k, v in
                            ours.state_dict().items()})


def _same_state_dict_layout(ours, theirs):
    a = [(k, tuple(v.shape)) for k, v in ours.state_dict().items()]
    b = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert a == b


def _compare_params(ours, theirs, dtype):
    tp = dict(theirs.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(tp)
    for n, p in ours.named_parameters():
        if tp[n].grad is None:
            assert p.grad is None or not np.any(p.grad.numpy(force=True)), n
        else:
            _close(p.grad, tp[n].grad, dtype, f"grad of {n}")


MHA_CASES = [
    dict(),
    dict(bias=False),
    dict(kdim=3, vdim=5),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=6),
]
MASKS = ["none", "bool_attn", "float_attn", "attn3d", "kpm_bool", "kpm_float", "both",
         "causal_hint"]


def _mha_masks(kind, N, H, L, S, rng, dtype):
    kpm = rng.random((N, S)) < 0.3
    kpm[:, 0] = False
    am = rng.random((L, S)) < 0.3
    am[:, 0] = False
    out = {}
    if kind == "bool_attn":
        out["attn_mask"] = am
    elif kind == "float_attn":
        out["attn_mask"] = rng.standard_normal((L, S)).astype(dtype)
    elif kind == "attn3d":
        out["attn_mask"] = rng.standard_normal((N * H, L, S)).astype(dtype)
    elif kind == "kpm_bool":
        out["key_padding_mask"] = kpm
    elif kind == "kpm_float":
        out["key_padding_mask"] = np.where(kpm, -1e9, 0.0).astype(dtype)
    elif kind == "both":
        out["attn_mask"], out["key_padding_mask"] = am, kpm
    elif kind == "causal_hint":
        out["attn_mask"] = np.triu(np.full((L, S), -np.inf), 1).astype(dtype)
    return out


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("case", range(len(MHA_CASES)))
def test_multihead_attention_matches_torch(case, mask, batch_first, need_weights, average):
    kw = MHA_CASES[case]
    dtype = np.float64
    E, H, N = 8, 2, 3
    L, S = (5, 5) if mask == "causal_hint" else (4, 6)
    tg.manual_seed(case)
    ours = tg.nn.MultiheadAttention(E, H, batch_first=batch_first, dtype=tg.float64, **kw)
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=batch_first, dtype=torch.float64,
                                         **kw)
    _same_state_dict_layout(ours, theirs)
    _load_into_torch(ours, theirs)
    rng = np.random.default_rng(case)
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)

    def shp(T, D):
        return (N, T, D) if batch_first else (T, N, D)
    arrays = [rng.standard_normal(shp(L, E)), rng.standard_normal(shp(S, kd)),
              rng.standard_normal(shp(S, vd))]
    (q, k, v), (tq, tk, tv) = _pair(arrays)
    masks = _mha_masks(mask, N, H, L, S, rng, dtype)
    mk = {n: tg.tensor(m) for n, m in masks.items()}
    tmk = {n: torch.tensor(m) for n, m in masks.items()}
    hint = dict(is_causal=True) if mask == "causal_hint" else {}
    out, w = ours(q, k, v, need_weights=need_weights, average_attn_weights=average, **mk, **hint)
    tout, tw = theirs(tq, tk, tv, need_weights=need_weights, average_attn_weights=average,
                      **tmk, **hint)
    _close(out, tout, dtype, "mha output")
    if need_weights:
        _close(w, tw, dtype, "mha weights")
        loss, tloss = (out * out).sum() + (w * w).sum(), (tout * tout).sum() + (tw * tw).sum()
    else:
        assert w is None and tw is None
        loss, tloss = (out * out).sum(), (tout * tout).sum()
    loss.backward()
    tloss.backward()
    for name, a, b in zip("qkv", (q, k, v), (tq, tk, tv)):
        _close(a.grad, b.grad, dtype, f"mha grad {name}")
    _compare_params(ours, theirs, dtype)


def test_multihead_self_attention_float32_and_unbatched():
    tg.manual_seed(0)
    ours = tg.nn.MultiheadAttention(8, 4, batch_first=True)
    theirs = torch.nn.MultiheadAttention(8, 4, batch_first=True)
    _load_into_torch(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    (a,), (ta,) = _pair([x])
    out, w = ours(a, a, a)
    tout, tw = theirs(ta, ta, ta)
    _close(out, tout, np.float32, "mha f32")
    _close(w, tw, np.float32, "mha f32 weights")
    _backward_both(out, tout)
    _close(a.grad, ta.grad, np.float32, "mha f32 grad")
    _compare_params(ours, theirs, np.float32)
    # unbatched (L, E): batch_first is ignored, as in torch
    (u,), (tu,) = _pair([x[0]])
    out, w = ours(u, u, u, key_padding_mask=tg.tensor(np.array([0, 0, 1, 0, 0], bool)))
    tout, tw = theirs(tu, tu, tu, key_padding_mask=torch.tensor(np.array([0, 0, 1, 0, 0], bool)))
    _close(out, tout, np.float32, "mha unbatched")
    _close(w, tw, np.float32, "mha unbatched weights")


def test_multihead_init_statistics_and_errors():
    tg.manual_seed(0)
    m = tg.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    bound = math.sqrt(6.0 / (64 + 3 * 64))        # xavier_uniform_ on (3E, E)
    w = m.in_proj_weight.numpy(force=True)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not np.any(m.in_proj_bias.numpy(force=True)) and not np.any(m.out_proj.bias.numpy(force=True))
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert m.bias_k.shape == (1, 1, 64)
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        tg.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim=0"):
        tg.nn.MultiheadAttention(0, 2)
    x = tg.randn(4, 2, 64)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match=r"2D attn_mask is \(3, 4\), but should be \(4, 4\)"):
        m(x, x, x, attn_mask=tg.zeros(3, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=tg.zeros(4, 4, dtype=tg.int64))
    with pytest.raises(AssertionError, match="expecting key_padding_mask shape of"):
        tg.nn.MultiheadAttention(64, 4)(x, x, x, key_padding_mask=tg.zeros(2, 3, dtype=tg.bool))


def test_multihead_dropout_only_in_training():
    tg.manual_seed(0)
    m = tg.nn.MultiheadAttention(8, 2, dropout=0.5, dtype=tg.float64)
    t = torch.nn.MultiheadAttention(8, 2, dropout=0.5, dtype=torch.float64)
    _load_into_torch(m, t)
    x = np.random.default_rng(0).standard_normal((5, 2, 8))
    m.eval()
    t.eval()
    out, _ = m(tg.tensor(x), tg.tensor(x), tg.tensor(x))
    _close(out, t(*[torch.tensor(x)] * 3)[0], np.float64, "eval: no dropout")
    m.train()
    for need in (True, False):
        tg.manual_seed(1)
        a = m(tg.tensor(x), tg.tensor(x), tg.tensor(x), need_weights=need)[0]
        tg.manual_seed(1)
        b = m(tg.tensor(x), tg.tensor(x), tg.tensor(x), need_weights=need)[0]
        np.testing.assert_array_equal(a.numpy(force=True), b.numpy(force=True))           # seeded: reproducible
        assert not np.allclose(a.numpy(force=True), out.numpy(force=True))                # weights were dropped


# ---- Transformer layers ----------------------------------------------------------------------
def _run_pair(ours, theirs, arrays, dtype=np.float64, kw=None, tkw=None, train=False):
    if dtype == np.float64:
        ours.double()
        theirs.double()
    _same_state_dict_layout(ours, theirs)
    _load_into_torch(ours, theirs)
    if not train:
        ours.eval()
        theirs.eval()
    xs, txs = _pair([a.astype(dtype) for a in arrays])
    out, tout = ours(*xs, **(kw or {})), theirs(*txs, **(tkw or {}))
    _close(out, tout, dtype, f"{type(ours).__name__} output")
    _backward_both(out, tout)
    for a, b in zip(xs, txs):
        _close(a.grad, b.grad, dtype, f"{type(ours).__name__} input grad")
    _compare_params(ours, theirs, dtype)


def _masks_pair(**masks):
    return ({k: tg.tensor(v) for k, v in masks.items()},
            {k: torch.tensor(v) for k, v in masks.items()})


ACTS = [("relu", "relu"), ("gelu", "gelu"), (F.gelu, TF.gelu)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("act", range(len(ACTS)))
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer(batch_first, norm_first, act, dtype):
    a, ta = ACTS[act]
    kw = dict(dim_feedforward=16, batch_first=batch_first, norm_first=norm_first)
    ours = tg.nn.TransformerEncoderLayer(8, 2, activation=a, **kw)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, activation=ta, **kw)
    x = np.random.default_rng(0).standard_normal((3, 5, 8) if batch_first else (5, 3, 8))
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    m, tm = _masks_pair(src_mask=mask.astype(dtype), src_key_padding_mask=kpm)
    _run_pair(ours, theirs, [x], dtype)
    _run_pair(ours, theirs, [x], dtype, m, tm)


def test_encoder_layer_training_mode_without_dropout_and_bias_false():
    ours = tg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, bias=False)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, bias=False)
    x = np.random.default_rng(1).standard_normal((4, 2, 8))
    _run_pair(ours, theirs, [x], train=True)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack_with_masks_and_causal_detection(batch_first, norm_first):
    def build(nn):
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first,
                                           norm_first=norm_first)
        return nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    tg.manual_seed(0)
    ours, theirs = build(tg.nn), build(torch.nn)
    assert len(ours.layers) == 3 and ours.layers[0] is not ours.layers[1]
    x = np.random.default_rng(2).standard_normal((2, 6, 8) if batch_first else (6, 2, 8))
    causal = tg.nn.Transformer.generate_square_subsequent_mask(6, dtype=tg.float64)
    np.testing.assert_array_equal(
        causal.numpy(force=True), torch.nn.Transformer.generate_square_subsequent_mask(6).double().numpy())
    kpm = np.zeros((2, 6), bool)
    kpm[0, 4:] = True
    for masks in (dict(mask=causal.numpy(force=True)), dict(mask=causal.numpy(force=True), src_key_padding_mask=kpm),
                  dict(src_key_padding_mask=kpm)):
        m, tm = _masks_pair(**masks)
        _run_pair(ours, theirs, [x], np.float64, m, tm)
    m, tm = _masks_pair(mask=causal.numpy(force=True))
    _run_pair(ours, theirs, [x], np.float64, dict(m, is_causal=True), dict(tm, is_causal=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_and_stack(batch_first, norm_first, dtype):
    kw = dict(dim_feedforward=16, batch_first=batch_first, norm_first=norm_first)
    rng = np.random.default_rng(3)
    tgt = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    mem = rng.standard_normal((2, 6, 8) if batch_first else (6, 2, 8))
    tmask = np.triu(np.full((4, 4), -np.inf), 1).astype(dtype)
    mkpm = np.zeros((2, 6), bool)
    mkpm[1, 5] = True
    m, tm = _masks_pair(tgt_mask=tmask, memory_key_padding_mask=mkpm)
    ours, theirs = tg.nn.TransformerDecoderLayer(8, 2, **kw), torch.nn.TransformerDecoderLayer(
        8, 2, **kw)
    _run_pair(ours, theirs, [tgt, mem], dtype)
    _run_pair(ours, theirs, [tgt, mem], dtype, m, tm)
    ours = tg.nn.TransformerDecoder(tg.nn.TransformerDecoderLayer(8, 2, **kw), 2,
                                    tg.nn.LayerNorm(8))
    theirs = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, **kw), 2,
                                         torch.nn.LayerNorm(8))
    _run_pair(ours, theirs, [tgt, mem], dtype, m, tm)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_full_model(batch_first):
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=16, batch_first=batch_first, activation="gelu")
    tg.manual_seed(0)
    ours, theirs = tg.nn.Transformer(**kw), torch.nn.Transformer(**kw)
    rng = np.random.default_rng(4)
    src = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    tgt = rng.standard_normal((2, 3, 8) if batch_first else (3, 2, 8))
    tmask = tg.nn.Transformer.generate_square_subsequent_mask(3).numpy(force=True).astype(np.float64)
    skpm = np.zeros((2, 5), bool)
    skpm[0, 4] = True
    m, tm = _masks_pair(tgt_mask=tmask, src_key_padding_mask=skpm,
                        memory_key_padding_mask=skpm)
    _run_pair(ours, theirs, [src, tgt], np.float64, m, tm)
    # init: every matrix re-drawn with xavier_uniform_ (bound sqrt(6 / (fan_in + fan_out)))
    w = ours.encoder.layers[0].linear1.weight.numpy(force=True)
    assert np.abs(w).max() <= math.sqrt(6.0 / (8 + 16))
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        ours(tg.tensor(src), tg.tensor(tgt[:1] if batch_first else tgt[:, :1]))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal"):
        ours(tg.tensor(src), tg.tensor(tgt[..., :4]))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        tg.nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_decoder_stack_keeps_an_activation_module():
    """torch's TransformerDecoder turns a cloned layer's nn.GELU() into relu (its
    __setstate__, see transformer.py); tapegrad keeps GELU, i.e. matches torch given the
    same activation as a function."""
    tg.manual_seed(0)
    ours = tg.nn.TransformerDecoder(tg.nn.TransformerDecoderLayer(8, 2, 16,
                                                                  activation=tg.nn.GELU()), 2)
    theirs = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16,
                                                                          activation=TF.gelu), 2)
    assert isinstance(ours.layers[1].activation, tg.nn.GELU)
    rng = np.random.default_rng(8)
    _run_pair(ours, theirs, [rng.standard_normal((4, 2, 8)), rng.standard_normal((5, 2, 8))])


# ---- nanoGPT-shaped model (written in nanoGPT's style) ---------------------------------------
def gpt_classes(torch_like):
    """The same model source for both libraries: `torch_like` is torch or tapegrad."""
    nn, Fn = torch_like.nn, torch_like.nn.functional

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch_like.ones(ndim))
            self.bias = nn.Parameter(torch_like.zeros(ndim)) if bias else None

        def forward(self, input):
            return Fn.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            assert cfg["n_embd"] % cfg["n_head"] == 0
            self.c_attn = nn.Linear(cfg["n_embd"], 3 * cfg["n_embd"], bias=cfg["bias"])
            self.c_proj = nn.Linear(cfg["n_embd"], cfg["n_embd"], bias=cfg["bias"])
            self.attn_dropout = nn.Dropout(cfg["dropout"])
            self.resid_dropout = nn.Dropout(cfg["dropout"])
            self.n_head, self.n_embd, self.dropout = cfg["n_head"], cfg["n_embd"], cfg["dropout"]
            self.flash = hasattr(torch_like.nn.functional, "scaled_dot_product_attention")
            if not self.flash:  # the slow path's causal mask buffer
                bs = cfg["block_size"]
                self.register_buffer("bias", torch_like.tril(torch_like.ones(bs, bs))
                                     .view(1, 1, bs, bs))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            y = Fn.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.c_fc = nn.Linear(cfg["n_embd"], 4 * cfg["n_embd"], bias=cfg["bias"])
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * cfg["n_embd"], cfg["n_embd"], bias=cfg["bias"])
            self.dropout = nn.Dropout(cfg["dropout"])

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.ln_1 = LayerNorm(cfg["n_embd"], bias=cfg["bias"])
            self.attn = CausalSelfAttention(cfg)
            self.ln_2 = LayerNorm(cfg["n_embd"], bias=cfg["bias"])
            self.mlp = MLP(cfg)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.cfg = cfg
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(cfg["vocab_size"], cfg["n_embd"]),
                wpe=nn.Embedding(cfg["block_size"], cfg["n_embd"]),
                drop=nn.Dropout(cfg["dropout"]),
                h=nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])]),
                ln_f=LayerNorm(cfg["n_embd"], bias=cfg["bias"])))
            self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch_like.arange(0, t, dtype=torch_like.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = None
            if targets is not None:
                loss = Fn.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                        ignore_index=-1)
            return logits, loss

    return GPT


GPT_CFG = dict(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=16, dropout=0.0,
               bias=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", [True, False])
def test_nanogpt_state_dict_loads_strict_and_matches(bias, dtype):
    cfg = dict(GPT_CFG, bias=bias)
    torch.manual_seed(0)
    theirs = gpt_classes(torch)(cfg).to(TDT[dtype])
    tg.manual_seed(0)
    ours = gpt_classes(tg)(cfg).to(dtype)
    sd = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    assert not any(k.endswith(".attn.bias") for k in sd)      # the flash path: no buffers
    assert "lm_head.weight" in sd and "transformer.wte.weight" in sd
    res = ours.load_state_dict(sd, strict=True)
    assert not res.missing_keys and not res.unexpected_keys
    assert ours.transformer.wte.weight is ours.lm_head.weight   # tying survives loading
    _same_state_dict_layout(ours, theirs)
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 11, (3, 8))
    tgt = rng.integers(0, 11, (3, 8))
    tgt[0, :2] = -1                                              # ignore_index
    logits, loss = ours(tg.tensor(idx), tg.tensor(tgt))
    tlogits, tloss = theirs(torch.tensor(idx), torch.tensor(tgt))
    _close(logits, tlogits, dtype, "gpt logits")
    _close(loss, tloss, dtype, "gpt loss")
    loss.backward()
    tloss.backward()
    _compare_params(ours, theirs, dtype)


# ---- word_language_model's TransformerModel (written in its style) ---------------------------
def word_lm_classes(torch_like):
    nn, Fn = torch_like.nn, torch_like.nn.functional

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch_like.zeros(max_len, d_model)
            position = torch_like.arange(0, max_len, dtype=torch_like.float).unsqueeze(1)
            div_term = torch_like.exp(torch_like.arange(0, d_model, 2).float()
                                      * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch_like.sin(position * div_term)
            pe[:, 1::2] = torch_like.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                             num_encoder_layers=nlayers)
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            return torch_like.log(torch_like.tril(torch_like.ones(sz, sz)))

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    self.src_mask = self._generate_square_subsequent_mask(len(src))
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return Fn.log_softmax(output, dim=-1)

    return TransformerModel


@pytest.mark.parametrize("has_mask", [True, False])
def test_word_language_model_transformer(has_mask):
    torch.manual_seed(0)
    theirs = word_lm_classes(torch)(13, 8, 2, 16, 2, dropout=0.2).double().eval()
    tg.manual_seed(0)
    ours = word_lm_classes(tg)(13, 8, 2, 16, 2, dropout=0.2).double().eval()
    sd = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd, strict=True)
    _same_state_dict_layout(ours, theirs)
    np.testing.assert_allclose(ours.pos_encoder.pe.numpy(force=True)[:50], sd["pos_encoder.pe"][:50],
                               rtol=1e-6, atol=1e-6)  # float32 buffer computed by each library
    data = np.random.default_rng(6).integers(0, 13, (7, 3))   # (seq, batch)
    targets = np.random.default_rng(7).integers(0, 13, (7 * 3,))
    out = ours(tg.tensor(data), has_mask=has_mask)
    tout = theirs(torch.tensor(data), has_mask=has_mask)
    _close(out, tout, np.float64, "word lm log-probs")
    loss = F.nll_loss(out.view(-1, 13), tg.tensor(targets))
    tloss = TF.nll_loss(tout.view(-1, 13), torch.tensor(targets))
    _close(loss, tloss, np.float64, "word lm loss")
    loss.backward()
    tloss.backward()
    _compare_params(ours, theirs, np.float64)

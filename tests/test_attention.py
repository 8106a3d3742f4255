"""Fused scaled-dot-product attention vs the composite reference and vs PyTorch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
from tapegrad.nn.functional._fused_attention import fused_scaled_dot_product_attention as sdpa
from tapegrad.nn.functional._fused_attention import sdpa_reference

SHAPES = [((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 6)),  # (B, H, T, D)
          ((4, 3), (6, 3), (6, 2)),                    # unbatched, S != T
          ((1, 1, 1, 2), (1, 1, 1, 2), (1, 1, 1, 1)),  # size-1 everything
          ((3, 7, 8), (1, 7, 8), (1, 7, 8))]           # broadcast batch


def _case(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    w = None
    return arrays, w


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_fused_matches_torch_and_composite(shapes, causal, dtype, tol):
    arrays, _ = _case(shapes, dtype)
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    comp = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = sdpa(*ours, is_causal=causal)
    ref = sdpa_reference(*comp, is_causal=causal)
    tout = TF.scaled_dot_product_attention(*theirs, is_causal=causal)
    w = np.random.default_rng(1).standard_normal(tout.shape).astype(dtype)
    (out * tg.tensor(w)).sum().backward()
    (ref * tg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ref.data, out.data, rtol=tol, atol=tol)
    for a, b, c in zip(ours, comp, theirs):
        np.testing.assert_allclose(a.grad.data, c.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(b.grad.data, a.grad.data, rtol=tol, atol=tol)


def test_bool_and_float_masks_match_torch():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 4, 3)) for _ in range(3))
    bool_mask = rng.random((4, 4)) > 0.3
    np.fill_diagonal(bool_mask, True)  # no fully masked rows
    float_mask = rng.standard_normal((4, 4))
    for mask in (bool_mask, float_mask):
        ours = [tg.tensor(a, requires_grad=True) for a in (q, k, v)]
        theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = sdpa(*ours, attn_mask=tg.tensor(mask))
        tout = TF.scaled_dot_product_attention(*theirs, attn_mask=torch.tensor(mask))
        out.sum().backward()
        tout.sum().backward()
        np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-10, atol=1e-12)
        for a, c in zip(ours, theirs):
            np.testing.assert_allclose(a.grad.data, c.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_gradcheck_and_second_order():
    rng = np.random.default_rng(3)
    ins = [tg.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True) for _ in range(3)]
    f = lambda q, k, v: sdpa(q, k, v, is_causal=True)  # noqa: E731
    assert tg.autograd.gradcheck(f, ins)
    assert tg.autograd.gradgradcheck(f, ins)


def test_shape_error_names_op_and_shapes():
    q = tg.randn(2, 3, 4)
    k = tg.randn(2, 5, 3)
    with pytest.raises(RuntimeError, match=r"scaled_dot_product_attention.*\(2, 3, 4\).*\(2, 5, 3\)"):
        sdpa(q, k, k)


# ---- the multi-head layout (ops/rules/attention.py `_matmul_heads_inner`) ----------------------
def _packed_heads(mod, x, B, T, H, D):
    """nanoGPT's q, k, v: (B, H, T, D) views of a packed (B, T, 3 H D) projection."""
    q, k, v = x.split(H * D, dim=2)
    return [t.reshape(B, T, H, D).transpose(1, 2) for t in (q, k, v)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_multihead_packed_qkv_matches_torch(causal, dtype, tol):
    # strided q/k/v views in, the heads-inner output layout out, and the gradients
    # reshaped back to (B, T, H * D) through that layout: values and grads vs torch
    B, T, H, D = 3, 6, 2, 4
    rng = np.random.default_rng(4)
    xa = rng.standard_normal((B, T, 3 * H * D)).astype(dtype)
    wa = rng.standard_normal((B, T, H * D)).astype(dtype)
    x = tg.tensor(xa, requires_grad=True)
    tx = torch.tensor(xa, requires_grad=True)
    q, k, v = _packed_heads(tg, x, B, T, H, D)
    tq, tk, tv = _packed_heads(torch, tx, B, T, H, D)
    y = sdpa(q, k, v, is_causal=causal).transpose(1, 2).reshape(B, T, H * D)
    ty = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal).transpose(1, 2)
    ty = ty.reshape(B, T, H * D)
    (y * tg.tensor(wa)).sum().backward()
    (ty * torch.tensor(wa)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 3, 5, 4), (2, 1, 5, 4), (2, 3, 1, 4),
                                   (2, 3, 5, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_result_laid_out_like_torch(shape, dtype):
    # torch's CPU attention lays its result out like the query (a query whose last axis
    # is not unit-stride: C order); a value with another head size: C order. Every
    # memory order of q, dense and sliced, with and without requires_grad; strides of
    # size-1 axes are not compared (they do not move memory)
    import itertools
    B, H, T, D = shape
    rng = np.random.default_rng(7)
    k = rng.standard_normal(shape).astype(dtype)
    for perm, sliced, grad in itertools.product(itertools.permutations(range(4)),
                                                (False, True), (False, True)):
        stored = [shape[i] * (2 if sliced and j == 3 else 1) for j, i in enumerate(perm)]
        base = rng.standard_normal(stored).astype(dtype)
        order = np.argsort(perm).tolist()
        q = tg.tensor(base, requires_grad=grad)[..., :shape[perm[3]]].permute(*order)
        tq = torch.tensor(base, requires_grad=grad)[..., :shape[perm[3]]].permute(*order)
        assert q.stride() == tq.stride()
        for dv in (D, D + 2):
            v = rng.standard_normal((B, H, T, dv)).astype(dtype)
            y = sdpa(q, tg.tensor(k), tg.tensor(v), is_causal=True)
            ty = TF.scaled_dot_product_attention(tq, torch.tensor(k), torch.tensor(v),
                                                 is_causal=True)
            keep = [n > 1 for n in ty.shape]
            assert [s for s, kp in zip(y.stride(), keep) if kp] == \
                [s for s, kp in zip(ty.stride(), keep) if kp], (perm, sliced, dv)
            np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(),
                                       rtol=1e-5, atol=1e-5)


def test_multihead_result_merges_heads_without_a_copy():
    # nanoGPT: y.transpose(1, 2).contiguous().view(B, T, C) is y's memory (torch: the
    # same, its result is laid out like the packed q), and so are the gradients' way back
    B, T, H, D = 2, 5, 2, 4
    x = tg.tensor(np.random.default_rng(8).standard_normal((B, T, 3 * H * D)),
                  requires_grad=True)
    q, k, v = _packed_heads(tg, x, B, T, H, D)
    y = sdpa(q, k, v, is_causal=True)
    merged = y.transpose(1, 2).contiguous().view(B, T, H * D)
    assert np.shares_memory(merged._data, y._data)
    tq, tk, tv = _packed_heads(torch, torch.tensor(x.detach().numpy()), B, T, H, D)
    ty = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    assert y.stride() == ty.stride() and y.transpose(1, 2).is_contiguous()


def test_multihead_layout_gradcheck_and_second_order():
    B, T, H, D = 2, 3, 2, 2
    x = tg.tensor(np.random.default_rng(5).standard_normal((B, T, 3 * H * D)),
                  requires_grad=True)

    def f(x):
        q, k, v = _packed_heads(tg, x, B, T, H, D)
        return sdpa(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, H * D)

    assert tg.autograd.gradcheck(f, [x])
    assert tg.autograd.gradgradcheck(f, [x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_call_backward_equals_per_input_rules_bitwise(dtype):
    # the engine runs `backward`; tools needing one input's rule run `vjps[i]`: the same
    # bits (the heads-inner layout changes strides, not values)
    from tapegrad.ops.rules import attention as A
    rng = np.random.default_rng(6)
    packed = rng.standard_normal((4, 5, 3, 2, 3)).astype(dtype)
    q, k, v = (packed[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
    out, saved = A._sdpa_forward(q, k, v, is_causal=True)
    np.testing.assert_array_equal(out, np.matmul(saved["probs"], v))
    g = rng.standard_normal(out.shape).astype(dtype)
    whole = A.scaled_dot_product_attention.backward(np, g, out, q, k, v, is_causal=True,
                                                    **saved)
    for i, rule in enumerate(A.scaled_dot_product_attention.vjps):
        np.testing.assert_array_equal(whole[i], rule(np, g, out, q, k, v, is_causal=True,
                                                     **saved))

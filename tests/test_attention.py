"""Fused scaled-dot-product attention vs the composite reference and vs PyTorch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
from tapegrad.nn.functional_attention import scaled_dot_product_attention as sdpa
from tapegrad.nn.functional_attention import sdpa_reference

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

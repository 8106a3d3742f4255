"""The NumPy kernels attention's rules call (ops/rules/attention.py): `softmax_back_rows` and
`matmul_heads_inner`, each against its simple formula and PyTorch, with gradcheck of
their own rules (what create_graph runs)."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.core.record import apply
from tapegrad.ops.rules import attention as A


def _probs(rng, shape, dtype):
    s = rng.standard_normal(shape)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(dtype)


@pytest.mark.parametrize("shape", [(32, 4, 16, 16), (3, 5), (2, 1, 7), (4, 1)])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_softmax_back_kernel_matches_formula_and_torch(shape, dtype, tol):
    rng = np.random.default_rng(0)
    dp = rng.standard_normal(shape).astype(dtype)
    p = _probs(rng, shape, dtype)
    dp0, p0 = dp.copy(), p.copy()
    got = A._softmax_back_forward(dp, p)
    np.testing.assert_array_equal(dp, dp0)  # the inputs are not written to
    np.testing.assert_array_equal(p, p0)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_allclose(got, A._softmax_back_ref(np, dp, p), rtol=tol, atol=tol)
    ref = torch.ops.aten._softmax_backward_data(torch.tensor(dp), torch.tensor(p), -1,
                                                torch.tensor(p).dtype)
    np.testing.assert_allclose(got, ref.numpy(), rtol=tol, atol=tol)


def test_softmax_back_broadcast_probs_falls_back():
    rng = np.random.default_rng(1)
    dp = rng.standard_normal((2, 3, 4))
    p = _probs(rng, (3, 4), np.float64)
    np.testing.assert_allclose(A._softmax_back_forward(dp, p), A._softmax_back_ref(np, dp, p),
                               rtol=1e-12, atol=1e-12)


def test_softmax_back_rules_gradcheck():
    rng = np.random.default_rng(2)
    dp = tg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    p = tg.tensor(_probs(rng, (2, 3, 4), np.float64), requires_grad=True)
    f = lambda a, b: apply(A.softmax_back_rows, a, b)  # noqa: E731
    assert tg.autograd.gradcheck(f, [dp, p])
    assert tg.autograd.gradgradcheck(f, [dp, p])


@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (2, 3, 5, 6)), ((3, 4, 5), (3, 5, 2)),
                                    ((1, 3, 4, 5), (2, 3, 5, 2)), ((4, 5), (5, 3))])
@pytest.mark.parametrize("scale", [None, 0.25])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_matmul_heads_inner_values_and_layout(shapes, scale, dtype, tol):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    got = A._matmul_heads_inner_forward(a, b, scale=scale)
    ref = torch.tensor(a) @ torch.tensor(b) * (1.0 if scale is None else scale)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref.numpy(), rtol=tol, atol=tol)
    # the bits of the simple formula: one matmul, then the scale
    simple = np.matmul(a, b) if scale is None else np.matmul(a, b) * scale
    np.testing.assert_array_equal(got, simple)
    if a.ndim == 4 and a.shape[:2] == b.shape[:2]:
        # (B, H, T, D) stored as (B, T, H, D): heads back next to the features is a view
        merged = got.transpose(0, 2, 1, 3)
        assert merged.flags.c_contiguous
        assert np.shares_memory(merged.reshape(a.shape[0], a.shape[2], -1), got)


def test_matmul_heads_inner_rules_gradcheck():
    rng = np.random.default_rng(4)
    a = tg.tensor(rng.standard_normal((2, 3, 4, 5)), requires_grad=True)
    b = tg.tensor(rng.standard_normal((2, 3, 5, 2)), requires_grad=True)
    f = lambda x, y: apply(A.matmul_heads_inner, x, y, scale=0.5)  # noqa: E731
    assert tg.autograd.gradcheck(f, [a, b])
    assert tg.autograd.gradgradcheck(f, [a, b])


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_causal_mask_cache_matches_torch_across_shapes_and_dtypes(dtype, tol):
    # the causal mask is made once per (T, S, dtype) and kept read-only: repeated calls,
    # other sequence lengths (T != S too) and the other dtype give torch's attention
    r = np.random.default_rng(3)
    for t, s in [(5, 5), (7, 7), (5, 5), (4, 6), (6, 4)]:
        q, k, v = (r.standard_normal(shape).astype(dtype)
                   for shape in [(2, 3, t, 8), (2, 3, s, 8), (2, 3, s, 8)])
        ours = tg.nn.functional.scaled_dot_product_attention(
            tg.tensor(q), tg.tensor(k), tg.tensor(v), is_causal=True)
        theirs = torch.nn.functional.scaled_dot_product_attention(
            torch.tensor(q), torch.tensor(k), torch.tensor(v), is_causal=True)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tol, atol=tol)
        add = A._causal(t, s, np.dtype(dtype))
        assert add.dtype == dtype and not add.flags.writeable
        assert add is A._causal(t, s, np.dtype(dtype))

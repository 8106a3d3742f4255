"""ops/rules/_gemm.py's `linear_rows`: x @ w^T + b with the bias inside one BLAS gemm
(beta = 1 over the output filled with b). Its values against the simple formula (matmul,
then `+= b`: the same bits while the inner dimension fits one BLAS block) and against
torch's F.linear, for operands of every layout the wrapper must take or copy, both float
dtypes, the sizes below its threshold (the simple formula itself) and non-finite bias.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
from tapegrad.ops.rules import _gemm as _gemm_module
from tapegrad.ops.rules._gemm import _MIN_OUT, linear_rows


def _layouts(rng, m, k, n, dtype):
    """(name, x, w, b): C-ordered operands, a transposed x, a transposed w (a tied
    weight's view), a sliced x (rows of a wider array)."""
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    yield "c", x, w, b
    yield "x transposed", np.ascontiguousarray(x.T).T, w, b
    yield "w transposed", x, np.ascontiguousarray(w.T).T, b
    wide = rng.standard_normal((m, k + 5)).astype(dtype)
    yield "x sliced", wide[:, 2:k + 2], w, b


@pytest.mark.parametrize("shape", [(512, 64, 256), (512, 256, 64), (128, 64, 130),
                                   (300, 1, 70), (4, 3, 5)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_values_are_the_simple_formulas_and_torchs(shape, dtype, tol, monkeypatch):
    m, k, n = shape
    rng = np.random.default_rng(1)
    calls = []
    real = _gemm_module._gemm
    monkeypatch.setattr(_gemm_module, "_gemm", lambda dt: calls.append(dt) or real(dt))
    for name, x, w, b in _layouts(rng, m, k, n, dtype):
        calls.clear()
        got = linear_rows(x, w, b)
        assert len(calls) == (m * n >= _MIN_OUT), name  # the BLAS path from the threshold
        simple = np.matmul(x, w.T)
        simple += b
        assert got.dtype == dtype and got.shape == (m, n) and got.flags.c_contiguous
        np.testing.assert_array_equal(got, simple, err_msg=name)  # K fits one block
        ref = TF.linear(torch.from_numpy(np.ascontiguousarray(x)),
                        torch.from_numpy(np.ascontiguousarray(w)), torch.from_numpy(b))
        # (sums of k products of N(0, 1) numbers: rounding grows with sqrt(k))
        np.testing.assert_allclose(got, ref.numpy(), rtol=tol, atol=tol * 2 * np.sqrt(k),
                                   err_msg=name)
        np.testing.assert_array_equal(linear_rows(x, w), np.matmul(x, w.T))


def test_large_inner_dimension_within_rounding_and_bias_nonfinite():
    # past one BLAS K block the bias joins the first block's partial sums: within
    # rounding of the simple formula; an inf or nan bias reaches its column as in torch
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    w = rng.standard_normal((256, 784)).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    np.testing.assert_allclose(linear_rows(x, w, b), np.matmul(x, w.T) + b, rtol=2e-5,
                               atol=2e-4)
    b[3], b[7] = np.inf, np.nan
    got = linear_rows(x, w, b)
    ref = TF.linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(np.isinf(got), np.isinf(ref))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


def test_the_threshold_and_other_dtypes_take_matmul():
    rng = np.random.default_rng(3)
    assert 8 * 8 < _MIN_OUT
    for dtype in (np.float16, np.complex64):
        x = rng.standard_normal((200, 8)).astype(dtype)
        w = rng.standard_normal((100, 8)).astype(dtype)
        b = rng.standard_normal(100).astype(dtype)
        want = np.matmul(x, w.T)
        want += b
        np.testing.assert_array_equal(linear_rows(x, w, b), want)


def test_nn_linear_forward_and_gradients_match_torch_through_the_kernel():
    # nn.Linear on (32, 16, 64) float32 (the tiny GPT's shape: rows folded, the kernel's
    # path) and its gradients, vs torch
    rng = np.random.default_rng(4)
    xa = rng.standard_normal((32, 16, 64)).astype(np.float32)
    lin, tlin = tg.nn.Linear(64, 192), torch.nn.Linear(64, 192)
    with torch.no_grad():
        tlin.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    x, tx = tg.tensor(xa, requires_grad=True), torch.tensor(xa, requires_grad=True)
    y, ty = lin(x), tlin(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    for a, b in ((x.grad, tx.grad), (lin.weight.grad, tlin.weight.grad),
                 (lin.bias.grad, tlin.bias.grad)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-3)

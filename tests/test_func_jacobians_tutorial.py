"""PyTorch's "Jacobians, Hessians, hvp, vhp, and more" tutorial: the per-sample Jacobian
by `vmap(jacrev(predict))` against the Jacobian of the batch-summed output.

torch's vmap runs F.linear once on the whole batch (a batching rule), so both sides use
the same (64x16 @ 16x16) matrix product and agree bit for bit. tapegrad's vmap runs
func once per sample (tapegrad/_func/vmap.py: no batching rules), so its F.linear is
a vector-matrix product whose float32 rounding differs from the batched product's by an
ulp; where tanh saturates, 1 - y**2 cancels and that ulp becomes a relative difference
of ~3e-5, above allclose's default rtol=1e-5, and the tutorial's assert fails. Both are
within float32 rounding of the float64 Jacobian (checked here). The tutorial's assert
is kept as a strict expected failure: it passes once vmap batches F.linear."""
import numpy as np
import pytest
import torch

import tapegrad as tg

D, B = 16, 64


def _tutorial(lib):
    F = lib.nn.functional
    r = np.random.default_rng(0)
    weight, bias = (lib.tensor(r.standard_normal(s).astype(np.float32)) for s in ((D, D), (D,)))
    batch_x = lib.tensor(r.standard_normal((B, D)).astype(np.float32))

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    j0 = lib.func.jacrev(predict_with_output_summed, argnums=2)(weight, bias,
                                                                 batch_x).movedim(1, 0)
    j1 = lib.func.vmap(lib.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(
        weight, bias, batch_x)
    w, b, x = (t.numpy().astype(np.float64) for t in (weight, bias, batch_x))
    y = np.tanh(x @ w.T + b)
    exact = (1 - y ** 2)[:, :, None] * w[None]
    return j0, j1, exact


@pytest.mark.parametrize("lib", [torch, tg], ids=["torch", "tapegrad"])
def test_both_jacobians_are_within_float32_rounding_of_float64(lib):
    j0, j1, exact = _tutorial(lib)
    assert tuple(j0.shape) == tuple(j1.shape) == (B, D, D)
    for j in (j0, j1):
        np.testing.assert_allclose(j.numpy(), exact, rtol=1e-4, atol=1e-5)


@pytest.mark.xfail(strict=True, reason="tapegrad's vmap loops over samples (no batching "
                   "rule for F.linear): a per-sample matrix-vector product rounds "
                   "differently from the batched product torch's vmap uses")
def test_tutorial_assert_allclose_batch_jacobians():
    j0, j1, _ = _tutorial(tg)
    assert tg.allclose(j0, j1)


def test_tutorial_assert_holds_in_torch():
    j0, j1, _ = _tutorial(torch)
    assert torch.allclose(j0, j1)

"""F.embedding / nn.Embedding / F.embedding_bag options against torch: max_norm renormalizes
the looked-up rows of the weight in place (every norm_type, rows below max_norm untouched,
repeated indices), scale_grad_by_freq divides each row's gradient by its count in the
batch (with padding_idx), sparse=True gives the same values (a dense gradient here).
Not covered: embedding_bag's scale_grad_by_freq in mode='mean', where torch's counts differ
from the per-batch counts F.embedding uses (a row in a 3-entry bag got 1/6, not 1/3).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F


def _weights(seed=0, V=7, D=4):
    return np.random.default_rng(seed).standard_normal((V, D)) * 2


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, float("inf")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_max_norm_renormalizes_in_place(norm_type, dtype):
    w = _weights().astype(dtype)
    idx = np.array([[0, 2, 2], [5, 0, 1]])
    tw, ttw = tg.tensor(w.copy(), requires_grad=True), torch.tensor(w.copy(), requires_grad=True)
    out = F.embedding(tg.tensor(idx), tw, max_norm=1.5, norm_type=norm_type)
    want = TF.embedding(torch.tensor(idx), ttw, max_norm=1.5, norm_type=norm_type)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), **tol)
    # the weight itself changed in the looked-up rows only, as torch's
    np.testing.assert_allclose(tw.detach().numpy(), ttw.detach().numpy(), **tol)
    np.testing.assert_array_equal(tw.detach().numpy()[[3, 4, 6]], w[[3, 4, 6]])
    cot = np.random.default_rng(1).standard_normal(out.shape).astype(dtype)
    out.backward(tg.tensor(cot))
    want.backward(torch.tensor(cot))
    np.testing.assert_allclose(tw.grad.numpy(), ttw.grad.numpy(), **tol)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_scale_grad_by_freq(padding_idx):
    w = _weights(2)
    idx = np.array([[0, 2, 2, 3], [3, 3, 1, 2]])
    tw, ttw = tg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    out = F.embedding(tg.tensor(idx), tw, padding_idx=padding_idx, scale_grad_by_freq=True)
    want = TF.embedding(torch.tensor(idx), ttw, padding_idx=padding_idx,
                        scale_grad_by_freq=True)
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    cot = np.random.default_rng(3).standard_normal(out.shape)
    out.backward(tg.tensor(cot))
    want.backward(torch.tensor(cot))
    np.testing.assert_allclose(tw.grad.numpy(), ttw.grad.numpy(), rtol=1e-12)


def test_embedding_module_and_bag_options():
    w = _weights(4).astype(np.float32)
    ours = nn.Embedding(7, 4, max_norm=1.0, scale_grad_by_freq=True, sparse=True)
    theirs = torch.nn.Embedding(7, 4, max_norm=1.0, scale_grad_by_freq=True)
    ours.weight.data = tg.tensor(w.copy())
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
    idx = np.array([1, 1, 4, 6])
    np.testing.assert_allclose(ours(tg.tensor(idx)).detach().numpy(),
                               theirs(torch.tensor(idx)).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)
    w = _weights(4)
    tw, ttw = tg.tensor(w.copy(), requires_grad=True), torch.tensor(w.copy(), requires_grad=True)
    bag = np.array([0, 2, 2, 5, 6, 1])
    off = np.array([0, 2, 5])
    got = F.embedding_bag(tg.tensor(bag), tw, tg.tensor(off), max_norm=2.0, mode="mean")
    want = TF.embedding_bag(torch.tensor(bag), ttw, torch.tensor(off), max_norm=2.0,
                            mode="mean")
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(tw.grad.numpy(), ttw.grad.numpy(), rtol=1e-12)

"""F.ctc_loss and nn.CTCLoss against torch: losses and gradients (float64, float32) for
padded and concatenated targets, unequal input/target lengths, empty targets, repeated
labels, every reduction, zero_infinity on infeasible alignments, unbatched input, errors.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F

from _nn_helpers import TOL


def _case(seed, T=14, N=4, C=6, S=5, dtype=np.float64):
    r = np.random.default_rng(seed)
    lp = torch.tensor(r.standard_normal((T, N, C)), dtype=torch.float64).log_softmax(2)
    targets = r.integers(1, C, (N, S))
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank between
    il = np.array([T, T - 3, T, 6][:N])
    tl = np.array([S, 3, 0, 2][:N])
    return lp.numpy().astype(dtype), targets, il, tl


def _check(lp, targets, il, tl, dtype, **kw):
    x = tg.tensor(lp, requires_grad=True)
    t = torch.tensor(lp, requires_grad=True)
    got = F.ctc_loss(x, tg.tensor(targets), tg.tensor(il), tg.tensor(tl), **kw)
    want = TF.ctc_loss(t, torch.tensor(targets), torch.tensor(il), torch.tensor(tl), **kw)
    assert got.dtype == x.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **TOL[dtype])
    cot = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(dtype)
    got.backward(tg.tensor(cot))
    want.backward(torch.tensor(cot))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_padded_targets(reduction, dtype):
    _check(*_case(0, dtype=dtype), dtype, reduction=reduction)


@pytest.mark.parametrize("blank", [0, 5])
def test_ctc_loss_concatenated_targets_and_blank(blank):
    lp, targets, il, tl = _case(2)
    targets = np.where(targets == blank, 1 if blank == 0 else 2, targets)
    flat = np.concatenate([targets[n, :tl[n]] for n in range(len(tl))])
    _check(lp, flat, il, tl, np.float64, blank=blank, reduction="none")


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_infeasible(zero_infinity):
    """A target longer than the input has no alignment: loss inf, or 0 with
    zero_infinity (and a zero gradient for that sample)."""
    lp, targets, il, tl = _case(3, T=5, N=2, S=4)
    tl = np.array([4, 2])
    il = np.array([3, 5])  # sample 0: 4 labels in 3 frames
    x = tg.tensor(lp, requires_grad=True)
    t = torch.tensor(lp, requires_grad=True)
    got = F.ctc_loss(x, tg.tensor(targets), il, tl, reduction="none",
                     zero_infinity=zero_infinity)
    want = TF.ctc_loss(t, torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                       reduction="none", zero_infinity=zero_infinity)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    if zero_infinity:
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-10)


def test_ctc_loss_unbatched_and_module():
    lp, targets, il, tl = _case(4, N=1)
    got = nn.CTCLoss(reduction="sum")(tg.tensor(lp[:, 0]), tg.tensor(targets[0]),
                                      [int(il[0])], [int(tl[0])])
    want = torch.nn.CTCLoss(reduction="sum")(torch.tensor(lp[:, 0]), torch.tensor(targets[0]),
                                             [int(il[0])], [int(tl[0])])
    assert got.shape == () and want.shape == ()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    assert repr(nn.CTCLoss()) == repr(torch.nn.CTCLoss())


def test_ctc_loss_errors():
    lp, targets, il, tl = _case(5)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(tg.tensor(lp), tg.tensor(targets), il, tl, blank=6)
    with pytest.raises(RuntimeError, match="input_lengths"):
        F.ctc_loss(tg.tensor(lp), tg.tensor(targets), il + 1, tl)

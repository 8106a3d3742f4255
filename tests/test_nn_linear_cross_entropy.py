"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against torch 2.13: values and the
gradients of input, linear weight and bias (float64, float32) for class-index and
probability targets, K-dimensional out_features, unbatched input, class weights,
ignore_index, label smoothing, every reduction, chunking options (same values), errors.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F

from _nn_compare import compare, rng


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, dict(ignore_index=2), dict(label_smoothing=0.2),
                                dict(weight=True)])
def test_linear_cross_entropy_class_targets(kw, reduction, dtype):
    r = rng(1)
    x, w, b = r.standard_normal((6, 4)), r.standard_normal((5, 4)), r.standard_normal(5)
    t = r.integers(0, 5, 6)
    kw = dict(kw)
    cw = r.random(5) + 0.5 if kw.pop("weight", False) else None
    compare(lambda a, W, B: F.linear_cross_entropy(
                a, W, tg.tensor(t), linear_bias=B, reduction=reduction,
                weight=None if cw is None else tg.tensor(cw.astype(dtype)), **kw),
            lambda a, W, B: TF.linear_cross_entropy(
                a, W, torch.tensor(t), linear_bias=B, reduction=reduction,
                weight=None if cw is None else torch.tensor(cw.astype(dtype)), **kw),
            [x, w, b], dtype)


@pytest.mark.parametrize("case", ["k_dim", "probs", "unbatched"])
def test_linear_cross_entropy_shapes(case):
    r = rng(2)
    if case == "k_dim":
        x, w, t = r.standard_normal((3, 4)), r.standard_normal((5, 2, 3, 4)), \
            r.integers(0, 5, (3, 2, 3))
    elif case == "probs":
        x, w = r.standard_normal((3, 4)), r.standard_normal((5, 4))
        t = r.random((3, 5))
        t /= t.sum(1, keepdims=True)
    else:
        x, w, t = r.standard_normal(4), r.standard_normal((5, 4)), np.array(3)
    compare(lambda a, W: F.linear_cross_entropy(a, W, tg.tensor(t)),
            lambda a, W: TF.linear_cross_entropy(a, W, torch.tensor(t)), [x, w])


def test_linear_cross_entropy_options_and_module():
    r = rng(3)
    x, t = r.standard_normal((8, 4)), r.integers(0, 6, 8)
    torch.manual_seed(0)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 6, bias=True, dtype=torch.float64,
                                             options=torch.nn.LinearCrossEntropyOptions(
                                                 batch_chunk_size=2))
    ours = nn.LinearCrossEntropyLoss(4, 6, bias=True, dtype=tg.float64)
    ours.linear.weight.data = tg.tensor(theirs.linear.weight.detach().numpy())
    ours.linear.bias.data = tg.tensor(theirs.linear.bias.detach().numpy())
    np.testing.assert_allclose(ours(tg.tensor(x), tg.tensor(t)).item(),
                               theirs(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-12)
    assert tuple(ours.linear.weight.shape) == (6, 4)
    k = nn.LinearCrossEntropyLoss(4, 6, out_features=(2, 3))
    assert tuple(k.linear.weight.shape) == (36, 4)


def test_linear_cross_entropy_errors():
    x, w = tg.randn(3, 4), tg.randn(5, 4)
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2"):
        F.linear_cross_entropy(tg.randn(2, 3, 4), w, tg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last"):
        F.linear_cross_entropy(x, tg.randn(5, 3), tg.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected linear_bias shape"):
        F.linear_cross_entropy(x, w, tg.tensor([0, 1, 2]), linear_bias=tg.randn(4))
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(tg.randn(4), tg.randn(5, 2, 4), tg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(x, w, tg.randn(3, 5).softmax(1), ignore_index=1)
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5)

"""Bilinear, LPPool1d/2d/3d, LocalResponseNorm, ChannelShuffle, F.pdist, MaxUnpool1d/2d/3d,
Fold, Unfold, EmbeddingBag, MultiLabelMarginLoss and TripletMarginWithDistanceLoss vs
PyTorch: values and gradients (float64 tight, float32), their modules' reprs and default
initialisation, gradcheck, and torch's errors. (torch's own op_db/module_db samples run
in test_torch_op_db.py and test_torch_module_db.py; these add shapes, arguments and
edge cases.)"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F
from tapegrad.autograd.gradcheck import gradcheck

from _convcheck import compare


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5), (0, 5)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bilinear_matches_torch(shape, bias, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape), rng.standard_normal(shape[:-1] + (3,)),
              rng.standard_normal((4, 5, 3))]
    if bias:
        arrays.append(rng.standard_normal(4))
    compare(F.bilinear, TF.bilinear, arrays, dtype)


def test_bilinear_module_and_errors():
    m, mt = nn.Bilinear(5, 3, 4), torch.nn.Bilinear(5, 3, 4)
    assert repr(m) == repr(mt)
    assert repr(nn.Bilinear(2, 2, 1, bias=False)) == repr(torch.nn.Bilinear(2, 2, 1, bias=False))
    assert m.weight.shape == (4, 5, 3) and m.bias.shape == (4,)
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= 1 / np.sqrt(5) and np.abs(w).max() > 0.8 / np.sqrt(5)
    x1, x2 = tg.randn(2, 5), tg.randn(2, 3)
    with pytest.raises(RuntimeError, match="input1 size does not match weight size"):
        F.bilinear(x2, x2, m.weight)
    with pytest.raises(RuntimeError, match="input batch dimensions do not match"):
        F.bilinear(x1, tg.randn(3, 3), m.weight)
    with pytest.raises(RuntimeError, match="bias size does not match"):
        F.bilinear(x1, x2, m.weight, tg.randn(3))
    x1 = tg.randn(2, 5, dtype=tg.float64, requires_grad=True)
    x2 = tg.randn(2, 3, dtype=tg.float64, requires_grad=True)
    w = tg.randn(4, 5, 3, dtype=tg.float64, requires_grad=True)
    assert gradcheck(F.bilinear, (x1, x2, w))
    assert F.bilinear(tg.ones(2, 5, dtype=tg.int32), tg.ones(2, 3, dtype=tg.int32),
                      tg.ones(4, 5, 3, dtype=tg.int32)).dtype == tg.int32


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 1.5, float("inf")])
@pytest.mark.parametrize("dims,kw", [
    (1, dict(kernel_size=3)), (1, dict(kernel_size=2, stride=1, ceil_mode=True)),
    (2, dict(kernel_size=2)), (2, dict(kernel_size=(3, 2), stride=(1, 2), ceil_mode=True)),
    (3, dict(kernel_size=2)), (3, dict(kernel_size=(2, 1, 3), stride=1))])
def test_lp_pool_matches_torch(p, dims, kw):
    x = np.abs(np.random.default_rng(1).standard_normal((2, 3) + (7, 6, 5)[:dims])) + 0.1
    name = f"lp_pool{dims}d"
    compare(lambda a: getattr(F, name)(a, p, **kw), lambda a: getattr(TF, name)(a, p, **kw),
            [x])
    cls = f"LPPool{dims}d"
    m, mt = getattr(nn, cls)(p, **kw), getattr(torch.nn, cls)(p, **kw)
    assert repr(m) == repr(mt)
    compare(m, mt, [x[0]])


def test_lp_pool_zero_window_and_negative_values():
    x = np.zeros((1, 1, 4))
    x[0, 0, 2:] = [-1.0, 2.0]
    for p in (2.0, 3.0):  # a zero window: gradient 0; odd powers of negatives: torch's
        compare(lambda a: F.lp_pool1d(a, p, 2), lambda a: TF.lp_pool1d(a, p, 2), [x])


@pytest.mark.parametrize("shape", [(2, 7, 5), (2, 6, 4, 3), (1, 5, 2, 3, 2), (2, 0, 3)])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm_matches_torch(shape, size):
    x = np.random.default_rng(2).standard_normal(shape)
    kw = dict(alpha=1e-2, beta=0.6, k=2.0)
    compare(lambda a: F.local_response_norm(a, size, **kw),
            lambda a: TF.local_response_norm(a, size, **kw), [x], grad=bool(x.size))
    assert repr(nn.LocalResponseNorm(size, **kw)) == repr(torch.nn.LocalResponseNorm(size, **kw))
    with pytest.raises(ValueError, match="Expected 3D or higher"):
        F.local_response_norm(tg.randn(2, 3), 2)


def test_channel_shuffle_matches_torch():
    x = np.random.default_rng(3).standard_normal((2, 6, 3, 2))
    for g in (1, 2, 3, 6):
        compare(lambda a: F.channel_shuffle(a, g), lambda a: TF.channel_shuffle(a, g), [x])
        compare(nn.ChannelShuffle(g), torch.nn.ChannelShuffle(g), [x[:, :, 0]])
    assert repr(nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(tg.randn(1, 3, 2), 2)
    with pytest.raises(RuntimeError, match="expects input with > 2 dims"):
        F.channel_shuffle(tg.randn(4, 2), 2)


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_pdist_matches_torch(p):
    x = np.random.default_rng(4).standard_normal((6, 3))
    x[3] = x[1]  # a zero distance: torch's gradient there is 0
    compare(lambda a: F.pdist(a, p), lambda a: TF.pdist(a, p), [x])
    assert F.pdist(tg.randn(1, 3)).shape == (0,)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors"):
        F.pdist(tg.randn(2, 2, 2))
    with pytest.raises(RuntimeError, match="non-negative p"):
        F.pdist(tg.randn(3, 2), -1)


@pytest.mark.parametrize("dims,kw", [
    (1, dict(kernel_size=2)), (1, dict(kernel_size=3, stride=2, padding=1)),
    (1, dict(kernel_size=3)), (2, dict(kernel_size=2)),
    (2, dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
    (3, dict(kernel_size=2)), (3, dict(kernel_size=(2, 3, 2), stride=(1, 2, 2)))])
def test_max_unpool_inverts_max_pool_as_torch(dims, kw):
    x = np.random.default_rng(5).standard_normal((2, 3) + (7, 6, 5)[:dims])
    pool = f"max_pool{dims}d"
    y, idx = getattr(TF, pool)(torch.tensor(x), return_indices=True, **kw)
    name = f"max_unpool{dims}d"
    out = tuple(x.shape[2:])  # the pooled input's size (the default may be smaller)
    compare(lambda a: getattr(F, name)(a, tg.tensor(idx.numpy()), output_size=out, **kw),
            lambda a: getattr(TF, name)(a, idx, output_size=out, **kw), [y.numpy()])
    k = kw["kernel_size"]
    k = (k,) * dims if isinstance(k, int) else k
    s = kw.get("stride", k)
    s = (s,) * dims if isinstance(s, int) else s
    pd = kw.get("padding", 0)
    pd = (pd,) * dims if isinstance(pd, int) else pd
    default = tuple((n - 1) * s_ + k_ - 2 * p_ for n, s_, k_, p_ in
                    zip(y.shape[2:], s, k, pd))
    if default == out:  # then the indices fit the default size too
        compare(lambda a: getattr(F, name)(a, tg.tensor(idx.numpy()), **kw),
                lambda a: getattr(TF, name)(a, idx, **kw), [y.numpy()])
    cls = f"MaxUnpool{dims}d"
    m, mt = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert repr(m) == repr(mt)
    np.testing.assert_array_equal(
        m(tg.tensor(y[0].numpy()), tg.tensor(idx[0].numpy()), output_size=out).numpy(),
        mt(y[0], idx[0], output_size=out).numpy())
    # the round trip through our own max_pool's indices
    yg, ig = getattr(F, pool)(tg.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(getattr(F, name)(yg, ig, output_size=out, **kw).numpy(),
                                  getattr(TF, name)(y, idx, output_size=out, **kw).numpy())


def test_max_unpool_errors_as_torch():
    x, i = tg.randn(1, 1, 3), tg.tensor([[[0, 1, 9]]])
    with pytest.raises(RuntimeError, match="Found an invalid max index: 9"):
        F.max_unpool1d(x, i, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool1d(x, tg.tensor([[[0, 1, 2]]]), 2, output_size=(9,))
    with pytest.raises(ValueError):
        TF.max_unpool1d(torch.randn(1, 1, 3), torch.tensor([[[0, 1, 2]]]), 2, output_size=(9,))


def _targets():
    # each row: classes then -1 (later entries ignored), a duplicate, all classes, none
    return np.array([[3, 0, -1, 1], [1, 1, -1, 2], [0, 1, 2, 3], [-1, 0, 1, 2]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_torch(reduction):
    x = np.random.default_rng(6).standard_normal((4, 4))
    t = _targets()
    compare(lambda a: F.multilabel_margin_loss(a, tg.tensor(t), reduction=reduction),
            lambda a: TF.multilabel_margin_loss(a, torch.tensor(t), reduction=reduction), [x])
    compare(lambda a: F.multilabel_margin_loss(a, tg.tensor(t[0]), reduction=reduction),
            lambda a: TF.multilabel_margin_loss(a, torch.tensor(t[0]), reduction=reduction),
            [x[0]])
    compare(lambda a: nn.MultiLabelMarginLoss(reduction=reduction)(a, tg.tensor(t)),
            lambda a: torch.nn.MultiLabelMarginLoss(reduction=reduction)(a, torch.tensor(t)),
            [x])
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(tg.randn(5, 4), tg.tensor([0, 1, 2, 3]))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss_matches_torch(swap, reduction):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((5, 3)) for _ in range(3)]
    compare(lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=swap,
                                                                reduction=reduction),
            lambda a, p, n: TF.triplet_margin_with_distance_loss(a, p, n, swap=swap,
                                                                 reduction=reduction), arrays)

    def l1(a, b):
        return (a - b).abs().sum(-1)
    compare(lambda a, p, n: nn.TripletMarginWithDistanceLoss(
                distance_function=l1, margin=0.5, swap=swap, reduction=reduction)(a, p, n),
            lambda a, p, n: torch.nn.TripletMarginWithDistanceLoss(
                distance_function=l1, margin=0.5, swap=swap, reduction=reduction)(a, p, n),
            arrays)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(tg.randn(2, 3), tg.randn(2, 3), tg.randn(3))


def test_fold_and_unfold_modules_match_torch():
    x = np.random.default_rng(8).standard_normal((2, 3, 6, 5))
    kw = dict(kernel_size=(2, 3), padding=1, stride=(2, 1), dilation=(1, 2))
    u, ut = nn.Unfold(**kw), torch.nn.Unfold(**kw)
    assert repr(u) == repr(ut)
    cols, _ = compare(u, ut, [x])
    f, ft = nn.Fold((6, 5), **kw), torch.nn.Fold((6, 5), **kw)
    assert repr(f) == repr(ft)
    compare(f, ft, [cols.detach().numpy()])


_BAGS = [  # (input, offsets, include_last_offset)
    (np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4]), False),
    (np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 3, 6, 8]), True),  # an empty bag
    (np.array([1, 2, 0, 5, 0, 3, 2, 9]), np.array([0, 1, 2, 4]), False),
    (np.array([[1, 2, 4], [4, 0, 2], [0, 0, 0]]), None, False),
]


@pytest.mark.parametrize("padding_idx", [None, 0])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", range(len(_BAGS)))
def test_embedding_bag_matches_torch(case, mode, padding_idx):
    inp, off, last = _BAGS[case]
    w = np.random.default_rng(9).standard_normal((10, 3))

    def ours(weight):
        return F.embedding_bag(tg.tensor(inp), weight, None if off is None else tg.tensor(off),
                               mode=mode, include_last_offset=last, padding_idx=padding_idx)

    def theirs(weight):
        return TF.embedding_bag(torch.tensor(inp), weight,
                                None if off is None else torch.tensor(off), mode=mode,
                                include_last_offset=last, padding_idx=padding_idx)
    compare(ours, theirs, [w])
    m = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx,
                        include_last_offset=last).double()
    mt = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx,
                               include_last_offset=last).double()
    assert repr(m) == repr(mt)
    m.load_state_dict({"weight": tg.tensor(mt.weight.detach().numpy())})
    np.testing.assert_allclose(
        m(tg.tensor(inp), None if off is None else tg.tensor(off)).detach().numpy(),
        mt(torch.tensor(inp), None if off is None else torch.tensor(off)).detach().numpy(),
        rtol=1e-12)


def test_embedding_bag_per_sample_weights_and_errors():
    rng = np.random.default_rng(10)
    inp, off = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 5])
    arrays = [rng.standard_normal((10, 3)), rng.standard_normal(6)]
    compare(lambda w, p: F.embedding_bag(tg.tensor(inp), w, tg.tensor(off), mode="sum",
                                         per_sample_weights=p),
            lambda w, p: TF.embedding_bag(torch.tensor(inp), w, torch.tensor(off), mode="sum",
                                          per_sample_weights=p), arrays)
    w = tg.randn(10, 3)
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(tg.tensor(inp), w, tg.tensor(off), per_sample_weights=tg.randn(6))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(tg.tensor([[1, 2]]), w, tg.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(tg.tensor(inp), w)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(tg.tensor(inp), w, tg.tensor([1, 3]))
    m = nn.EmbeddingBag(10, 3, padding_idx=2)
    assert (m.weight.detach().numpy()[2] == 0).all()

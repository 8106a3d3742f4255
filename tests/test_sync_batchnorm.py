"""nn.SyncBatchNorm and convert_sync_batchnorm: on 2 and 3 ranks (tests/dist_scripts/
syncbn.py) equal to torch's BatchNorm on the concatenated batch; in one process (no
process group) the same module as torch's SyncBatchNorm, which then falls back to
batch norm too."""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _dist_launch import assert_ok, launch


@pytest.mark.parametrize("nproc", [2, 3])
def test_sync_batchnorm_ranks_equal_full_batch_batchnorm(nproc, tmp_path):
    assert_ok(launch(nproc, "syncbn.py", cwd=tmp_path, timeout=120), nproc)


def _net(nn):
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=None),
                         nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, affine=False,
                                                                          eps=1e-3)))


def test_convert_sync_batchnorm_matches_torch():
    tg.manual_seed(0)
    ours_plain = _net(tg.nn)
    ours = tg.nn.SyncBatchNorm.convert_sync_batchnorm(ours_plain)
    theirs = torch.nn.SyncBatchNorm.convert_sync_batchnorm(_net(torch.nn))
    assert [type(m).__name__ for m in ours.modules()] == \
        [type(m).__name__ for m in theirs.modules()]
    for a, b in zip(ours.modules(), theirs.modules()):
        if isinstance(b, torch.nn.SyncBatchNorm):
            assert (a.num_features, a.eps, a.momentum, a.affine, a.track_running_stats) == \
                (b.num_features, b.eps, b.momentum, b.affine, b.track_running_stats)
            assert a.process_group is None and a.training == b.training
    assert repr(ours) == repr(theirs)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)
    assert all(tuple(sd[k].shape) == tuple(tsd[k].shape) for k in sd)
    # the converted layers share the original's parameters and buffers
    assert ours[1].weight is ours_plain[1].weight
    assert ours[1].running_mean is ours_plain[1].running_mean
    bn = tg.nn.BatchNorm1d(3)
    assert isinstance(tg.nn.SyncBatchNorm.convert_sync_batchnorm(bn), tg.nn.SyncBatchNorm)
    with pytest.raises(ValueError, match="correction=1 has no SyncBatchNorm equivalent"):
        tg.nn.SyncBatchNorm.convert_sync_batchnorm(tg.nn.BatchNorm1d(3, correction=1))


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("shape", [(6, 3), (5, 3, 4), (4, 3, 2, 5)])
def test_sync_batchnorm_without_process_group_is_torchs(shape, momentum):
    rng = np.random.default_rng(1)
    ours = tg.nn.SyncBatchNorm(3, momentum=momentum).double()
    theirs = torch.nn.SyncBatchNorm(3, momentum=momentum).double()
    for step in range(2):
        x = rng.standard_normal(shape) * 2 + 1
        g = rng.standard_normal(shape)
        xo = tg.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        oo, ot = ours(xo), theirs(xt)
        (oo * tg.tensor(g)).sum().backward()
        (ot * torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(oo.detach().numpy(), ot.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                                   rtol=1e-10)
        for k, v in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10)


def test_sync_batchnorm_errors_match_torch():
    for mod, x in [(3, np.ones(3)), (0, np.ones((2, 0)))]:
        with pytest.raises(ValueError) as theirs:
            torch.nn.SyncBatchNorm(mod)(torch.tensor(x))
        with pytest.raises(ValueError, match=str(theirs.value).replace("(", r"\(")
                           .replace(")", r"\)")):
            tg.nn.SyncBatchNorm(mod)(tg.tensor(x))

"""Conv/pooling/BatchNorm2d/Dropout2d modules vs torch.nn, and the MNIST CNN.

Modules are compared from identical weights (forward, input and parameter gradients);
default initialisation is checked by its bounds and statistics; reprs match torch's;
a few optimizer steps of a small CNN match PyTorch; a short training run on a slice of
the MNIST sample must learn.
"""
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn


def _copy_params(tg_mod, th_mod):
    th_state = th_mod.state_dict()
    for name, p in tg_mod.named_parameters():
        p.data[...] = th_state[name].detach().numpy()


def _compare_module(tg_mod, th_mod, x, rtol=1e-10, atol=1e-12, seed=0):
    xt = torch.tensor(x, requires_grad=True)
    xg = tg.tensor(x, requires_grad=True)
    y, yt = tg_mod(xg), th_mod(xt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
    th_params = dict(th_mod.named_parameters())
    for name, p in tg_mod.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), th_params[name].grad.numpy(), rtol=rtol,
                                   atol=atol, err_msg=name)


CONV_MODULES = [
    (2, dict(in_channels=3, out_channels=4, kernel_size=3)),
    (2, dict(in_channels=4, out_channels=6, kernel_size=(3, 2), stride=2, padding=1,
             dilation=(1, 2), groups=2, bias=False)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=4, padding="same")),
    (2, dict(in_channels=2, out_channels=3, kernel_size=3, padding=1, padding_mode="reflect")),
    (2, dict(in_channels=2, out_channels=2, kernel_size=(2, 3), padding=(1, 2),
             padding_mode="circular")),
    (2, dict(in_channels=2, out_channels=2, kernel_size=4, padding="same",
             padding_mode="replicate")),
    (1, dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1)),
    (1, dict(in_channels=2, out_channels=4, kernel_size=2, padding="same",
             padding_mode="reflect")),
]


@pytest.mark.parametrize("nd,kw", CONV_MODULES)
def test_conv_modules_match_torch(nd, kw):
    tg_cls, th_cls = (nn.Conv2d, torch.nn.Conv2d) if nd == 2 else (nn.Conv1d, torch.nn.Conv1d)
    th = th_cls(**kw).double()
    m = tg_cls(**kw, dtype=tg.float64)
    assert repr(m) == repr(th)
    assert [tuple(p.shape) for p in m.parameters()] == [tuple(p.shape) for p in th.parameters()]
    _copy_params(m, th)
    shape = (2, kw["in_channels"], 7, 8) if nd == 2 else (2, kw["in_channels"], 9)
    _compare_module(m, th, np.random.default_rng(1).standard_normal(shape))


def test_conv2d_default_init_bounds_and_statistics():
    tg.manual_seed(0)
    m = nn.Conv2d(8, 64, 3, groups=2)
    fan_in = 4 * 3 * 3
    bound = 1 / math.sqrt(fan_in)   # kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), ...)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert w.dtype == np.float32 and w.shape == (64, 4, 3, 3)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound          # uniform std
    assert np.abs(b).max() <= bound
    th = torch.nn.Conv2d(8, 64, 3, groups=2)
    tw = th.weight.detach().numpy()
    assert abs(np.abs(tw).max() - np.abs(w).max()) < 0.05 * bound
    # reset_parameters draws new values
    old = w.copy()
    m.reset_parameters()
    assert not np.array_equal(old, m.weight.detach().numpy())


def test_conv_module_errors_like_torch():
    for kw in [dict(in_channels=3, out_channels=4, kernel_size=3, groups=2),
               dict(in_channels=4, out_channels=3, kernel_size=3, groups=2),
               dict(in_channels=2, out_channels=2, kernel_size=3, stride=2, padding="same"),
               dict(in_channels=2, out_channels=2, kernel_size=3, padding="full"),
               dict(in_channels=2, out_channels=2, kernel_size=3, padding_mode="mirror")]:
        with pytest.raises(ValueError):
            torch.nn.Conv2d(**kw)
        with pytest.raises(ValueError):
            nn.Conv2d(**kw)


POOL_MODULES = [
    (nn.MaxPool2d, torch.nn.MaxPool2d, dict(kernel_size=2)),
    (nn.MaxPool2d, torch.nn.MaxPool2d, dict(kernel_size=3, stride=2, padding=1,
                                            ceil_mode=True)),
    (nn.AvgPool2d, torch.nn.AvgPool2d, dict(kernel_size=3, stride=2, padding=1,
                                            count_include_pad=False)),
    (nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, dict(output_size=(3, 2))),
    (nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, dict(output_size=1)),
]


@pytest.mark.parametrize("tg_cls,th_cls,kw", POOL_MODULES)
def test_pool_modules_match_torch(tg_cls, th_cls, kw):
    m, th = tg_cls(**kw), th_cls(**kw)
    assert repr(m) == repr(th)
    _compare_module(m, th, np.random.default_rng(2).standard_normal((2, 3, 7, 8)))


def test_pool1d_modules_match_torch():
    x = np.random.default_rng(3).standard_normal((2, 3, 11))
    for tg_cls, th_cls, kw in [(nn.MaxPool1d, torch.nn.MaxPool1d, dict(kernel_size=3,
                                                                        stride=2)),
                               (nn.AvgPool1d, torch.nn.AvgPool1d, dict(kernel_size=2)),
                               (nn.AdaptiveAvgPool1d, torch.nn.AdaptiveAvgPool1d,
                                dict(output_size=4))]:
        m, th = tg_cls(**kw), th_cls(**kw)
        assert repr(m) == repr(th)
        _compare_module(m, th, x)


@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False),
                                dict(track_running_stats=False, momentum=0.3)])
def test_batchnorm2d_matches_torch(kw):
    th = torch.nn.BatchNorm2d(3, **kw).double()
    m = nn.BatchNorm2d(3, dtype=tg.float64, **kw)
    assert repr(m) == repr(th)
    rng = np.random.default_rng(4)
    if m.weight is not None:
        th.weight.data = torch.tensor(rng.uniform(0.5, 1.5, 3))
        th.bias.data = torch.tensor(rng.standard_normal(3))
        _copy_params(m, th)
    for step in range(3):   # training steps update the running statistics
        x = rng.standard_normal((4, 3, 5, 6)) * 2 + 1
        for p in list(m.parameters()):
            p.grad = None
        th.zero_grad()
        _compare_module(m, th, x, rtol=1e-9, atol=1e-11, seed=step)
    if th.running_mean is not None:
        np.testing.assert_allclose(m.running_mean.numpy(), th.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(m.running_var.numpy(), th.running_var.numpy(), rtol=1e-12)
        assert int(m.num_batches_tracked.item()) == int(th.num_batches_tracked.item())
    m.eval()
    th.eval()
    x = rng.standard_normal((2, 3, 4, 4))
    for p in list(m.parameters()):
        p.grad = None
    th.zero_grad()
    _compare_module(m, th, x, rtol=1e-9, atol=1e-11)


def test_batchnorm2d_rejects_non_4d():
    with pytest.raises(ValueError):
        torch.nn.BatchNorm2d(3)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError):
        nn.BatchNorm2d(3)(tg.zeros(2, 3, 4))


def test_dropout2d_drops_whole_channels():
    tg.manual_seed(0)
    m = nn.Dropout2d(0.4)
    assert repr(m) == repr(torch.nn.Dropout2d(0.4))
    x = tg.ones(64, 32, 3, 4, requires_grad=True)
    y = m(x)
    a = y.detach().numpy()
    per_channel = a.reshape(64, 32, -1)
    # every channel is all zeros or all 1/(1-p)
    assert np.all((per_channel == 0).all(-1) | np.isclose(per_channel, 1 / 0.6).all(-1))
    frac = (per_channel[..., 0] == 0).mean()
    assert 0.33 < frac < 0.47
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a)          # dx = mask
    m.eval()
    assert m(x) is x or np.array_equal(m(x).detach().numpy(), x.detach().numpy())
    assert np.all(nn.Dropout2d(1.0)(tg.ones(2, 3, 2, 2)).numpy() == 0)
    # 3-D input: (N, C, L) with torch's warning; the mask is per (N, C)
    with pytest.warns(UserWarning, match="3D input"):
        y3 = nn.Dropout2d(0.5)(tg.ones(40, 30, 5)).numpy()
    assert np.all((y3 == 0).all(-1) | (y3 == 2).all(-1))
    with pytest.raises(ValueError):
        nn.Dropout2d(1.5)


# ---- the MNIST CNN ----------------------------------------------------------------------
def _torch_cnn(hidden):
    head = ([torch.nn.Linear(32 * 7 * 7, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10)]
            if hidden else [torch.nn.Linear(32 * 7 * 7, 10)])
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), *head)


@pytest.mark.parametrize("hidden", [None, 0])   # the default (128), the issue-6 model
def test_cnn_steps_match_torch(hidden):
    from tapegrad.train.cnn import MnistCNN
    model = MnistCNN() if hidden is None else MnistCNN(hidden=hidden)
    model.double()
    th = _torch_cnn(128 if hidden is None else hidden).double()
    tg_params = list(model.parameters())
    th_params = list(th.parameters())
    assert [tuple(p.shape) for p in tg_params] == [tuple(p.shape) for p in th_params]
    for p, q in zip(tg_params, th_params):
        p.data[...] = q.detach().numpy()
    opt = tg.optim.Adam(tg_params, lr=1e-2)
    opt_t = torch.optim.Adam(th_params, lr=1e-2)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.random((8, 784))
        y = rng.integers(0, 10, 8)
        loss = tg.nn.functional.cross_entropy(model(tg.tensor(x)), tg.tensor(y))
        loss_t = torch.nn.functional.cross_entropy(th(torch.tensor(x).reshape(-1, 1, 28, 28)),
                                                   torch.tensor(y))
        np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=1e-10)
        opt.zero_grad()
        loss.backward()
        opt.step()
        opt_t.zero_grad()
        loss_t.backward()
        opt_t.step()
    for p, q in zip(tg_params, th_params):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-8,
                                   atol=1e-10)


def test_cnn_learns_on_a_slice_of_the_mnist_sample():
    from tapegrad.data.mnist import load_mnist_sample
    from tapegrad.train.cnn import MnistCNN
    Xtr, ytr, Xte, yte = load_mnist_sample()
    rng = np.random.default_rng(0)
    tr = rng.permutation(len(Xtr))[:1000]

    def prep(X):
        return ((X.astype(np.float32) / 255.0 - 0.1307) / 0.3081)[:, None]

    Xtr, ytr, Xte, yte = prep(Xtr[tr]), ytr[tr], prep(Xte[:500]), yte[:500]
    tg.manual_seed(0)
    model = MnistCNN(channels=(8, 16), hidden=0)   # the conv stack alone (issue 6)
    opt = tg.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(2):
        perm = rng.permutation(len(Xtr))
        for i in range(0, len(perm), 50):
            idx = perm[i:i + 50]
            loss = tg.nn.functional.cross_entropy(model(tg.tensor(Xtr[idx])),
                                                  tg.tensor(ytr[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with tg.no_grad():
        acc = (model(tg.tensor(Xte)).numpy().argmax(1) == yte).mean()
    assert acc > 0.85, acc


def test_cli_trains_and_evaluates_the_cnn(tmp_path, capsys):
    """`tapegrad train mnist --model cnn` end to end: one epoch on the sample, then
    `tapegrad eval` rebuilds the CNN from the checkpoint and reproduces the accuracy."""
    import json

    from tapegrad import cli
    from tapegrad.train import mnist_models
    from tapegrad.train.cnn import MnistCNN
    assert "cnn" in mnist_models.MODELS
    assert isinstance(mnist_models.build("cnn", {}), MnistCNN)   # issue 6's, no "arch"
    argv = ["train", "mnist", "--model", "cnn", "--data", "sample", "--epochs", "1",
            "--out", str(tmp_path), "--no-progress", "--seed", "0"]
    assert cli.main(argv) == 0
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["config"]["model"] == "cnn" and m["config"]["schedule"] == "onecycle"
    assert m["config"]["arch"] == {"channels": [16, 32], "hidden": 128}
    assert m["test_accuracy"][-1] > 0.80
    capsys.readouterr()
    assert cli.main(["eval", str(tmp_path / "checkpoint.safetensors")]) == 0
    out = capsys.readouterr().out
    assert f"{100 * m['test_accuracy'][-1]:.2f}%" in out


@pytest.mark.parametrize("nd,kw", [
    (2, dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1,
             output_padding=1, groups=2)),
    (2, dict(in_channels=3, out_channels=2, kernel_size=(2, 3), dilation=(2, 1), bias=False)),
    (1, dict(in_channels=3, out_channels=4, kernel_size=4, stride=2, padding=1)),
])
def test_conv_transpose_modules_match_torch(nd, kw):
    tg_cls, th_cls = ((nn.ConvTranspose2d, torch.nn.ConvTranspose2d) if nd == 2
                      else (nn.ConvTranspose1d, torch.nn.ConvTranspose1d))
    th = th_cls(**kw).double()
    m = tg_cls(**kw, dtype=tg.float64)
    assert repr(m) == repr(th)
    assert [tuple(p.shape) for p in m.parameters()] == [tuple(p.shape) for p in th.parameters()]
    fan_in = m.weight.shape[1] * int(np.prod(m.weight.shape[2:]))
    assert np.abs(m.weight.detach().numpy()).max() <= 1 / math.sqrt(fan_in)
    _copy_params(m, th)
    shape = (2, kw["in_channels"], 5, 6) if nd == 2 else (2, kw["in_channels"], 7)
    _compare_module(m, th, np.random.default_rng(8).standard_normal(shape))


def test_conv_transpose2d_output_size_and_errors():
    th = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    m = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=tg.float64)
    _copy_params(m, th)
    x = np.random.default_rng(9).standard_normal((1, 2, 4, 5))
    y = m(tg.tensor(x), output_size=(8, 10))
    yt = th(torch.tensor(x), output_size=(8, 10))
    assert tuple(y.shape) == tuple(yt.shape) == (1, 3, 8, 10)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    for bad in [(9, 10), (6, 10)]:
        with pytest.raises(ValueError):
            th(torch.tensor(x), output_size=bad)
        with pytest.raises(ValueError):
            m(tg.tensor(x), output_size=bad)
    with pytest.raises(ValueError):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")

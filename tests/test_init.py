"""tg.nn.init vs torch.nn.init: gains and fans exactly, distributions statistically
(the random streams differ by design), in-place semantics, no graph recorded."""
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
from tapegrad.nn import init


@pytest.mark.parametrize("name,param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv_transpose2d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)])
def test_calculate_gain(name, param):
    assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 2), (1, 1)])
def test_fans(shape):
    ours = init._calculate_fan_in_and_fan_out(tg.zeros(*shape))
    theirs = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
    assert ours == theirs
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(tg.zeros(3))


def _check_uniform(a, bound):
    assert np.abs(a).max() <= bound
    assert np.abs(a).max() > 0.98 * bound
    assert abs(a.var() - bound ** 2 / 3) < 0.03 * bound ** 2
    assert abs(a.mean()) < 0.02 * bound


def _check_normal(a, std, mean=0.0):
    assert abs(a.std() - std) < 0.02 * std
    assert abs(a.mean() - mean) < 0.02 * std + 1e-12


SHAPE = (300, 200)


@pytest.mark.parametrize("kw", [{}, {"a": math.sqrt(5)}, {"mode": "fan_out"},
                                {"nonlinearity": "relu"}, {"a": 0.1, "mode": "fan_out"}])
def test_kaiming_uniform(kw):
    t = tg.empty(*SHAPE)
    init.kaiming_uniform_(t, **kw)
    # the bound PyTorch uses: gain * sqrt(3 / fan)
    ref = torch.empty(*SHAPE)
    torch.nn.init.kaiming_uniform_(ref, **kw)
    fan = init._calculate_correct_fan(t, kw.get("mode", "fan_in"))
    bound = init.calculate_gain(kw.get("nonlinearity", "leaky_relu"), kw.get("a", 0)) * \
        math.sqrt(3.0 / fan)
    _check_uniform(t.numpy(force=True), bound)
    _check_uniform(ref.numpy(), bound)


@pytest.mark.parametrize("kw", [{}, {"mode": "fan_out"}, {"nonlinearity": "relu"}])
def test_kaiming_normal(kw):
    t = tg.empty(*SHAPE)
    init.kaiming_normal_(t, **kw)
    ref = torch.empty(*SHAPE)
    torch.nn.init.kaiming_normal_(ref, **kw)
    _check_normal(t.numpy(force=True), float(ref.std()))


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(gain):
    t = tg.empty(*SHAPE)
    init.xavier_uniform_(t, gain=gain)
    _check_uniform(t.numpy(force=True), gain * math.sqrt(6.0 / sum(SHAPE)))
    init.xavier_normal_(t, gain=gain)
    _check_normal(t.numpy(force=True), gain * math.sqrt(2.0 / sum(SHAPE)))
    ref = torch.empty(*SHAPE)
    torch.nn.init.xavier_normal_(ref, gain=gain)
    _check_normal(ref.numpy(), gain * math.sqrt(2.0 / sum(SHAPE)))


def test_simple_fills_and_ranges():
    t = tg.empty(100, 100)
    init.uniform_(t, -2, 3)
    assert t.numpy(force=True).min() >= -2 and t.numpy(force=True).max() < 3 and abs(t.numpy(force=True).mean() - 0.5) < 0.05
    init.normal_(t, 1.5, 0.5)
    _check_normal(t.numpy(force=True), 0.5, 1.5)
    init.zeros_(t)
    assert not np.any(t.numpy(force=True))
    init.ones_(t)
    assert np.all(t.numpy(force=True) == 1)
    init.constant_(t, 0.25)
    assert np.all(t.numpy(force=True) == 0.25)
    init.eye_(t)
    np.testing.assert_array_equal(t.numpy(force=True), np.eye(100))


def test_trunc_normal():
    t = tg.empty(200, 200)
    init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    ref = torch.empty(200, 200)
    torch.nn.init.trunc_normal_(ref, mean=0.5, std=1.0, a=-1.0, b=1.5)
    assert t.numpy(force=True).min() >= -1.0 and t.numpy(force=True).max() <= 1.5
    assert abs(t.numpy(force=True).mean() - ref.mean().item()) < 0.02
    assert abs(t.numpy(force=True).std() - ref.std().item()) < 0.02


def test_orthogonal():
    t = tg.empty(6, 4)
    init.orthogonal_(t)
    np.testing.assert_allclose(t.numpy(force=True).T @ t.numpy(force=True), np.eye(4), atol=1e-5)


def test_in_place_no_graph_and_reproducible():
    p = nn.Parameter(tg.zeros(5, 4))
    buf = p.numpy(force=True)
    out = init.kaiming_uniform_(p, a=math.sqrt(5))
    assert out is p and p.numpy(force=True) is buf              # in place: same tensor, same array
    assert p.grad_fn is None and p.is_leaf and p.requires_grad
    assert p.dtype == np.float32
    d = nn.Parameter(tg.zeros(3, 3, dtype=tg.float64))
    init.normal_(d)
    assert d.dtype == np.float64
    tg.manual_seed(7)
    a = init.normal_(tg.empty(4)).numpy(force=True).copy()
    tg.manual_seed(7)
    b = init.normal_(tg.empty(4)).numpy(force=True).copy()
    np.testing.assert_array_equal(a, b)
    g = tg.Generator().manual_seed(3)
    c = init.uniform_(tg.empty(4), generator=g).numpy(force=True).copy()
    g = tg.Generator().manual_seed(3)
    np.testing.assert_array_equal(c, init.uniform_(tg.empty(4), generator=g).numpy(force=True))


def test_linear_default_init_matches_torch_distribution():
    tg.manual_seed(0)
    torch.manual_seed(0)
    a, b = nn.Linear(300, 200), torch.nn.Linear(300, 200)
    bound = 1 / math.sqrt(300)
    _check_uniform(a.weight.numpy(force=True), bound)
    _check_uniform(b.weight.detach().numpy(), bound)
    assert np.abs(a.bias.numpy(force=True)).max() <= bound

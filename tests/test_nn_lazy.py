"""Lazy modules vs PyTorch: `nn.LazyLinear` (d2l builds its models with it), the lazy
convolutions, batch norms and instance norms, and `UninitializedParameter`.

torch's LazyModuleMixin semantics: placeholders until the first forward, shapes from that
input, then the class becomes the plain one (`type(m) == nn.Linear`, what d2l's init
functions test); an optimizer built before the first forward holds the materialized
parameters; `state_dict` holds the placeholders and `load_state_dict` materializes them;
`.double()` before the first forward sets the dtype; ops on a placeholder raise torch's
ValueError, its shape torch's RuntimeError. Numbers are compared after copying torch's
materialized weights: outputs and gradients of the input and of every parameter.
"""
import copy

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
from tapegrad.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


def _copy_from_torch(ours, theirs):
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})


def _same_outputs_and_grads(ours, theirs, x):
    xg = tg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    y, yt = ours(xg), theirs(xt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    g = np.random.default_rng(0).standard_normal(tuple(yt.shape))
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    pt = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), pt[name].grad.numpy(), rtol=1e-12,
                                   atol=1e-12, err_msg=name)


def test_d2l_lazy_mlp_matches_torch():
    """d2l's pattern: LazyLinear layers, a dry run, then `net.apply(init)` testing
    `type(m) == nn.Linear`."""
    X = np.random.default_rng(1).standard_normal((2, 20))
    net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10)).double()
    tnet = torch.nn.Sequential(torch.nn.LazyLinear(256), torch.nn.ReLU(),
                               torch.nn.LazyLinear(10)).double()
    assert repr(net) == repr(tnet)
    assert isinstance(net[0].weight, UninitializedParameter)
    assert net[0].has_uninitialized_params()
    net(tg.tensor(X))
    tnet(torch.tensor(X))
    assert repr(net) == repr(tnet)
    assert type(net[0]) is nn.Linear and type(net[2]) is nn.Linear
    assert net[0].weight.shape == (256, 20) and type(net[0].weight) is nn.Parameter
    # the default initialisation of the inferred shape: U(-1/sqrt(20), 1/sqrt(20))
    assert np.abs(net[0].weight.detach().numpy()).max() <= 1 / np.sqrt(20)
    assert np.abs(net[0].weight.detach().numpy()).max() > 0.5 / np.sqrt(20)
    assert not net[0]._forward_pre_hooks  # the hook is gone after materialization
    seen = []

    def init_weights(m):
        if type(m) == nn.Linear:
            seen.append(m)
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)
    net.apply(init_weights)
    assert len(seen) == 2
    _copy_from_torch(net, tnet)
    _same_outputs_and_grads(net, tnet, X)


def test_optimizer_built_before_the_first_forward():
    tg.manual_seed(0)
    net = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    opt = tg.optim.SGD(net.parameters(), lr=0.1)  # torch accepts this too
    tnet = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU(), torch.nn.LazyLinear(1))
    torch.optim.SGD(tnet.parameters(), lr=0.1)
    x = tg.randn(8, 3)
    before = None
    for _ in range(2):
        loss = net(x).pow(2).mean()
        if before is None:
            before = net[0].weight.detach().numpy().copy()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert opt.param_groups[0]["params"][0] is net[0].weight
    assert not np.array_equal(before, net[0].weight.detach().numpy())


def test_state_dict_and_load_state_dict():
    m = nn.LazyLinear(4)
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and all(is_lazy(v) for v in sd.values())
    assert repr(sd["weight"]) == repr(torch.nn.LazyLinear(4).state_dict()["weight"])
    m(tg.randn(2, 3))
    m2 = nn.LazyLinear(4)
    res = m2.load_state_dict(m.state_dict())
    assert not res.missing_keys and not res.unexpected_keys
    assert type(m2) is nn.LazyLinear  # the class changes at the first forward, as torch
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    m2(tg.randn(2, 3))
    assert type(m2) is nn.Linear and m2.in_features == 3  # torch: in_features from input
    t2 = torch.nn.LazyLinear(4)
    t2.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    t2(torch.randn(2, 3))
    assert repr(t2) == repr(m2)
    # a placeholder into an initialized module: torch's RuntimeError
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict())
    # placeholder into placeholder: nothing to do
    m3 = nn.LazyLinear(4)
    m3.load_state_dict(nn.LazyLinear(4).state_dict())
    assert m3.has_uninitialized_params()


def test_placeholders_refuse_use_as_torch():
    u = nn.LazyLinear(3).weight
    ut = torch.nn.LazyLinear(3).weight
    assert repr(u) == repr(ut) == "<UninitializedParameter>"
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        u + 1
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        ut + 1
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        u.shape
    assert u.requires_grad and u.dtype == tg.float32
    p = UninitializedParameter(dtype=tg.float64)
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == tg.float64
    b = UninitializedBuffer()
    b.materialize(4)
    assert type(b) is tg.Tensor and b.shape == (4,) and not b.requires_grad
    # initialising a placeholder is refused (torch: ValueError; here the shape read
    # comes first: RuntimeError), with a message naming the uninitialized parameter
    with pytest.raises((ValueError, RuntimeError), match="uninitialized parameter"):
        nn.init.normal_(nn.LazyLinear(2).weight)


def test_dtype_before_the_first_forward_and_deepcopy():
    m = nn.LazyLinear(3).double()
    m(tg.randn(2, 5, dtype=tg.float64))
    assert m.weight.dtype == tg.float64 and m.bias.dtype == tg.float64
    c = copy.deepcopy(nn.LazyLinear(3))
    assert repr(c) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert c.has_uninitialized_params()
    c(tg.randn(1, 2))
    assert repr(c) == "Linear(in_features=2, out_features=3, bias=True)"
    nb = nn.LazyLinear(3, bias=False)
    assert nb.bias is None and repr(nb) == repr(torch.nn.LazyLinear(3, bias=False))


CONVS = [("LazyConv1d", dict(out_channels=4, kernel_size=3, padding=1), (2, 3, 7)),
         ("LazyConv2d", dict(out_channels=6, kernel_size=3, groups=3, stride=2), (2, 3, 7, 6)),
         ("LazyConv3d", dict(out_channels=2, kernel_size=(2, 3, 2)), (2, 3, 4, 5, 4)),
         ("LazyConv2d", dict(out_channels=4, kernel_size=2), (3, 5, 5)),  # unbatched
         ("LazyConvTranspose1d", dict(out_channels=4, kernel_size=3, stride=2), (2, 3, 5)),
         ("LazyConvTranspose2d", dict(out_channels=2, kernel_size=2, output_padding=1,
                                      stride=2), (2, 3, 4, 3)),
         ("LazyConvTranspose3d", dict(out_channels=2, kernel_size=2, groups=1), (1, 3, 2, 3, 2))]


@pytest.mark.parametrize("name,kw,shape", CONVS)
def test_lazy_convolutions_match_torch(name, kw, shape):
    ours = getattr(nn, name)(**kw, dtype=tg.float64)
    theirs = getattr(torch.nn, name)(**kw, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(2).standard_normal(shape)
    ours(tg.tensor(x))
    with torch.no_grad():
        theirs(torch.tensor(x))
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert ours.weight.shape == tuple(theirs.weight.shape)
    _copy_from_torch(ours, theirs)
    _same_outputs_and_grads(ours, theirs, x)


def test_lazy_convolution_errors_as_torch():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(tg.randn(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) "
                                           "input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(tg.randn(3, 5))


NORMS = [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)),
         ("LazyBatchNorm2d", (4, 3, 5, 2)), ("LazyBatchNorm3d", (4, 3, 5, 2, 2)),
         ("LazyInstanceNorm1d", (4, 3, 5)), ("LazyInstanceNorm2d", (4, 3, 5, 2)),
         ("LazyInstanceNorm3d", (2, 3, 5, 2, 2))]


@pytest.mark.parametrize("kw", [{}, dict(affine=False, track_running_stats=False),
                                dict(momentum=None, eps=1e-3)])
@pytest.mark.parametrize("name,shape", NORMS)
def test_lazy_norms_match_torch(name, shape, kw):
    ours = getattr(nn, name)(**kw, dtype=tg.float64)
    theirs = getattr(torch.nn, name)(**kw, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(3).standard_normal(shape)
    y, yt = ours(tg.tensor(x)), theirs(torch.tensor(x))
    assert repr(ours) == repr(theirs) and type(ours).__name__ == name[4:]
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    for (k, v), (kt, vt) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k == kt
        np.testing.assert_allclose(v.detach().numpy(), vt.detach().numpy(), rtol=1e-12,
                                   atol=1e-14, err_msg=k)
    _same_outputs_and_grads(ours, theirs, x)


def test_lazy_module_mixin_is_torchs_name():
    from tapegrad.nn.modules.lazy import LazyModuleMixin  # torch.nn.modules.lazy's path
    assert not hasattr(nn, "LazyModuleMixin") and not hasattr(torch.nn, "LazyModuleMixin")
    assert nn.UninitializedParameter is UninitializedParameter
    assert issubclass(nn.LazyLinear, LazyModuleMixin)
    assert nn.LazyLinear.cls_to_become is nn.Linear
    assert nn.LazyBatchNorm2d.cls_to_become is nn.BatchNorm2d

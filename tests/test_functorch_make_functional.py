"""`tapegrad.functorch.make_functional(_with_buffers)` against torch 2.13's `functorch`:
the same model (torch's weights copied in) gives the same outputs, parameter/buffer
order, gradients through `func.grad` and forward-mode tangents (the forward-AD
tutorial's pattern), and the original model is left untouched."""
import warnings

import functorch
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad import functorch as tg_functorch
from tapegrad.autograd import forward_ad as tg_fwAD


def _twins(build):
    torch.manual_seed(0)
    tm = build(torch.nn)
    gm = build(tg.nn)
    gm.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, gm


def _mlp_bn(nn):
    return nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 3))


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return f(*a, **k)


def test_make_functional_with_buffers_matches_functorch():
    tm, gm = _twins(_mlp_bn)
    tf, tp, tb = _quiet(functorch.make_functional_with_buffers, tm)
    gf, gp, gb = _quiet(tg_functorch.make_functional_with_buffers, gm)
    assert [p.shape for p in gp] == [tuple(p.shape) for p in tp]
    assert [b.shape for b in gb] == [tuple(b.shape) for b in tb]
    assert len(list(gf.parameters())) == len(list(tf.parameters()))
    assert gf.param_names == tuple(
        n for n, _ in gm.named_parameters())
    x = np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32)
    tout, gout = tf(tp, tb, torch.tensor(x)), gf(gp, gb, tg.tensor(x))
    np.testing.assert_allclose(gout.detach().numpy(), tout.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    # the copy's buffers were updated (train mode), the original model's were not
    np.testing.assert_allclose(gb[0].numpy(), tb[0].numpy(), rtol=1e-5, atol=1e-6)
    assert float(gm[1].running_mean.abs().sum()) == 0.0
    assert all(p is not q for p, q in zip(gp, gm.parameters()))
    # gradients with respect to the parameters tuple (eval: torch refuses BatchNorm's
    # running-statistics update inside a transform)
    tf.eval()
    gf.eval()
    tg_ = torch.func.grad(lambda p: tf(p, tb, torch.tensor(x)).pow(2).sum())(tp)
    gg = tg.func.grad(lambda p: gf(p, gb, tg.tensor(x)).pow(2).sum())(gp)
    for a, b in zip(gg, tg_):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_forward_ad_tutorial_with_make_functional():
    """The forward-AD tutorial's functorch section: dual parameters through fmodel."""
    tm, gm = _twins(lambda nn: nn.Linear(5, 5))
    x = np.random.default_rng(2).standard_normal((16, 5)).astype(np.float32)
    tangent_np = [np.random.default_rng(3 + i).random(tuple(p.shape)).astype(np.float32)
                  for i, p in enumerate(tm.parameters())]
    res = []
    for lib, fc, fwAD in ((torch, functorch, torch.autograd.forward_ad),
                          (tg, tg_functorch, tg_fwAD)):
        model = tm if lib is torch else gm
        func, params = _quiet(fc.make_functional, model)
        tangents = tuple(lib.tensor(t) for t in tangent_np)
        with fwAD.dual_level():
            dual = tuple(fwAD.make_dual(p, t) for p, t in zip(params, tangents))
            out = func(dual, lib.tensor(x))
            res.append(fwAD.unpack_dual(out).tangent.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-5, atol=1e-6)


def test_refusals_and_options_as_functorch():
    for lib, fc in ((torch, functorch), (tg, tg_functorch)):
        with pytest.raises(RuntimeError, match="has buffers. Please use "
                                               "make_functional_with_buffers"):
            _quiet(fc.make_functional, lib.nn.BatchNorm1d(2))
        with pytest.warns(FutureWarning, match="functorch.make_functional"):
            _, params = fc.make_functional(lib.nn.Linear(2, 2),
                                           disable_autograd_tracking=True)
        assert not any(p.requires_grad for p in params)
    func, params, buffers = _quiet(tg_functorch.make_functional_with_buffers,
                                   tg.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="expected 2 params"):
        func(params[:1], buffers, tg.ones(2))

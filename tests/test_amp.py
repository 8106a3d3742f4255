"""float16 through the table (vs torch float16 on CPU) and tg.amp.GradScaler (vs
torch.amp.GradScaler, step by step): scaling saves gradients that float16 flushes to 0."""
import sys
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import test_opdb  # noqa: E402
from opdb import OP_DB  # noqa: E402

# elementwise ops, matmul and the losses (the list), plus softmax / linear
FP16_OPS = {"abs", "add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "rsqrt", "sin",
            "cos", "tanh", "sigmoid", "relu", "gelu", "leaky_relu", "pow", "maximum",
            "minimum", "clamp", "where", "sign", "matmul", "linear", "softmax",
            "log_softmax", "cross_entropy", "nll_loss", "binary_cross_entropy",
            "binary_cross_entropy_with_logits", "mean", "sum"}


def _fp16_cases():
    for e in OP_DB:
        if e.name in FP16_OPS:
            for k, s in enumerate(e.samples(np.random.default_rng(0), e)):
                yield pytest.param(e, s, id=f"{e.id}-{k}")


@pytest.fixture
def fp16_torch(monkeypatch):
    monkeypatch.setitem(test_opdb._TORCH_DT, np.dtype("float16"), torch.float16)
    monkeypatch.setitem(test_opdb._KIND, torch.float16, "f")


@pytest.mark.parametrize("entry,sample", list(_fp16_cases()))
def test_float16_op_vs_torch(entry, sample, fp16_torch):
    """Outputs and gradients stay float16 and agree with torch's float16 CPU kernels
    (loosely: both round to 11 significant bits, but at different points)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test_opdb._run(entry, sample, np.float16, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_float16_losses_vs_torch(name):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((6, 5)).astype(np.float16)
    if name == "cross_entropy":
        t0 = rng.integers(0, 5, 6)
    elif name == "binary_cross_entropy_with_logits":
        t0 = rng.uniform(0, 1, (6, 5)).astype(np.float16)
    else:
        t0 = rng.standard_normal((6, 5)).astype(np.float16)
    x, xt = tg.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    lo = getattr(F, name)(x, tg.tensor(t0))
    lt = getattr(torch.nn.functional, name)(xt, torch.tensor(t0))
    assert lo.dtype == np.float16 and lt.dtype == torch.float16
    np.testing.assert_allclose(float(lo), float(lt), rtol=2e-3)
    lo.backward()
    lt.backward()
    assert x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad.numpy().astype(np.float32),
                               xt.grad.numpy().astype(np.float32), rtol=1e-2, atol=1e-4)


def _tiny_grad_step(m, scaler_cls, use_scaler):
    """float32 master weight, float16 compute; the loss makes gradients of ~1e-8."""
    w = m.tensor([0.5, -1.5, 2.0], requires_grad=True)           # float32 master
    x = m.tensor([1.0, 2.0, 3.0], dtype=m.float16)
    loss = ((w.half() * x).float() * 1e-8).sum()                 # d loss/d(w*x) = 1e-8
    opt = (tg.optim.SGD if m is tg else torch.optim.SGD)([w], lr=1.0)
    if use_scaler:
        scaler = scaler_cls("cpu")
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
    else:
        loss.backward()
    return w.grad.numpy().copy()


def test_small_gradients_flush_to_zero_without_scaling_and_survive_with_it():
    for m, cls in ((tg, tg.amp.GradScaler), (torch, torch.amp.GradScaler)):
        plain = _tiny_grad_step(m, cls, False)
        scaled = _tiny_grad_step(m, cls, True)
        assert np.all(plain == 0.0)   # 1e-8 < 2**-24: float16 has no such number
        # with S = 65536 the float16 gradient is 6.5e-4 and survives; unscaled: ~1e-8 * x
        np.testing.assert_allclose(scaled, 1e-8 * np.array([1.0, 2.0, 3.0]), rtol=1e-3)
        if m is tg:
            ours = scaled
    np.testing.assert_array_equal(ours, scaled)  # torch's numbers, bit for bit


def _run_scaler(m, cls, losses_scale, **kw):
    """A few steps with an overflow in some: returns (scales, params, trackers)."""
    scaler = cls("cpu", **kw)
    p = m.tensor([1.0, 2.0], requires_grad=True)
    opt = (tg.optim.SGD if m is tg else torch.optim.SGD)([p], lr=0.1)
    log = []
    for k, f in enumerate(losses_scale):
        opt.zero_grad()
        loss = (p * p).sum() * f
        scaled = scaler.scale(loss)
        assert scaled.dtype == loss.dtype
        scaled.backward()
        if k % 2:
            scaler.unscale_(opt)      # explicit unscale (e.g. before clipping) is optional
        ret = scaler.step(opt)
        scaler.update()
        log.append((scaler.get_scale(), p.detach().numpy().copy(), scaler.state_dict(), ret))
    return log


def test_grad_scaler_matches_torch_step_by_step():
    inf = float("inf")
    factors = [1.0, 1.0, inf, 1.0, 1.0, 1.0, float("nan"), 1.0, 1e30, 1.0]
    kw = dict(init_scale=4.0, growth_interval=2)
    ours = _run_scaler(tg, tg.amp.GradScaler, factors, **kw)
    ref = _run_scaler(torch, torch.amp.GradScaler, factors, **kw)
    for k, (a, b) in enumerate(zip(ours, ref)):
        assert a[0] == b[0], f"step {k}: scale {a[0]} vs {b[0]}"
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2] == b[2]
    # overflow steps were skipped (params unchanged), the scale halved
    assert ours[2][0] == ours[1][0] / 2 and np.array_equal(ours[2][1], ours[1][1])


def test_grad_scaler_growth_to_overflow_and_state_dict():
    # growth stops at float32's range; a loaded state continues identically
    kw = dict(init_scale=2.0 ** 120, growth_interval=1, growth_factor=2.0 ** 5)
    ours = _run_scaler(tg, tg.amp.GradScaler, [1e-30] * 3, **kw)
    ref = _run_scaler(torch, torch.amp.GradScaler, [1e-30] * 3, **kw)
    assert [a[0] for a in ours] == [b[0] for b in ref]
    s = tg.amp.GradScaler()
    s.load_state_dict(ours[-1][2])
    assert s.get_scale() == ours[-1][0] and s.state_dict() == ours[-1][2]
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        s.load_state_dict(tg.amp.GradScaler(enabled=False).state_dict())


def test_grad_scaler_errors_and_disabled_like_torch():
    for m, cls in ((tg, tg.amp.GradScaler), (torch, torch.amp.GradScaler)):
        p = m.tensor([1.0], requires_grad=True)
        opt = (tg.optim.SGD if m is tg else torch.optim.SGD)([p], lr=0.1)
        s = cls("cpu")
        with pytest.raises(AssertionError, match="_scale is None"):
            s.step(opt)
        s.scale((p * 2).sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called on this optimizer"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="being called after step"):
            s.unscale_(opt)
        s.update()
        # float16 parameters: their gradients cannot be unscaled
        p16 = m.tensor([1.0], dtype=m.float16, requires_grad=True)
        o16 = (tg.optim.SGD if m is tg else torch.optim.SGD)([p16], lr=0.1)
        s.scale((p16 * 2).sum()).backward()
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
            s.step(o16)
        d = cls("cpu", enabled=False)
        assert d.get_scale() == 1.0 and d.state_dict() == {} and not d.is_enabled()
        x = m.tensor([2.0])
        assert d.scale(x) is x

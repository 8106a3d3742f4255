"""GradMonitor: recorded norms/ratios/fractions vs PyTorch on the same model; warnings
fire on vanishing / exploding / dead / saturated networks and stay quiet on a healthy one."""
import math
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad import nn
from tapegrad.utils.grad_monitor import GradHealthWarning, GradMonitor


def _pair(sizes, act, scale=None, bias=None, seed=0):
    """The same MLP in tapegrad and torch (float64): Linear -> act -> ... -> Linear."""
    rng = np.random.default_rng(seed)
    layers_tg, layers_t = [], []
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = rng.uniform(-1, 1, (b, a)) / math.sqrt(a) * (scale or 1.0)
        bb = np.full(b, bias) if bias is not None else rng.uniform(-1, 1, b) / math.sqrt(a)
        lt, lT = nn.Linear(a, b).double(), torch.nn.Linear(a, b).double()
        with tg.no_grad():
            lt.weight.numpy(force=True)[...] = w
            lt.bias.numpy(force=True)[...] = bb
        with torch.no_grad():
            lT.weight.copy_(torch.tensor(w))
            lT.bias.copy_(torch.tensor(bb))
        layers_tg.append(lt)
        layers_t.append(lT)
        if k < len(sizes) - 2:
            layers_tg.append(getattr(nn, act)())
            layers_t.append(getattr(torch.nn, act)())
    return nn.Sequential(*layers_tg), torch.nn.Sequential(*layers_t)


def _train(sizes, act, steps=3, lr=0.1, **kw):
    m, mt = _pair(sizes, act, **kw)
    opt = tg.optim.SGD(m.parameters(), lr=lr)
    mon = GradMonitor(m, opt)
    rng = np.random.default_rng(1)
    x0, y0 = rng.standard_normal((32, sizes[0])), rng.standard_normal((32, sizes[-1]))
    ref = []
    optt = torch.optim.SGD(mt.parameters(), lr=lr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            opt.zero_grad()
            loss = ((m(tg.tensor(x0)) - tg.tensor(y0)) ** 2).mean()
            loss.backward()
            mon.step()            # after backward, before the optimizer step
            opt.step()
            optt.zero_grad()
            out = mt(torch.tensor(x0))
            lt = ((out - torch.tensor(y0)) ** 2).mean()
            lt.backward()
            before = [p.detach().clone() for p in mt.parameters()]
            ref.append(([p.grad.norm().item() for p in mt.parameters()], before))
            optt.step()
            ref[-1] = ref[-1] + ([(p.detach() - b).norm().item() / b.norm().item()
                                  for p, b in zip(mt.parameters(), before)],)
    found = [w for w in caught if issubclass(w.category, GradHealthWarning)]
    return mon, mt, ref, found


def _kinds(found):
    return {str(w.message).split(": ")[1].split(" ")[0] for w in found}


def test_records_match_torch_and_healthy_net_is_quiet():
    mon, mt, ref, found = _train([8, 16, 16, 4], "ReLU", steps=4)
    assert found == [] and mon.findings == []
    names = [n for n, _ in mon.params]
    for k, (norms, _, ratios) in enumerate(ref):
        for j, n in enumerate(names):
            assert mon.grad_norm[n][k] == pytest.approx(norms[j], rel=1e-10)
            assert mon.update_ratio[n][k] == pytest.approx(ratios[j], rel=1e-8)
    assert all(len(v) == 4 for v in mon.grad_norm.values())
    assert set(mon.activation) == {"1", "3"}


def test_vanishing_sigmoid_stack_warns():
    mon, _, ref, found = _train([8] + [32] * 10 + [4], "Sigmoid", steps=1)
    assert "vanishing" in {f[1] for f in mon.findings}
    first, last = ref[0][0][0], ref[0][0][-2]
    assert first < 1e-3 * last   # torch agrees that the first layer's gradient vanished


def test_exploding_warns():
    mon, _, ref, found = _train([8] + [32] * 6 + [4], "ReLU", scale=6.0, steps=1, lr=1e-9)
    kinds = {f[1] for f in mon.findings}
    assert "exploding" in kinds
    assert max(ref[0][0]) > 1e3


def test_dead_relu_and_saturated_tanh_fractions_vs_torch():
    x0 = np.random.default_rng(1).standard_normal((32, 8))
    mon, mt, _, found = _train([8, 16, 4], "ReLU", bias=-5.0, steps=1, lr=0.0)
    h = mt[1](mt[0](torch.tensor(x0)))
    dead = 1.0 - (h > 0).any(dim=0).double().mean().item()
    assert mon.activation["1"][0] == pytest.approx(dead) and dead > 0.5
    assert any("dead" in str(w.message) for w in found)

    mon, mt, _, found = _train([8, 16, 4], "Tanh", scale=30.0, steps=1, lr=0.0)
    h = mt[1](mt[0](torch.tensor(x0)))
    sat = (h.abs() > 0.97).double().mean().item()
    assert mon.activation["1"][0] == pytest.approx(sat) and sat > 0.5
    assert any("saturated" in str(w.message) for w in found)


def test_warns_once_per_kind_and_manual_update_and_plots(tmp_path):
    mon, _, _, found = _train([8] + [32] * 10 + [4], "Sigmoid", steps=3)
    assert sum("vanishing" in str(w.message) for w in found) == 1
    assert sum(f[1] == "vanishing" for f in mon.findings) == 3
    paths = mon.plot(str(tmp_path / "h"))
    assert [p.rsplit("_", 1)[-1] for p in paths] == ["norm.png", "ratio.png", "activations.png"]
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "grad norm" in mon.summary()
    # without an optimizer: before_step/after_step around a manual update
    m = nn.Linear(3, 2)
    mon = GradMonitor(m)
    m(tg.ones(4, 3)).sum().backward()
    mon.before_step()
    with tg.no_grad():
        m.weight.data -= 0.5 * m.weight.grad.numpy(force=True)
    mon.after_step()
    mon.step()
    w = m.weight.numpy(force=True)
    g = m.weight.grad.numpy(force=True).astype(np.float64)
    assert mon.update_ratio["weight"][0] == pytest.approx(
        0.5 * np.linalg.norm(g) / np.linalg.norm(w + 0.5 * g), rel=1e-5)
    mon.remove()


def test_auto_step_inside_optimizer_step():
    m, _ = _pair([4, 8, 2], "Tanh")
    opt = tg.optim.SGD(m.parameters(), lr=0.1)
    mon = GradMonitor(m, opt, auto_step=True)
    for _ in range(3):
        opt.zero_grad()
        m(tg.ones(5, 4, dtype=tg.float64)).pow(2).sum().backward()
        g = m[0].weight.grad.numpy().copy()
        opt.step()
    assert mon.steps == 3 and len(mon.update_ratio["0.weight"]) == 3
    assert mon.grad_norm["0.weight"][-1] == pytest.approx(np.linalg.norm(g), rel=1e-12)
    assert all(r > 0 for r in mon.update_ratio["0.weight"])


def test_training_command_monitor_flag(tmp_path, capsys):
    from tapegrad import cli
    code = cli.main(["train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "16",
                     "--batch-size", "500", "--no-progress", "--monitor",
                     "--out", str(tmp_path)])
    assert code == 0
    import json
    m = json.load(open(tmp_path / "metrics.json"))
    assert m["grad_health"]["steps"] == 8          # 4000 sample images / 500
    for p in m["files"]["grad_health"]:
        assert open(p, "rb").read(4) == b"\x89PNG"
    assert "gradient health, last step" in capsys.readouterr().out

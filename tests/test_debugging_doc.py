"""docs/debugging-backward.md: the numbers behind examples/debugging_checklist.py's output
agree with PyTorch (or with a formula). That the page quotes the script's code and output
exactly is checked by the doc tests (conftest.py, `python -m pytest docs -q`)."""
import contextlib
import io
import os
import sys
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import debugging_checklist as dc  # noqa: E402

def _run(k):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ret = dc.ITEMS[k - 1]()
    return buf.getvalue(), ret


def test_item1_clamped_loss_vs_torch():
    _, r = _run(1)
    x, y = torch.tensor(r["x"]), torch.tensor(r["y"])
    w = torch.tensor(r["w0"], dtype=torch.float64, requires_grad=True)
    pred = w * x
    pred.retain_grad()
    per = (pred - y) ** 2
    per.clamp(max=dc.CLAMP_AT).mean().backward()
    clamped = (per > dc.CLAMP_AT).numpy()
    assert int(clamped.sum()) == r["n_clamped"] == 2
    assert np.all(pred.grad.numpy()[clamped] == 0) and np.all(r["grad_clamped"] == 0)
    assert w.grad.item() == pytest.approx(r["dw_clamped"], rel=1e-12)
    w.grad = None
    pred = w * x
    c = dc.CLAMP_AT / len(r["x"])
    pred.register_hook(lambda g: g.clamp(-c, c))
    ((pred - y) ** 2).mean().backward()
    assert w.grad.item() == pytest.approx(r["dw_fixed"], rel=1e-12)


def test_item2_same_error_as_torch():
    _, msg = _run(2)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError) as ei:
        (w * 2).backward()
    assert msg.split(":")[0] == str(ei.value).split(":")[0] == \
        "grad can be implicitly created only for scalar outputs"


def test_item3_cuts_vs_torch():
    _, ours = _run(3)
    rng = np.random.default_rng(dc.SEED)
    x = torch.tensor(rng.standard_normal((4, 3)))
    w1 = torch.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w2 = torch.tensor(rng.standard_normal((5, 1)), requires_grad=True)
    cuts = {"none": lambda h: h, "detach": lambda h: h.detach(),
            "numpy": lambda h: torch.tensor(h.detach().numpy()),
            "int cast": lambda h: (h * 100).long().double() / 100}
    for name, cut in cuts.items():
        w1.grad = w2.grad = None
        (cut(torch.tanh(x @ w1)) @ w2).sum().backward()
        assert ours[name] == [n for n, p in (("w1", w1), ("w2", w2)) if p.grad is None]


def test_item4_roles_vs_torch():
    _, rows = _run(4)
    rng = np.random.default_rng(dc.SEED)
    x = torch.tensor(rng.standard_normal((4, 3)))
    w1 = torch.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    frozen = torch.tensor(rng.standard_normal((3, 3)))
    w2 = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    h = torch.relu(x @ w1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when reading a non-leaf's .grad
        (h @ frozen @ w2).pow(2).mean().backward()
        ref = [(t.is_leaf, t.requires_grad, t.grad is not None) for t in (x, w1, h, frozen, w2)]
    assert [r[1:] for r in rows] == ref


def _torch_copy(model):
    layers = []
    for m in model:
        if isinstance(m, tg.nn.Linear):
            lt = torch.nn.Linear(m.in_features, m.out_features)
            with torch.no_grad():
                lt.weight.copy_(torch.tensor(m.weight.detach().numpy()))
                lt.bias.copy_(torch.tensor(m.bias.detach().numpy()))
            layers.append(lt)
        else:
            layers.append(getattr(torch.nn, type(m).__name__)())
    return torch.nn.Sequential(*layers)


def test_item5_norms_vs_torch():
    _, ours = _run(5)
    configs = {"sigmoid, default init": dict(act=tg.nn.Sigmoid),
               "relu, default init": dict(act=tg.nn.ReLU),
               "relu, He init": dict(act=tg.nn.ReLU, he_init=True),
               "relu, He init x4": dict(act=tg.nn.ReLU, he_init=True, gain=4.0)}
    expected = {"sigmoid, default init": ["vanishing"], "relu, default init": ["dead"],
                "relu, He init": [], "relu, He init x4": ["exploding"]}
    rng = np.random.default_rng(dc.SEED)
    x = torch.tensor(rng.standard_normal((64, dc.WIDTH)).astype(np.float32))
    y = torch.tensor(rng.standard_normal((64, 1)).astype(np.float32))
    for name, kw in configs.items():
        mt = _torch_copy(dc.mlp(dc.DEPTH, dc.WIDTH, **kw))
        torch.nn.functional.mse_loss(mt(x), y).backward()
        first, last = mt[0].weight.grad.norm().item(), mt[2 * dc.DEPTH].weight.grad.norm().item()
        f, la, kinds = ours[name]
        assert f == pytest.approx(first, rel=1e-3) and la == pytest.approx(last, rel=1e-3)
        assert kinds == expected[name]


def test_item6_nan_blame():
    _, msg = _run(6)
    assert msg.startswith("Function 'sqrt' returned inf values")
    x = torch.tensor(0.0, requires_grad=True)
    torch.sqrt(x * x).backward()
    assert torch.isnan(x.grad)          # the symptom, in PyTorch too


def test_item7_8_memory_formula_and_grads_vs_torch():
    _, (plain, ck, diff) = _run(7)
    act = dc.CKPT_BATCH * dc.CKPT_WIDTH * 4
    per_seg = dc.CKPT_LAYERS // dc.CKPT_SEGMENTS
    assert plain == 2 * dc.CKPT_LAYERS * act                     # Linear out + tanh out
    assert ck == (dc.CKPT_SEGMENTS - 1) * act + 2 * per_seg * act
    assert diff == 0.0
    _, (train, inference) = _run(8)
    assert train == plain and inference == 0


def test_item9_same_grad_none_parameters_as_torch():
    _, (report, warned) = _run(9)

    class TorchBuggy(torch.nn.Module):  # BuggyNet, line for line
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Linear(3, 8)
            self.body = torch.nn.Linear(8, 8)
            self.head = torch.nn.Linear(8, 1)
            self.aux_head = torch.nn.Linear(8, 1)
            self.norm_scale = torch.nn.Linear(8, 8)
            self.norm_scale.requires_grad_(False)
            self.adapters = [torch.nn.Linear(8, 8)]

    m = TorchBuggy()
    m.forward = lambda x: dc.BuggyNet.forward(m, x)
    m(torch.randn(4, 3)).pow(2).mean().backward()
    want = sorted(n for n, p in m.named_parameters() if p.grad is None)
    assert sorted(report) == want
    assert len(list(m.parameters())) == report.total == 10   # the list's 2 are missing
    assert [r.split(":")[0] for r in report.unregistered] == ["adapters"]
    assert len(warned) == 1 and "4 parameter(s)" in warned[0]   # frozen ones not listed


def test_item10_torch_fails_on_the_same_loop():
    _, msg = _run(10)
    cell = torch.nn.RNNCell(3, 4)
    h = torch.zeros(1, 4)
    with pytest.raises(RuntimeError) as ei:
        for x in torch.randn(3, 1, 3):
            h = cell(x, h)
            h.pow(2).sum().backward()
    assert msg.startswith(str(ei.value).split(" (op:")[0])
    assert "made by `tanh` at debugging_checklist.py:" in msg

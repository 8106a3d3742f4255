"""tg.viz.stepper in a real browser: headless Chromium opens the page from disk, the
keyboard steps it to the end, nothing is logged as an error, nothing is fetched, and
the gradients the page shows are tapegrad's `.grad` (which are checked against
micrograd and PyTorch, the oracles).

Chromium is required in CI (TAPEGRAD_REQUIRE_TORCH=1, as for every other tool the
suite needs): there a missing browser fails the run; elsewhere the module is skipped.
.ci/run installs Debian's `chromium`.
"""
import json
import os

import numpy as np
import pytest

import _chromium
import tapegrad as tg
from tapegrad import Value
from tapegrad.viz.stepper import short, summary

EXE = _chromium.find()
if EXE is None:
    if os.environ.get("TAPEGRAD_REQUIRE_TORCH"):
        raise RuntimeError("the stepper's browser tests need Chromium: apt-get install -y "
                           "chromium (.ci/run does), or set TAPEGRAD_CHROMIUM to its path")
    pytest.skip("Chromium is not installed", allow_module_level=True)

import torch  # noqa: E402  (conftest.py makes torch required)

_LEAVES_JS = """JSON.stringify(Array.from(document.querySelectorAll('tr[data-leaf]')).map(
  function(r){ var g = document.getElementById('g-' + r.dataset.id);
    return {name: r.dataset.leaf, grad: JSON.parse(r.dataset.grad),
            text: r.querySelector('.final').textContent, graph: g ? g.textContent : null}; }))"""


def _step_through(path, n_steps):
    """Open the page, press the right arrow once per step (checking the step after each
    press) and a few other keys; return (leaves as shown at the end, panel text of each
    step, problems)."""
    with _chromium.Browser(EXE) as b:
        b.open(path)
        step = lambda: int(b.eval("document.body.dataset.step"))  # noqa: E731
        assert step() == 0
        assert int(b.eval("document.body.dataset.steps")) == n_steps
        panels = [b.eval("document.getElementById('panel').innerText")]
        for k in range(1, n_steps + 1):
            b.key("ArrowRight")
            assert step() == k
            panels.append(b.eval("document.getElementById('panel').innerText"))
        b.key("ArrowRight")       # past the end: stays there
        assert step() == n_steps
        b.key("ArrowLeft")
        assert step() == n_steps - 1
        b.key("Home")
        assert step() == 0
        b.key("End")
        assert step() == n_steps
        shown = json.loads(b.eval(_LEAVES_JS))
        return shown, panels, b.problems()


def _check_shown(shown, expected):
    """Each leaf's gradient on the page (exact numbers, the table's text, the graph's
    short text at the last step: the running sum the engine's order gives) is the
    tensor's or Value's `.grad`."""
    assert sorted(s["name"] for s in shown) == sorted(expected)
    for s in shown:
        g = expected[s["name"]]
        want = np.asarray(g, dtype=np.float64)
        assert np.array_equal(np.asarray(s["grad"], dtype=np.float64), want), s["name"]
        assert s["text"] == summary(g)
        want, box = "grad " + short(g), s["graph"]   # a box clips long text with '…'
        assert box.startswith(want) or (box.endswith("\u2026") and want.startswith(box[:-1])), \
            (box, want)


def test_value_expression_micrograd(tmp_path):
    from micrograd.engine import Value as MValue

    def build(V):
        a, b, c = V(2.0), V(-3.0), V(10.0)
        e = a * b
        d = e + c                 # a is used twice: e and the last product
        f = (d * d).relu() + (a ** 2 + 1) ** -0.5 * e   # (micrograd 0.1.0: no tanh)
        return (a, b, c), f * a - d / 4

    (a, b, c), out = build(Value)
    for v, name in zip((a, b, c), "abc"):
        v.label = name
    page = tg.viz.stepper(out, tmp_path / "value.html")
    (ma, mb, mc), mout = build(MValue)
    mout.backward()
    for v, m in zip((a, b, c), (ma, mb, mc)):
        assert v.grad == pytest.approx(m.grad, rel=1e-12)
    shown, panels, problems = _step_through(page.path, len(page.steps))
    assert problems == []
    _check_shown([s for s in shown if s["name"] in "abc"],
                 {"a": a.grad, "b": b.grad, "c": c.grad})
    # a is used by three nodes: its running sum is shown growing
    assert any("use 3" in p for p in panels)
    assert "a.grad += " in "".join(panels)   # the rule as tg.explain writes it


def test_tensor_broadcasting_and_a_shared_node(tmp_path):
    x = tg.randn(4, 3, dtype=tg.float64, requires_grad=True)
    b = tg.randn(3, dtype=tg.float64, requires_grad=True)
    x.name, b.name = "x", "b"
    s = (x * b + b).tanh()        # b broadcast over the rows, used twice
    y = (s * s + s).sum()         # s is shared by three uses
    page = tg.viz.stepper(y, tmp_path / "tensor.html")
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tb = torch.tensor(b.detach().numpy(), requires_grad=True)
    ts = (tx * tb + tb).tanh()
    (ts * ts + ts).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-14)
    shown, panels, problems = _step_through(page.path, len(page.steps))
    assert problems == []
    _check_shown(shown, {"x": x.grad.numpy(), "b": b.grad.numpy()})
    text = "\n".join(panels)
    assert "summed from (4, 3) to (3,) over axes (0,)" in text
    assert "use 3" in text and "use 2" in text
    assert all(lf["fd"]["ok"] for lf in page.leaves)


def test_mlp_loss(tmp_path):
    model = tg.nn.Sequential(tg.nn.Linear(3, 8), tg.nn.Tanh(), tg.nn.Linear(8, 2))
    inputs, target = tg.randn(5, 3), tg.randn(5, 2)
    loss = tg.nn.functional.mse_loss(model(inputs), target)
    page = tg.viz.stepper(loss, tmp_path / "mlp.html", model=model)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        for (_, p), (_, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
            tp.copy_(torch.from_numpy(p.detach().numpy()))
    torch.nn.functional.mse_loss(tmodel(torch.from_numpy(inputs.numpy())),
                                 torch.from_numpy(target.numpy())).backward()
    for (_, p), (_, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)
    shown, _, problems = _step_through(page.path, len(page.steps))
    assert problems == []
    _check_shown(shown, {n: p.grad.numpy() for n, p in model.named_parameters()})
    assert all(lf["fd"]["ok"] for lf in page.leaves)


def test_notebook_view_runs_inside_its_iframe(tmp_path):
    a, b = Value(1.5, label="a"), Value(-2.0, label="b")
    page = tg.viz.stepper((a * b + a).relu() + b * b)
    host = tmp_path / "notebook.html"   # what a notebook's output cell holds
    host.write_text("<!DOCTYPE html><html><body><p>cell output</p>" + page._repr_html_() +
                    "</body></html>", encoding="utf-8")
    inner = "document.querySelector('iframe').contentDocument"
    with _chromium.Browser(EXE) as br:
        br.open(host)
        assert int(br.eval(inner + ".body.dataset.steps")) == len(page.steps) == 5
        br.eval(inner + ".getElementById('next').click()")
        assert br.eval(inner + ".body.dataset.step") == "1"
        grads = json.loads(br.eval(
            "JSON.stringify(Array.from(" + inner + ".querySelectorAll('tr[data-leaf]'))"
            ".map(function(r){ return [r.dataset.leaf, JSON.parse(r.dataset.grad)]; }))"))
        assert dict(grads) == {"a": a.grad, "b": b.grad}
        assert br.problems() == []

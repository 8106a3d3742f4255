"""Issue 17 item 5: autograd.why_no_grad, the once-per-optimizer warning about parameters
with grad None, and the freed-graph error that names the tensor carried over.

Each diagnosis has a case where it must fire and one where it must stay quiet. torch is
the oracle for WHICH parameters have grad None (the same program run in torch); the
cause and the file:line are tapegrad's own (torch has no such tool)."""
import gc
import inspect
import warnings
import weakref

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad import nn
from tapegrad.core import cuts

HERE = __file__


def _line(tag):
    """The line number of this file's line containing `# <tag>`."""
    for i, text in enumerate(inspect.getsource(inspect.getmodule(_line)).splitlines(), 1):
        if text.rstrip().endswith(f"# <{tag}>"):
            return i
    raise AssertionError(tag)


def _no_grad_cut(lib, h):
    with lib.no_grad():  # <no_grad>
        return h * 2


# each cut, written once for both libraries: lib is tapegrad or torch
CUTS = {
    "detach": (lambda lib, h: h.detach(), ".detach()"),  # <detach>
    "item": (lambda lib, h: lib.full((2, 4), h.sum().item()), ".item()"),  # <item>
    "float": (lambda lib, h: lib.full((2, 4), float(h.sum())), "float()"),  # <float>
    "tolist": (lambda lib, h: lib.tensor(h.tolist()), ".tolist()"),  # <tolist>
    "int cast": (lambda lib, h: (h * 100).long().float() / 100, "an integer cast"),  # <int cast>
    "no_grad": (_no_grad_cut, "a no_grad block"),
}


def _program(lib, cut):
    """w1 -> tanh -> cut -> w2 -> loss; returns {name: parameter}."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((2, 3), dtype=np.float32))
    w1 = lib.tensor(rng.standard_normal((3, 4), dtype=np.float32), requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((4, 1), dtype=np.float32), requires_grad=True)
    h = cut(lib, (x @ w1).tanh())
    (h @ w2).sum().backward()
    return {"w1": w1, "w2": w2}


@pytest.mark.parametrize("kind", sorted(CUTS))
def test_each_cut_is_named_with_its_line(kind):
    cut, how = CUTS[kind]
    want = {n for n, p in _program(torch, cut).items() if p.grad is None}
    params = _program(tg, cut)
    report = tg.autograd.why_no_grad(list(params.items()))
    assert set(report) == want == {"w1"}
    line = _line("no_grad" if kind == "no_grad" else kind)
    assert report["w1"].startswith(f"cut at {HERE}:{line} by {how}"), report["w1"]
    assert f"w1: {report['w1']}" in " ".join(str(report).split())


def test_quiet_without_a_cut():
    params = _program(tg, lambda lib, h: h)
    report = tg.autograd.why_no_grad(list(params.items()))
    assert dict(report) == {} and str(report) == "why_no_grad: all 2 parameters have a gradient"


class _Net(nn.Module):
    """l1 is cut by detach, `unused` is never called, `frozen` is frozen, `blocks` is a
    plain list (its parameters are not registered)."""

    def __init__(self, lib_nn, bug=True):
        super().__init__() if lib_nn is nn else None
        self.l1 = lib_nn.Linear(3, 4)
        self.l2 = lib_nn.Linear(4, 2)
        self.unused = lib_nn.Linear(2, 2)
        self.frozen = lib_nn.Linear(2, 2)
        self.frozen.requires_grad_(False)
        self.blocks = [lib_nn.Linear(2, 2)] if bug else lib_nn.ModuleList([lib_nn.Linear(2, 2)])
        self.bug = bug

    def forward(self, x):
        h = self.l1(x).tanh()
        if self.bug:
            h = h.detach()  # <model detach>
        return self.blocks[0](self.frozen(self.l2(h)))


class _TorchNet(torch.nn.Module):
    def __init__(self, bug=True):
        super().__init__()
        _Net.__init__(self, torch.nn, bug)

    forward = _Net.forward


def test_model_report_names_every_cause():
    torch_net = _TorchNet()
    torch_net(torch.randn(5, 3)).sum().backward()
    want = sorted(n for n, p in torch_net.named_parameters() if p.grad is None)
    net = _Net(nn)
    net(tg.randn(5, 3)).sum().backward()
    report = tg.autograd.why_no_grad(net)
    assert sorted(report) == want == ["frozen.bias", "frozen.weight", "l1.bias", "l1.weight",
                                      "unused.bias", "unused.weight"]
    site = f"{HERE}:{_line('model detach')}"
    assert report["l1.weight"].startswith(f"cut at {site} by .detach()")
    assert report["unused.weight"].startswith("never reached from the loss")
    assert report["frozen.weight"].startswith("requires_grad=False")
    # torch does not see the plain list's parameters either
    assert len(list(torch_net.parameters())) == len(list(net.parameters())) == 8
    assert len(report.unregistered) == 1
    assert report.unregistered[0].startswith("blocks: a plain Python list of 1 module (Linear)")
    assert "use nn.ModuleList" in report.unregistered[0]
    assert repr(report) == str(report) and str(report).splitlines()[0] == (
        "why_no_grad: 6 of 8 parameters have grad None")


def test_model_report_quiet_when_registered_and_used():
    net = _Net(nn, bug=False)
    del net.unused
    net(tg.randn(5, 3)).sum().backward()
    report = tg.autograd.why_no_grad(net)
    assert sorted(report) == ["frozen.bias", "frozen.weight"]  # frozen on purpose only
    assert report.unregistered == []


def test_plain_tensor_attribute_is_flagged():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = tg.randn(3, requires_grad=True)
    assert "wrap it in nn.Parameter" in tg.autograd.why_no_grad(M()).unregistered[0]


def test_item_after_backward_and_tapegrad_internal_cuts_record_nothing():
    # the usual loop: loss.item() after backward, an optimizer step (tapegrad's own
    # no_grad and detach), evaluation under no_grad is a real cut but the params have grads
    m = nn.Linear(3, 1)
    opt = tg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        loss = m(tg.randn(4, 3)).pow(2).mean()
        loss.backward()
        loss.item()
        opt.step()
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    assert all(cuts.cuts_of(p) == [] for p in m.parameters())


def test_a_cut_holds_its_graph_only_until_the_next_cut_or_question():
    w = nn.Parameter(tg.randn(50, 50))
    x = tg.randn(4, 50)
    h = (x @ w).tanh()
    node = weakref.ref(h.grad_fn)
    h = h.detach()
    gc.collect()
    assert node() is not None  # pending: the graph above the cut is what to blame
    assert [how for how, _ in cuts.cuts_of(w)] == [".detach()"]  # settled: walked once
    gc.collect()
    assert node() is None
    h = (x @ w).tanh()
    node = weakref.ref(h.grad_fn)
    h = h.detach()
    (x @ w).sum().item()  # the next cut settles the previous one
    gc.collect()
    assert node() is None


def test_item_before_backward_costs_no_walk():
    w = nn.Parameter(tg.randn(3, 3))
    loss = (tg.randn(2, 3) @ w).sum()
    loss.item()
    loss.backward()  # frees the node: the pending cut is dropped, never walked
    cuts._settle()
    assert cuts.cuts_of(w) == [] and cuts._pending == []


def test_no_grad_blocks_of_one_line_are_recorded_twice_then_free():
    w = nn.Parameter(tg.randn(3, 3))
    x = tg.randn(2, 3)
    seen = []
    for _ in range(4):
        with tg.no_grad():  # <eval loop>
            x @ w
            seen.append(tg.autograd._state.no_grad_block is not None)
    assert seen == [True, True, False, False]
    assert cuts.cuts_of(w) == [("a no_grad block", f"{HERE}:{_line('eval loop')}")]


# ---- the optimizer's once-only warning ---------------------------------------------
def _step_warnings(opt):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        opt.step()
    return [str(w.message) for w in rec if issubclass(w.category, UserWarning)]


def test_first_step_warns_once_naming_the_parameter():
    net = _Net(nn)
    opt = tg.optim.Adam(net.named_parameters())
    net(tg.randn(5, 3)).sum().backward()
    first = _step_warnings(opt)
    assert len(first) == 1
    msg = first[0]
    assert msg.startswith("Adam.step(): 4 parameter(s) given to the optimizer require grad "
                          "but have grad None")
    assert f"l1.weight (shape (4, 3)): cut at {HERE}:{_line('model detach')}" in msg
    assert "unused.bias (shape (2,)): never reached" in msg
    assert "frozen" not in msg.split("\n", 1)[1].split("call tg.")[0]  # frozen: not listed
    assert "call tg.autograd.why_no_grad(model)" in msg
    net(tg.randn(5, 3)).sum().backward()
    assert _step_warnings(opt) == []  # once per optimizer


def test_first_step_without_backward_says_so():
    opt = tg.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    (msg,) = _step_warnings(opt)
    assert "none of the 2 parameters" in msg and "loss.backward()" in msg


def test_step_is_quiet_in_normal_training_with_frozen_parameters():
    # frozen parameters in the optimizer are common (fine-tuning): torch leaves them
    # alone in silence; so do we
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    net[0].requires_grad_(False)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    tnet[0].requires_grad_(False)
    for lib, model in ((tg, net), (torch, tnet)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(2):
                opt.zero_grad()
                model(lib.randn(5, 3)).pow(2).mean().backward()
                opt.step()
    assert [p.grad is None for p in net.parameters()] == \
        [p.grad is None for p in tnet.parameters()] == [True, True, False, False]


# ---- the freed-graph error -----------------------------------------------------------
def _rnn_steps(lib, detach, weights=None, steps=3):
    cell = lib.nn.RNNCell(3, 4)
    if weights is not None:
        with lib.no_grad():
            for p, w in zip(cell.parameters(), weights):
                p.copy_(lib.tensor(w))
    h = lib.zeros(1, 4)
    xs = np.random.default_rng(0).standard_normal((steps, 1, 3)).astype(np.float32)
    for x in xs:
        if detach:
            h = h.detach()
        h = cell(lib.tensor(x), h)  # <rnn step>
        loss = h.pow(2).sum()
        loss.backward()
    return cell


def test_freed_graph_error_names_the_carried_over_tensor():
    with pytest.raises(RuntimeError) as te:
        _rnn_steps(torch, detach=False)
    with pytest.raises(RuntimeError) as ei:
        _rnn_steps(tg, detach=False)
    msg = str(ei.value)
    assert str(te.value).startswith("Trying to backward through the graph a second time")
    assert msg.startswith(str(te.value))  # torch's message, then the culprit
    assert "the tensor of shape (1, 4) made by `tanh`, used by `linear`" in msg
    assert "`h = h.detach()`" in msg and "retain_graph=True" in msg
    assert "tg.autograd.detect_anomaly()" in msg  # how to get the line


def test_freed_graph_error_gives_the_line_under_anomaly_mode():
    with pytest.raises(RuntimeError) as ei, tg.autograd.detect_anomaly():
        _rnn_steps(tg, detach=False)
    site = f"{HERE}:{_line('rnn step')}"
    assert f"made by `tanh` at {site}, used by `linear` at {site}" in str(ei.value)


def test_freed_graph_quiet_when_detached_and_same_gradients_as_torch():
    ours = _rnn_steps(tg, True, [p.detach().numpy() for p in torch.nn.RNNCell(3, 4).parameters()])
    theirs = _rnn_steps(torch, True, [p.detach().numpy() for p in ours.parameters()])
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backward_twice_on_the_same_root_keeps_the_plain_message():
    x = tg.ones(3, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as ei:
        y.backward()
    assert "This graph reaches" not in str(ei.value)


def test_data_of_a_computed_tensor_is_a_cut_but_a_parameter_update_is_not():
    w1 = nn.Parameter(tg.randn(3, 4))
    w2 = nn.Parameter(tg.randn(4, 1))
    h = (tg.randn(2, 3) @ w1).tanh()
    (h.data @ w2).sum().backward()  # <dot data>
    with tg.no_grad():
        w2.data -= 0.1 * w2.grad   # the manual update: not recorded
    report = tg.autograd.why_no_grad([("w1", w1), ("w2", w2)])
    assert report == {"w1": f"cut at {HERE}:{_line('dot data')} by .data"}
    assert cuts.cuts_of(w2) == []

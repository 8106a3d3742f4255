"""tg.compile of training steps with in-place ops autograd records (ops/inplace.py
`_inplace`): `nn.ReLU(inplace=True)`, torchvision's `out += identity; out =
relu(out)`, `h.mul_(g)` whose backward reads the old value, in-place activations,
dropout(inplace=True). The capture records the kept copy of the old value and the
store as steps of the tape, so the step replays, bit for bit eager's (losses,
parameters, version counts), and the test checks it DID replay (a step that stayed
eager would pass the value checks trivially). In-place ops on views keep running
eagerly with eager's results.
"""
import numpy as np
import pytest

import tapegrad as tg
from test_compile_whole_step import _eager_and_compiled, _plain_step

nn, F = tg.nn, tg.nn.functional


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)


class Block(nn.Module):
    """torchvision BasicBlock's pattern on features: two layers with ReLU(inplace=True),
    the identity added in place, a last in-place ReLU."""

    def __init__(self, d):
        super().__init__()
        self.fc1, self.bn1 = nn.Linear(d, d), nn.BatchNorm1d(d)
        self.relu = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.fc1(x)))
        out = self.fc2(out)
        out += identity
        return self.relu(out)


class Activations(nn.Module):
    """In-place ops whose backward reads the old value (mul_ by a tensor, pow_, clamp_),
    the output (tanh_, sigmoid_: last, as torch requires) or nothing (add_, div_,
    masked_fill_ with a mask the step computes)."""

    def __init__(self, d):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        h = self.a(x)
        g = self.b(x)
        h.mul_(g)
        h.add_(g, alpha=0.5)
        h.div_(2.0)
        h.pow_(2)
        h.clamp_(min=0.01, max=0.8)
        h.masked_fill_(g > 1.0, 0.5)
        h.tanh_()
        return h + self.c(x).sigmoid_()


class Dropping(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a, self.b = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        return self.b(F.dropout(self.a(x), 0.3, inplace=True).relu())


@pytest.mark.parametrize("make", [Block, Activations, Dropping])
def test_steps_with_tracked_inplace_ops_replay_bit_for_bit(make):
    # losses, parameters and their version counts; every call after the first replays
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((16, 6)).astype(np.float32), rng.integers(0, 3, 16))
               for _ in range(6)]

    def build():
        model = nn.Sequential(make(6), nn.Linear(6, 3))
        opt = tg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        return _plain_step(model, opt), lambda: (
            [p._data for p in model.parameters()]
            + [np.array([p._version for p in model.parameters()])])
    _eager_and_compiled(build, batches)


def test_a_compiled_model_with_inplace_relu_replays_forward_and_backward():
    # tg.compile(model) (the nanoGPT way): the backward runs outside the compiled call
    def run(compiled):
        tg.manual_seed(1)
        model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(inplace=True), nn.Linear(8, 2))
        fwd = tg.compile(model) if compiled else model
        x = tg.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5))
        grads = []
        for _ in range(4):
            model.zero_grad()
            fwd(x).square().sum().backward()
            grads.append([p.grad.numpy().copy() for p in model.parameters()])
        return grads, fwd
    want, _ = run(False)
    got, fwd = run(True)
    for gs, ws in zip(got, want):
        for a, b in zip(gs, ws):
            np.testing.assert_array_equal(a, b)
    assert fwd._runner.replays == 3


def test_an_inplace_op_on_a_view_gives_eagers_results():
    # (a view's in-place change rebases its base: not captured, the call runs eagerly)
    def run(compiled):
        tg.manual_seed(2)
        lin = nn.Linear(4, 6)

        def step(x):
            h = lin(x)
            h[:, :3].relu_()
            loss = h.square().sum()
            loss.backward()
            return loss
        f = tg.compile(step) if compiled else step
        x = tg.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
        return [f(x).item() for _ in range(3)], lin.weight.grad.numpy().copy()
    (le, ge), (lc, gc) = run(False), run(True)
    assert le == lc
    np.testing.assert_array_equal(ge, gc)

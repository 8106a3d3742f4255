"""Whole-step capture (issue 30): a compiled function that calls zero_grad, the forward,
the loss, `backward()` and `optimizer.step()` (with clip_grad_norm_, an LR schedule,
dropout, BatchNorm) replays all of it, bit for bit the eager steps.

Each test trains twice from identical weights and generator state, eagerly and with the
step compiled, and compares every loss, `.grad`, parameter, buffer and optimizer state
array with np.array_equal; it also asserts the compiled run DID replay (a run that stayed
eager would pass the comparison trivially).
"""
import numpy as np
import pytest

import tapegrad as tg
from tapegrad.train.char_models import GPT, MakemoreMLP


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """These tests count replays: the eager-vs-replay timing trial (which may run some
    calls eagerly, by the clock) is off; test_compile_whole_step.py tests it."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)

nn = tg.nn
F = tg.nn.functional
V = 27


class DropMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(6, 16)
        self.drop = nn.Dropout(0.3)
        self.bn = nn.BatchNorm1d(16)
        self.l2 = nn.Linear(16, V)

    def forward(self, x):
        return self.l2(self.drop(tg.relu(self.bn(self.l1(x)))))


def _opt(name, params):
    if name == "sgd":
        return tg.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3)
    if name == "adam":
        return tg.optim.Adam(params, lr=1e-2)
    return tg.optim.AdamW(params, lr=1e-2, weight_decay=0.1)


def _batches(kind, n, seed=0):
    r = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if kind == "mlp":
            out.append((r.integers(0, V, (32, 3)), r.integers(0, V, 32)))
        elif kind == "gpt":
            out.append((r.integers(0, V, (4, 8)), r.integers(0, V, 32)))
        else:
            out.append((r.standard_normal((16, 6)).astype(np.float32), r.integers(0, V, 16)))
    return out


def _make(kind):
    if kind == "mlp":
        return MakemoreMLP(V, 3, 10, 64)
    if kind == "gpt":
        return GPT(V, 8, n_layer=1, n_embd=16, n_head=2)
    return DropMLP()


def _train(kind, opt_name, compiled, steps=12, clip=False, schedule=None, sched_inside=True):
    tg.manual_seed(0)
    model = _make(kind)
    opt = _opt(opt_name, model.parameters())
    sched = None
    if schedule == "step":
        sched = tg.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    elif schedule == "cosine":
        sched = tg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)

    def step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y)
        loss.backward()
        if clip == "value":
            nn.utils.clip_grad_value_(model.parameters(), 0.05)
        elif clip:
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if sched is not None and sched_inside:
            sched.step()
        return loss

    run = tg.compile(step) if compiled else step
    tg.manual_seed(1)  # dropout draws from here on, identically in both runs
    rec = []
    for x, y in _batches(kind, steps):
        loss = run(tg.tensor(x), tg.tensor(y))
        if sched is not None and not sched_inside:
            sched.step()
        rec.append([loss._data.copy()]
                   + [p.grad._data.copy() for p in model.parameters()]
                   + [p._data.copy() for p in model.parameters()]
                   + [b._data.copy() for b in model.buffers()]
                   + [v._data.copy() for st in opt.state.values() for v in st.values()
                      if isinstance(v, tg.Tensor)]
                   + [np.array(g["lr"]) for g in opt.param_groups])
    return run, rec


def _assert_same(a, b):
    assert len(a) == len(b)
    for step, (ra, rb) in enumerate(zip(a, b)):
        assert len(ra) == len(rb), f"step {step}: {len(ra)} vs {len(rb)} arrays"
        for k, (x, y) in enumerate(zip(ra, rb)):
            assert x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y), \
                f"step {step}, array {k} differs"


def _eager_and_compiled(build, batches):
    """`build()` -> (step, the arrays to compare after each step): the step run eagerly
    and compiled on the same batches from the same seed; every array equal, and the
    compiled one replayed after its capture. The compiled callable."""
    recs = []
    for compiled in (False, True):
        tg.manual_seed(0)
        step, state = build()
        run = tg.compile(step) if compiled else step
        rec = []
        for x, y in batches:
            rec.append(np.asarray(run(tg.tensor(x), tg.tensor(y))._data).copy())
            rec += [np.asarray(a).copy() for a in state()]
        recs.append(rec)
    assert run._runner.replays == len(batches) - 1, run._runner.why
    assert len(recs[0]) == len(recs[1])
    for k, (a, b) in enumerate(zip(*recs)):
        assert a.dtype == b.dtype and np.array_equal(a, b), k
    return run


@pytest.mark.parametrize("kind", ["mlp", "drop", "gpt"])
@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adamw"])
def test_whole_step_equals_eager_bit_for_bit(kind, opt_name):
    _, eager = _train(kind, opt_name, False)
    run, comp = _train(kind, opt_name, True)
    _assert_same(eager, comp)
    assert run._runner.replays == 11, run._runner.why


@pytest.mark.parametrize("schedule, inside", [("step", True), ("cosine", True),
                                              ("step", False)])
def test_lr_schedule_and_clip_grad_norm(schedule, inside):
    _, eager = _train("gpt", "adamw", False, steps=10, clip=True, schedule=schedule,
                      sched_inside=inside)
    run, comp = _train("gpt", "adamw", True, steps=10, clip=True, schedule=schedule,
                       sched_inside=inside)
    _assert_same(eager, comp)
    assert run._runner.replays == 9, run._runner.why
    lrs = [r[-1].item() for r in comp]
    assert len(set(lrs)) > 2  # the schedule did change the rate between replays


@pytest.mark.parametrize("opt_name", ["sgd", "adamw"])
def test_clip_grad_value_is_a_replayed_call_step(opt_name):
    # clip_grad_value_ inside the step clamps the gradients in place: a call step (it
    # made every such capture eager: "an array of the forward changed outside the ops")
    _, eager = _train("mlp", opt_name, False, steps=6, clip="value")
    run, comp = _train("mlp", opt_name, True, steps=6, clip="value")
    _assert_same(eager, comp)
    assert run._runner.replays == 5, run._runner.why


def test_gradient_accumulation_without_zero_grad():
    def train(compiled):
        tg.manual_seed(0)
        model = MakemoreMLP(V, 3, 10, 32)
        opt = tg.optim.SGD(model.parameters(), lr=0.05)

        def micro(x, y):
            loss = F.cross_entropy(model(x), y) / 2
            loss.backward()
            return loss
        run = tg.compile(micro) if compiled else micro
        out = []
        for k, (x, y) in enumerate(_batches("mlp", 8)):
            run(tg.tensor(x), tg.tensor(y))
            if k % 2:
                opt.step()
                out.append([p._data.copy() for p in model.parameters()])
                opt.zero_grad()
        return run, out
    _, a = train(False)
    run, b = train(True)
    _assert_same(a, b)
    assert run._runner.replays == 7


def _plain_step(model, opt, loss_of=None):
    """The usual step: zero_grad, the loss (`loss_of(x, y)`, else the cross-entropy of
    model(x)), backward, the optimizer's step."""
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) if loss_of is None else loss_of(x, y)
        loss.backward()
        opt.step()
        return loss
    return step


def test_eval_mode_and_a_replaced_parameter_are_seen():
    tg.manual_seed(0)
    model = DropMLP()
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    run = tg.compile(_plain_step(model, opt))
    (x, y), = _batches("drop", 1)
    x, y = tg.tensor(x), tg.tensor(y)
    for _ in range(3):
        run(x, y)
    model.eval()  # dropout off, BatchNorm's running statistics: another capture
    with tg.no_grad():
        want = F.cross_entropy(model(x), y)._data.copy()
    snapshot = [p._data.copy() for p in model.parameters()]
    got = run(x, y)._data
    assert np.array_equal(got, want)
    assert not all(np.array_equal(a, p._data) for a, p in zip(snapshot, model.parameters()))
    assert run._runner.captures == 2


def test_side_effects_in_the_step_keep_it_eager():
    calls = []
    count = 0
    tg.manual_seed(0)
    model = MakemoreMLP(V, 3, 10, 16)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        nonlocal count
        count += 1  # a closure variable written: the replay would not do it
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    run = tg.compile(step)
    (x, y), = _batches("mlp", 1)
    for _ in range(4):
        calls.append(run(tg.tensor(x), tg.tensor(y)).item())
    assert count == 4 and run._runner.replays == 0
    assert "STORE_DEREF count" in next(iter(run._runner.why.values()))
    assert calls == sorted(calls, reverse=True)  # it did train: the loss goes down


def test_the_generated_replay_is_printable_and_a_loop_variable_named_step_is_no_guard():
    global step  # a training loop's counter named like the optimizer's method
    w = tg.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2), requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)

    def train_step(x):
        opt.zero_grad()
        loss = (x @ w).tanh().sum()
        loss.backward()
        opt.step()  # `step` here is an attribute, not the global
        return loss
    run = tg.compile(train_step)
    assert "nothing captured" in run.explain()
    x = tg.ones(4, 3)
    for step in range(5):
        run(x)
    assert run._runner.replays == 4 and run._runner.captures == 1
    code = run.explain()
    for part in ("def replay(ext):", "matmul", "tanh", "# backward of", ".grad",
                 "zero_grad", "step"):
        assert part in code
    assert "closure variable opt" in code and "global step" not in code
    m = tg.compile(nn.Linear(3, 2))
    with tg.no_grad():
        m(x), m(x)
    assert "linear" in m.code and m.explain() == m.code


def test_train_and_eval_inside_the_step_are_replayed():
    def run(compiled):
        tg.manual_seed(0)
        model = DropMLP()
        opt = tg.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y):
            model.train()  # a loop that evaluates between steps switches back here
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        fn = tg.compile(step) if compiled else step
        tg.manual_seed(1)
        out = []
        for k, (x, y) in enumerate(_batches("drop", 8)):
            out.append([fn(tg.tensor(x), tg.tensor(y))._data.copy()])
            if k % 3 == 2:
                model.eval()  # evaluation between steps (no grad, no step)
                with tg.no_grad():
                    out.append([model(tg.tensor(x))._data.copy()])
            assert model.training or k % 3 == 2
        return fn, out
    _, a = run(False)
    fn, b = run(True)
    _assert_same(a, b)
    assert fn._runner.replays >= 5


def test_a_replay_that_does_not_win_falls_back_to_eager(monkeypatch):
    """tg.compile is never slower than eager: the first calls of a capture alternate
    eager and replay, timed; a replay no faster than eager is dropped (a fake clock
    decides here: a real one would make the test depend on the machine)."""
    from tapegrad._compile import runner as R
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", True)
    for replay_cost, eager_cost, stays in ((5.0, 3.0, False), (1.0, 3.0, True),
                                           (3.1, 3.0, "close")):
        now = [0.0]
        monkeypatch.setattr(R, "_clock", lambda: now[0])
        m = nn.Linear(3, 2)
        cm = tg.compile(m)
        x = tg.ones(4, 3)
        outs = []
        for _ in range(30 if stays == "close" else 12):
            before = cm._runner.replays
            outs.append(cm(x))
            outs[-1].sum().backward()
            now[0] += replay_cost if cm._runner.replays > before else eager_cost
        want = m(x).detach().numpy()
        assert all(np.array_equal(o.detach().numpy(), want) for o in outs)
        if stays == "close":  # within 10% of eager: timed 4x as long, then dropped
            assert cm._runner.replays == 12 and cm._runner.slow
        elif stays:
            assert cm._runner.replays == 12 - 1 - 3  # the capture, 3 eager trial calls
            assert not cm._runner.slow
        else:
            assert cm._runner.replays == 3 and cm._runner.slow
            assert "not faster" in next(iter(cm._runner.why.values()))


def _scaler_run(compiled, dtype=np.float32, steps=8):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 5)).to(dtype)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    scaler = tg.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        return loss
    run = tg.compile(step) if compiled else step
    r = np.random.default_rng(0)
    rec = []
    for k in range(steps):
        x = r.standard_normal((8, 6)).astype(dtype)
        if k == 4:
            x[0, 0] = np.inf  # an overflow: the step is skipped, the scale backs off
        rec.append([run(tg.tensor(x), tg.tensor(r.standard_normal((8, 5)).astype(dtype)))
                    ._data.copy(), np.array(scaler.get_scale())]
                   + [p._data.copy() for p in model.parameters()])
    return run, rec


def test_grad_scaler_steps_are_captured_and_read_the_scale_at_each_replay():
    # the scale changes between calls (growth every 2 clean steps, backoff after the
    # inf): the replay multiplies by the scale of that call, and unscale_, step (skipped
    # on an inf) and update run as the scaler's own calls
    _, eager = _scaler_run(False)
    run, comp = _scaler_run(True)
    for a, b in zip(eager, comp):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
    assert [r[1].item() for r in comp] == [16.0, 32.0, 32.0, 64.0, 32.0, 32.0, 64.0, 64.0]
    assert run._runner.replays == 7, run._runner.why
    assert "_scale_of" in run.explain()


def test_grad_scaler_on_a_float64_loss_and_a_list_of_outputs():
    _, eager = _scaler_run(False, np.float64, steps=5)
    run, comp = _scaler_run(True, np.float64, steps=5)
    for a, b in zip(eager, comp):
        for x, y in zip(a, b):
            assert np.array_equal(x, y, equal_nan=True)
    assert run._runner.replays == 4
    # outputs given as a list: the scale is a Python number there, so the call runs
    # eagerly (a graph break), and stays right
    scaler = tg.amp.GradScaler("cpu", init_scale=4.0)
    w = tg.tensor(np.ones(3, np.float32), requires_grad=True)
    f = tg.compile(lambda: scaler.scale([(w * 2).sum()])[0])
    assert [f().item() for _ in range(3)] == [24.0] * 3
    assert f._runner.replays == 0 and "GradScaler.scale" in next(iter(f._runner.why.values()))


class TiedLM(nn.Module):
    """Weight tying written out: the logits are `h @ wte.weight.T`, a view of a
    parameter the optimizer then changes in place (as GPT-2 style models do)."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(V, 16)
        self.fc = nn.Linear(16, 16)

    def forward(self, idx):
        h = tg.tanh(self.fc(self.wte(idx)))
        return (h @ self.wte.weight.T).reshape(-1, V)


@pytest.mark.parametrize("opt_name", ["sgd", "adamw"])
def test_a_view_of_a_parameter_in_the_forward_replays(opt_name):
    # W.T's array changes with W when the step's optimizer updates W: still the step the
    # replay repeats (it makes the view again where the forward made it)
    def build():
        model = TiedLM()
        opt = _opt(opt_name, model.parameters())
        return _plain_step(model, opt), lambda: [p._data for p in model.parameters()] + [
            p.grad._data for p in model.parameters()]
    _eager_and_compiled(build, [(b[0], b[1][:32]) for b in _batches("gpt", 6)])


@pytest.mark.parametrize("view", [True, False])
def test_a_no_grad_write_into_a_parameter_between_call_steps_is_replayed(view):
    # the step writes into W (through W.T or directly) between zero_grad and the SGD
    # step, outside the graph: a step of the tape (the replay writes again)
    W = tg.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    opt = tg.optim.SGD([W], lr=0.1)

    def step(x):
        opt.zero_grad()
        with tg.no_grad():
            if view:
                W.T[0, 0] += 1.0
            else:
                W[0, 0] += 1.0
        loss = (x @ W.T).sum()
        loss.backward()
        opt.step()
        return loss
    f = tg.compile(step)
    W0 = W.detach().numpy().copy()
    for _ in range(3):
        f(tg.ones(2, 4))
    Wt = W0.copy()
    for _ in range(3):  # eager's arithmetic, by hand: +1 at [0, 0], then the SGD step
        Wt[0, 0] += 1.0
        Wt -= np.float32(0.1) * np.full((3, 4), 2.0, dtype=np.float32)
    np.testing.assert_allclose(W.detach().numpy(), Wt, rtol=1e-6)
    assert f._runner.replays == 2, f._runner.why


def test_a_numpy_write_into_a_parameter_between_call_steps_runs_eagerly():
    # the same change made through NumPy: no op of the library, the tape cannot see it
    W = tg.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    opt = tg.optim.SGD([W], lr=0.1)

    def step(x):
        opt.zero_grad()
        W.detach().numpy()[0, 0] += 1.0
        loss = (x @ W.T).sum()
        loss.backward()
        opt.step()
        return loss
    f = tg.compile(step)
    for _ in range(3):
        f(tg.ones(2, 4))
    want = np.ones((3, 4), dtype=np.float32)
    for _ in range(3):
        want[0, 0] += 1.0
        want -= np.float32(0.1) * np.full((3, 4), 2.0, dtype=np.float32)
    np.testing.assert_allclose(W.detach().numpy(), want, rtol=1e-6)
    assert f._runner.replays == 0 and f._runner.why  # (.numpy() reads the values)


def test_micro_steps_accumulated_inside_one_compiled_step():
    # nanoGPT's gradient accumulation inside the compiled step: two backward() calls
    # (the second's watch meets the first's freed nodes), clip, AdamW, a StepLR
    r = np.random.default_rng(5)
    batches = [(r.standard_normal((4, 6)).astype(np.float32), r.integers(0, V, 4))
               for _ in range(6)]

    def build():
        model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, V))
        opt = tg.optim.AdamW(model.parameters(), lr=1e-2)
        sched = tg.optim.lr_scheduler.StepLR(opt, 2, 0.5)

        def step(x, y):
            for micro in range(2):
                loss = F.cross_entropy(model(x[2 * micro:2 * micro + 2]),
                                       y[2 * micro:2 * micro + 2]) / 2
                loss.backward()
            tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            sched.step()
            return loss
        return step, lambda: [p._data for p in model.parameters()] + [
            v._data for st in opt.state.values() for v in st.values()
            if isinstance(v, tg.Tensor)]
    _eager_and_compiled(build, batches)


# ---- the learners' own update loops, compiled ------------------------------------------------
def _learner_batches():
    r = np.random.default_rng(9)
    return [(r.standard_normal((6, 5)).astype(np.float32), r.integers(0, 4, 6))
            for _ in range(5)]


def _learner_params():
    g = tg.Generator().manual_seed(1)
    W1 = tg.randn((5, 16), generator=g) * 0.5
    b1 = tg.randn(16, generator=g) * 0.1
    W2 = tg.randn((16, 4), generator=g) * 0.1
    b2 = tg.zeros(4)
    parameters = [W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    return parameters


def _zero_to_hero_step(parameters):
    """nn-zero-to-hero (makemore part 2-4): p.grad = None, backward, p.data += -lr * p.grad."""
    W1, b1, W2, b2 = parameters

    def step(x, y):
        h = tg.tanh(x @ W1 + b1)
        loss = F.cross_entropy(h @ W2 + b2, y)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1
        for p in parameters:
            p.data += -lr * p.grad
        return loss
    return step


def _d2l_step(parameters):
    """d2l's from-scratch sgd: the summed loss's backward, then under no_grad
    `param -= lr * param.grad / batch_size; param.grad.zero_()`."""
    W1, b1, W2, b2 = parameters

    def step(x, y):
        h = tg.relu(x @ W1 + b1)
        loss = F.cross_entropy(h @ W2 + b2, y, reduction="none")
        loss.sum().backward()
        with tg.no_grad():
            for param in parameters:
                param -= 0.1 * param.grad / 6
                param.grad.zero_()
        return loss.sum()
    return step


@pytest.mark.parametrize("make_step", [_zero_to_hero_step, _d2l_step])
def test_the_learners_update_loops_replay_bit_for_bit(make_step):
    def build():
        parameters = _learner_params()
        return make_step(parameters), lambda: (
            [p._data for p in parameters] + [p.grad._data for p in parameters]
            + [np.array(p._version) for p in parameters])
    run = _eager_and_compiled(build, _learner_batches())
    assert "write_into" in run.explain()  # the update, written out as the step it is


def test_a_branch_on_whether_a_grad_is_none_is_a_guard():
    # a hand-written zero_grad that tests for None: the first call finds no .grad (and
    # skips the zeroing), the next ones find one; a replay of the first capture would
    # skip it every time (the gradients would add up)
    def train(compiled):
        W = tg.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
        params = [W]

        def step(x):
            for p in params:
                if p.grad is not None:
                    p.grad.zero_()
            loss = (x @ params[0].T).sum()
            loss.backward()
            with tg.no_grad():
                params[0] -= 0.1 * params[0].grad
            return loss
        run = tg.compile(step) if compiled else step
        rec = [run(tg.ones(2, 4)).item() for _ in range(5)]
        return run, rec, W.detach().numpy().copy(), W.grad.numpy().copy()
    _, *want = train(False)
    run, *got = train(True)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    assert run._runner.captures == 2 and run._runner.replays == 3, run._runner.why
    assert "is None) ==" in run.explain()


def test_a_change_the_tape_cannot_see_after_a_recorded_write_still_runs_eagerly():
    # the recorded update marks W as it left it; a write no op made afterwards (straight
    # into the array) is still a change the replay would not repeat
    W = tg.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
    params = [W]

    def step(x):
        loss = (x @ params[0].T).sum()
        loss.backward()
        with tg.no_grad():
            params[0] -= 0.1 * params[0].grad
        params[0]._data[0, 0] += 1.0  # (no op of the library: the tape is blind to it)
        params[0].grad = None
        return loss
    f = tg.compile(step)
    for _ in range(3):
        f(tg.ones(2, 4))
    assert f._runner.replays == 0 and "changed" in next(iter(f._runner.why.values()))
    np.testing.assert_allclose(W.detach().numpy()[0, 0], 1.0 + 3 * (1.0 - 0.2), rtol=1e-6)


def test_a_python_number_the_step_returns_is_not_frozen():
    # the step returns its optimizer's lr, which the scheduler inside changes each call:
    # a replay would return the captured number
    m = nn.Linear(5, 4)
    opt = tg.optim.SGD(m.parameters(), lr=0.1)
    sched = tg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        sched.step()
        return loss, opt.param_groups[0]["lr"]
    f = tg.compile(step)
    lrs = [f(tg.ones(2, 5), tg.tensor([0, 1]))[1] for _ in range(4)]
    assert lrs == [0.05, 0.025, 0.0125, 0.00625]
    assert f._runner.replays == 0


class ManualAttention(nn.Module):
    """nanoGPT's attention without flash: its causal mask a buffer compared with 0."""

    def __init__(self, C=16, H=2, T=8):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = nn.Linear(C, 3 * C), nn.Linear(C, C), H
        self.register_buffer("bias", tg.tril(tg.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / np.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


def test_masks_made_by_comparisons_replay():
    # comparisons, isfinite, logical NOT, all/any, &, argmax, isin, signbit and isclose
    # make their results outside the table ops (host steps now): nanoGPT's
    # `self.bias[...] == 0` made every such capture eager ("an array made outside the ops")
    rng = np.random.default_rng(3)
    batches = [(rng.integers(0, 10, (4, 8)), rng.integers(0, 10, (4, 8))) for _ in range(5)]

    def build():
        model = nn.Sequential(nn.Embedding(10, 16), ManualAttention(), nn.Linear(16, 10))
        opt = tg.optim.SGD(model.parameters(), lr=0.1)

        def loss_of(x, y):
            logits = model(x)
            keep = (~(y == 3)) & logits.isfinite().all(-1) & (logits.argmax(-1) != 99)
            keep = keep & ~tg.isin(y, tg.tensor([7])) & ~logits.signbit().all(-1)
            keep = keep & ~tg.isclose(logits, logits + 1.0).all(-1)
            logits = logits.masked_fill(keep.logical_not().unsqueeze(-1), 0.0)
            return F.cross_entropy(logits.view(-1, 10), y.view(-1))
        return _plain_step(model, opt, loss_of), lambda: [p._data for p in model.parameters()]
    _eager_and_compiled(build, batches)


class VAE(nn.Module):
    """The reparameterization trick (eps = randn_like(std)) with softplus, ELU,
    hardswish activations and a smooth-L1 reconstruction loss."""

    def __init__(self):
        super().__init__()
        self.enc, self.mu, self.logv = nn.Linear(6, 8), nn.Linear(8, 2), nn.Linear(8, 2)
        self.dec = nn.Linear(2, 6)

    def forward(self, x):
        h = F.elu(self.enc(x)) + F.hardswish(self.enc(x)) + F.softplus(self.enc(x))
        mu, std = self.mu(h), F.softplus(self.logv(h)) + 1e-4
        z = mu + std * tg.randn_like(std)
        return F.smooth_l1_loss(self.dec(z), x) + 0.01 * (mu * mu).mean()


class Upsampling(nn.Module):
    """Conv1d, ConvTranspose1d and F.interpolate (nearest and linear: index and weight
    arrays made from the sizes, constants of the capture)."""

    def __init__(self):
        super().__init__()
        self.c, self.up = nn.Conv1d(6, 4, 3, padding=1), nn.ConvTranspose1d(4, 3, 2, stride=2)

    def forward(self, x):
        h = self.up(F.relu(self.c(x.unsqueeze(1).expand(-1, 6, -1))))
        h = F.interpolate(h, scale_factor=0.5) + F.interpolate(h, size=6, mode="linear")
        return h.mean(-1)


@pytest.mark.parametrize("what", ["vae", "indices", "upsampling"])
def test_random_draws_activation_masks_and_index_helpers_replay(what):
    # randn_like draws again at each replay (the generator's order, as eager), the
    # activations' masks are recorded comparisons, max(dim).indices / one_hot /
    # tg.tensor(list) / full_like are steps: each made its capture eager before
    rng = np.random.default_rng(4)
    batches = [(rng.standard_normal((5, 6)).astype(np.float32), rng.integers(0, 3, 5))
               for _ in range(5)]

    def build():
        model = {"vae": VAE, "upsampling": Upsampling}.get(what, lambda: nn.Linear(6, 3))()
        opt = tg.optim.Adam(model.parameters(), lr=1e-2)

        def loss_of(x, y):
            if what == "vae":
                return model(x)
            if what == "upsampling":
                return F.cross_entropy(model(x), y)
            out = model(x)
            hit = (out.max(-1).indices == y).float()
            target = F.one_hot(y, 3).float() * tg.tensor([1.0, 0.5, 2.0])
            return F.mse_loss(out, target) + tg.full_like(hit, 0.1).mul(hit).mean()
        return _plain_step(model, opt, loss_of), lambda: [p._data for p in model.parameters()]
    _eager_and_compiled(build, batches)


class Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn, self.fc = cell(6, 8, batch_first=True), nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_recurrent_layers_replay(cell):
    # their steps split through the table's split (one node) and the LSTM's gate
    # constants are constants of the capture: before, a custom Function's nodes and
    # cached tensors made every such capture eager
    rng = np.random.default_rng(5)
    batches = [(rng.standard_normal((3, 4, 6)).astype(np.float32), rng.integers(0, 3, 3))
               for _ in range(4)]

    def build():
        model = Recurrent(getattr(nn, cell))
        opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        return _plain_step(model, opt), lambda: [p._data for p in model.parameters()]
    _eager_and_compiled(build, batches)


def test_top_k_sampling_replays_with_the_generators_draws():
    # nanoGPT's generate step: top-k filter with a Python list index, softmax,
    # multinomial; the indices, the constant index and the samples (an output made by a
    # host step) are steps of the capture, each replay draws from the generator as eager
    tg.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 10))

    @tg.no_grad()
    def sample(idx):
        logits = model(idx)[:, -1, :] / 0.8
        v, _ = tg.topk(logits, 3)
        logits[logits < v[:, [-1]]] = -float("inf")
        return tg.multinomial(F.softmax(logits, dim=-1), num_samples=1)
    idx = tg.tensor([[1, 2, 3], [4, 5, 6]])
    compiled = tg.compile(sample)
    runs = []
    for f in (sample, compiled):
        tg.manual_seed(1)
        runs.append([f(idx).tolist() for _ in range(6)])
    assert runs[0] == runs[1] and len({str(r) for r in runs[0]}) > 1
    assert compiled._runner.replays == 5, compiled._runner.why


@pytest.mark.parametrize("kind", ["mlp", "drop"])
def test_a_step_returning_its_loss_detached_replays(kind):
    # `return loss.detach()` (a loss to log, without its graph): the detached tensor's
    # array is an op's result, made again by every replay (before: "an output that is no
    # op's result", every call eager)
    def build():
        model = _make(kind)
        update = _plain_step(model, _opt("adamw", model.parameters()))

        def step(x, y):
            return update(x, y).detach()
        return step, lambda: [p._data for p in model.parameters()]
    run = _eager_and_compiled(build, _batches(kind, 5))
    assert not run(*map(tg.tensor, _batches(kind, 1, seed=9)[0])).requires_grad

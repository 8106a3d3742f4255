"""tg.compile (tapegrad/_compile): replayed steps equal eager steps bit for bit, guards and
fallbacks give eager's results, and the wrapper's API is torch.compile's (torch 2.13).

Each training test runs k steps twice from identical weights, eagerly and compiled, and
compares every loss, output, .grad, parameter and buffer with np.array_equal; it also
asserts that the compiled run DID replay (a run that silently stayed eager would pass the
comparison trivially).
"""
import os
import sys
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tapegrad as tg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "dist_scripts"))
from nanogpt_model import GPTConfig, gpt_module  # noqa: E402


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """These tests count replays: the eager-vs-replay timing trial (which may run some
    calls eagerly, by the clock) is off; test_compile_whole_step.py tests it."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)

nn = tg.nn
F = tg.nn.functional
GPT = gpt_module(tg)


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def _train(make, batches, compiled, opt="sgd", steps=None):
    """Train a fresh model on `batches` ((x, y) arrays); every recorded array per step."""
    tg.manual_seed(0)
    model = make()
    params = list(model.parameters())
    optim = (tg.optim.AdamW(params, lr=1e-2) if opt == "adamw"
             else tg.optim.SGD(params, lr=0.1, momentum=0.9))
    run = tg.compile(model) if compiled else model
    tg.manual_seed(1)  # dropout draws from here on, identically in both runs
    rec = []
    for x, y in batches:
        out = run(tg.tensor(x), tg.tensor(y))
        out = out if isinstance(out, tuple) else (None, out)
        logits, loss = out
        optim.zero_grad()
        loss.backward()
        rec.append([loss._data.copy()] + ([logits._data.copy()] if logits is not None else [])
                   + [p.grad._data.copy() for p in params]
                   + [p._data.copy() for p in params]
                   + [b._data.copy() for b in model.buffers()])
        optim.step()
    return run, rec


def _assert_equal_runs(a, b):
    assert len(a) == len(b)
    for step, (ra, rb) in enumerate(zip(a, b)):
        assert len(ra) == len(rb)
        for k, (x, y) in enumerate(zip(ra, rb)):
            assert _same(x, y), f"step {step}, array {k} differs"


def _gpt(dropout):
    def make():
        return GPT(GPTConfig(block_size=8, vocab_size=17, n_layer=2, n_head=2, n_embd=16,
                             dropout=dropout))
    return make


def _token_batches(k, B=3, T=8, V=17, seed=0):
    r = np.random.default_rng(seed)
    return [(r.integers(0, V, (B, T)), r.integers(0, V, (B, T))) for _ in range(k)]


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_nanogpt_compiled_steps_equal_eager_bit_for_bit(dropout, capsys):
    batches = _token_batches(6)
    _, eager = _train(_gpt(dropout), batches, False, "adamw")
    run, comp = _train(_gpt(dropout), batches, True, "adamw")
    _assert_equal_runs(eager, comp)
    assert run._runner.replays == len(batches) - 1  # one capture, then replays


def test_nanogpt_with_standins_replays_bit_for_bit(monkeypatch):
    """Residual adds of large activations hold stand-in tensors for their inputs
    (core/standin.py: another object, the same history): the schedule still finds the
    capture's tensors, so the step replays (it ran eagerly for good before)."""
    from tapegrad.core import standin
    monkeypatch.setattr(standin, "MIN_BYTES", 0)  # every size, as large arrays
    batches = _token_batches(4)
    _, eager = _train(_gpt(0.0), batches, False, "adamw")
    run, comp = _train(_gpt(0.0), batches, True, "adamw")
    _assert_equal_runs(eager, comp)
    assert run._runner.replays == len(batches) - 1, run._runner.why


class MnistMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x, y):
        return F.cross_entropy(self.net(x), y)


def test_mnist_mlp_compiled_steps_equal_eager_bit_for_bit():
    r = np.random.default_rng(0)
    batches = [(r.standard_normal((16, 1, 8, 8)).astype(np.float32), r.integers(0, 10, 16))
               for _ in range(6)]
    _, eager = _train(MnistMLP, batches, False)
    run, comp = _train(MnistMLP, batches, True)
    _assert_equal_runs(eager, comp)
    assert run._runner.replays == 5


class Makemore(nn.Module):
    """makemore part 3's MLP: embedding, Linear without bias, BatchNorm1d, tanh."""

    def __init__(self, V=27, block=3, emb=10, hid=64):
        super().__init__()
        self.C = nn.Embedding(V, emb)
        self.l1 = nn.Linear(block * emb, hid, bias=False)
        self.bn = nn.BatchNorm1d(hid)
        self.l2 = nn.Linear(hid, V)

    def forward(self, x, y=None):
        h = tg.tanh(self.bn(self.l1(self.C(x).view(x.shape[0], -1))))
        logits = self.l2(h)
        return logits if y is None else F.cross_entropy(logits, y)


def test_makemore_batchnorm_compiled_steps_equal_eager_and_running_stats_too():
    r = np.random.default_rng(0)
    batches = [(r.integers(0, 27, (32, 3)), r.integers(0, 27, 32)) for _ in range(6)]
    m_eager, eager = _train(Makemore, batches, False)
    m_comp, comp = _train(Makemore, batches, True)
    _assert_equal_runs(eager, comp)  # the buffers (running stats, count) are compared too
    assert m_comp._runner.replays == 5
    # eval mode (the running statistics), under no_grad: another key, captured and replayed
    m_eager.eval()
    m_comp.eval()
    with tg.no_grad():
        for _ in range(3):
            x = tg.tensor(r.integers(0, 27, (5, 3)))
            assert _same(m_eager(x)._data, m_comp(x)._data)
    assert m_comp._runner.replays == 7


def test_gpt_compiled_gradients_match_torch():
    """The oracle: a replayed step's gradients against PyTorch's eager GPT (same weights)."""
    tg.manual_seed(0)
    ours = _gpt(0.0)()
    theirs = gpt_module(torch)(GPTConfig(block_size=8, vocab_size=17, n_layer=2, n_head=2,
                                         n_embd=16, dropout=0.0))
    theirs.load_state_dict({k: torch.tensor(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    comp = tg.compile(ours)
    (x, y), = _token_batches(1)
    for _ in range(2):  # capture (its backward is watched), replay
        ours.zero_grad()
        _, loss = comp(tg.tensor(x), tg.tensor(y))
        loss.backward()
    assert comp._runner.replays == 1
    _, tloss = theirs(torch.tensor(x), torch.tensor(y))
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tp[name].grad.numpy(), rtol=1e-3,
                                   atol=1e-6, err_msg=name)


# ---- guards and fallbacks -----------------------------------------------------------------
class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.5)
        self.l2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.l2(self.drop(tg.relu(self.l1(x))))


def _pair(cls=Small):
    tg.manual_seed(0)
    a = cls()
    tg.manual_seed(0)
    b = cls()
    return a, tg.compile(b)


def _step(model, x):
    for p in model.parameters():
        p.grad = None
    out = model(tg.tensor(x))
    if out.requires_grad:
        (out * out).sum().backward()
    return [out._data.copy()] + [p.grad._data.copy() for p in model.parameters()
                                 if p.grad is not None]


def _check_calls(eager, comp, calls):
    """Run the same calls on both; each call: (x, what to do before it)."""
    tg.manual_seed(3)
    ra = []
    for x, before in calls:
        before(eager)
        ra.append(_step(eager, x))
    tg.manual_seed(3)
    rb = []
    for x, before in calls:
        before(comp)
        rb.append(_step(comp, x))
    _assert_equal_runs(ra, rb)


def _nothing(m):
    pass


def test_guard_changes_recapture_or_run_eagerly_with_eager_results():
    r = np.random.default_rng(0)
    x4, x7 = r.standard_normal((4, 4)).astype(np.float32), r.standard_normal((7, 4)).astype(
        np.float32)
    freeze = lambda m: m.l1.weight.requires_grad_(False)  # noqa: E731
    thaw = lambda m: m.l1.weight.requires_grad_(True)  # noqa: E731
    eager, comp = _pair()
    calls = [(x4, _nothing)] * 3 + [(x7, _nothing)] * 3 + [(x4, _nothing)]
    calls += [(x4, lambda m: m.eval())] * 3 + [(x4, lambda m: m.train())]
    calls += [(x4, freeze)] * 3 + [(x4, thaw)] * 2
    calls += [(x4, lambda m: setattr(m.drop, "p", 0.25))] * 3
    _check_calls(eager, comp, calls)
    assert comp._runner.replays >= 8
    assert not comp._runner.why  # every key replayed (no eager fallback was needed)


def test_no_grad_calls_replay_without_a_graph():
    eager, comp = _pair()
    x = tg.tensor(np.ones((2, 4), np.float32))
    with tg.no_grad():
        outs = [comp(x) for _ in range(3)]
    assert comp._runner.replays == 2
    assert all(o.grad_fn is None and not o.requires_grad for o in outs)
    # grad mode again: another key; the first no_grad key is still replayed later
    out = comp(x)
    assert out.requires_grad
    with tg.no_grad():
        comp(x)
    assert comp._runner.replays == 3


class ItemForward(Small):
    def forward(self, x):
        h = tg.relu(self.l1(x))
        if h.sum().item() > 1.0:  # data-dependent Python control flow
            h = h * 2
        return self.l2(h)


class KeepsIntermediate(Small):
    def forward(self, x):
        h = tg.relu(self.l1(x))
        self.last_hidden = h  # a tensor of the forward kept outside the graph
        return self.l2(h)


class InPlaceOnInput(Small):
    def forward(self, x):
        x.mul_(2)
        return self.l2(tg.relu(self.l1(x)))


class BoolForward(Small):
    def forward(self, x):
        h = self.l1(x)
        return self.l2(h if (h > 0).any() else -h)


class MaskIndex(Small):
    def forward(self, x):
        h = self.l1(x)
        return self.l2(h[h.sum(1) > 0])  # rows picked by value: a data-dependent shape


@pytest.mark.parametrize("cls, why", [(ItemForward, "Python number"),
                                      (MaskIndex, "mask"),
                                      (KeepsIntermediate, "STORE_ATTR last_hidden"),
                                      (InPlaceOnInput, "in place"),
                                      (BoolForward, "bool()")])
def test_forwards_that_cannot_be_replayed_run_eagerly_for_good(cls, why):
    eager, comp = _pair(cls)
    r = np.random.default_rng(1)
    xs = [r.standard_normal((3, 4)).astype(np.float32) * s for s in (1, -1, 1, 1, -1)]
    _check_calls(eager, comp, [(x, _nothing) for x in xs])
    assert comp._runner.replays == 0
    (reason,) = comp._runner.why.values()
    assert why in reason


def test_nanogpt_generate_path_compiled_equals_eager():
    """targets=None: logits of the last position only (x[:, [-1], :])."""
    tg.manual_seed(0)
    ours = _gpt(0.0)()
    comp = tg.compile(ours)
    ours.eval()
    idx = tg.tensor(_token_batches(1)[0][0])
    with tg.no_grad():
        for _ in range(3):
            a, b = ours(idx)[0], comp(idx)[0]
            assert _same(a._data, b._data) and b.shape == (3, 1, 17)


def test_hooks_run_eagerly():
    eager, comp = _pair()
    seen = []
    for m in (eager, comp):
        m.l1.register_forward_hook(lambda mod, args, out: seen.append(1))
    x = np.ones((2, 4), np.float32)
    _check_calls(eager, comp, [(x, _nothing)] * 4)
    assert comp._runner.replays == 0 and len(seen) == 8


def test_create_graph_through_a_replay_is_refused_clearly():
    _, comp = _pair()
    x = tg.tensor(np.ones((2, 4), np.float32))
    for _ in range(2):
        comp(x).sum().backward()
    out = comp(x).sum()
    assert comp._runner.replays == 2
    with pytest.raises(RuntimeError, match="create_graph"):
        tg.autograd.grad(out, comp.l1.weight, create_graph=True)


def test_a_function_compiles_and_replays():
    w = tg.randn(4, 3, requires_grad=True)

    def f(x, w):
        return (x @ w).tanh().sum()
    cf = tg.compile(f)
    x = tg.randn(5, 4)
    grads = []
    for fn in (f, cf, cf, cf):
        w.grad = None
        fn(x, w).backward()
        grads.append(w.grad.numpy().copy())
    assert all(_same(grads[0], g) for g in grads[1:])
    assert cf._runner.replays == 2 and cf.__name__ == "f"
    closure = tg.compile(lambda x: (x @ w).sum())  # a tensor the tape does not know: eager
    for _ in range(3):
        closure(x)
    assert closure._runner.replays == 0


# ---- the wrapper's API, against torch.compile's ------------------------------------------
def test_wrapper_api_matches_torch_compile():
    ours_m, theirs_m = tg.nn.Sequential(tg.nn.Linear(2, 2), tg.nn.ReLU()), torch.nn.Sequential(
        torch.nn.Linear(2, 2), torch.nn.ReLU())
    ours, theirs = tg.compile(ours_m), torch.compile(theirs_m)
    assert type(ours).__name__ == type(theirs).__name__ == "OptimizedModule"
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "_orig_mod.0.weight", "_orig_mod.0.bias"]
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in
                                                       theirs.named_parameters()]
    assert ours._orig_mod is ours_m and theirs._orig_mod is theirs_m
    assert len(ours) == len(theirs) == 2
    assert ours.training == theirs.training is True
    ours.eval()
    theirs.eval()
    assert ours_m.training is theirs_m.training is False
    assert ours.training is theirs.training is False
    ours.train()
    assert ours_m.training and ours_m[0].training
    ours.flag = 3  # attributes are set on the original, as torch does
    theirs.flag = 3
    assert ours_m.flag == theirs_m.flag == 3 and "flag" not in ours.__dict__
    # load_state_dict takes the prefixed keys and refuses unprefixed ones, as torch
    sd = OrderedDict((k, v.clone()) for k, v in ours.state_dict().items())
    assert repr(ours.load_state_dict(sd)) == repr(theirs.load_state_dict(theirs.state_dict()))
    with pytest.raises(RuntimeError, match="Missing key"):
        ours.load_state_dict(ours_m.state_dict())
    with pytest.raises(RuntimeError, match="Missing key"):
        theirs.load_state_dict(theirs_m.state_dict())
    # disable=True is eager: the callable itself, as torch returns it
    assert tg.compile(ours_m, disable=True) is ours_m
    assert torch.compile(theirs_m, disable=True) is theirs_m
    with pytest.raises(RuntimeError, match="mode"):
        tg.compile(ours_m, mode="fastest")
    copy = __import__("copy").deepcopy(ours)
    assert type(copy).__name__ == "OptimizedModule" and copy._orig_mod is not ours_m


def test_decorator_forms():
    @tg.compile
    def f(x):
        return x * 2

    @tg.compile(fullgraph=True, mode="max-autotune")
    def g(x):
        return x * 3
    for _ in range(3):
        assert f(tg.ones(1)).item() == 2 and g(tg.ones(1)).item() == 3
    assert f._runner.replays == 2 and g._runner.replays == 2


# ---- a nanoGPT-style loop -----------------------------------------------------------------
def _nanogpt_loop(compile_model, tmp_path, iters=6):
    """train.py's shape: configure_optimizers, compile, grad accumulation, estimate_loss
    under no_grad in eval mode, clip, checkpoint of raw_model.state_dict()."""
    tg.manual_seed(1337)
    data = np.random.default_rng(0).integers(0, 17, 400)

    def get_batch(r):
        ix = r.integers(0, len(data) - 8, 3)
        x = tg.stack([tg.from_numpy(data[i:i + 8].astype(np.int64)) for i in ix])
        y = tg.stack([tg.from_numpy(data[i + 1:i + 9].astype(np.int64)) for i in ix])
        return x, y

    model = _gpt(0.1)()
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    if compile_model:
        model = tg.compile(model)
    raw_model = model
    r = np.random.default_rng(1)

    @tg.no_grad()
    def estimate_loss():
        model.eval()
        losses = tg.zeros(2)
        for k in range(2):
            X, Y = get_batch(r)
            _, loss = model(X, Y)
            losses[k] = loss.item()
        model.train()
        return losses.mean()

    log = []
    X, Y = get_batch(r)
    for it in range(iters):
        if it % 3 == 0:
            log.append(float(estimate_loss()))
        for micro_step in range(2):
            logits, loss = model(X, Y)
            loss = loss / 2
            X, Y = get_batch(r)
            loss.backward()
        tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        log.append(loss.item())
    tg.save({"model": raw_model.state_dict()}, tmp_path / f"ckpt{int(compile_model)}.pt")
    return model, log


def test_nanogpt_style_loop_with_compile_runs_unchanged(tmp_path, capsys):
    _, eager_log = _nanogpt_loop(False, tmp_path)
    model, comp_log = _nanogpt_loop(True, tmp_path)
    assert eager_log == comp_log
    assert model._runner.replays > 0
    # nanoGPT's resume: strip the prefix torch.compile's state_dict carries
    ck = tg.load(tmp_path / "ckpt1.pt")
    state_dict = ck["model"]
    unwanted_prefix = "_orig_mod."
    assert all(k.startswith(unwanted_prefix) for k in state_dict)
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    fresh = _gpt(0.1)()
    fresh.load_state_dict(state_dict)
    for (n, p), (_, q) in zip(fresh.named_parameters(), model.named_parameters()):
        assert _same(p._data, q._data), n


def test_retain_graph_backward_twice_through_a_replay_and_the_watch_is_gone():
    from tapegrad.core.state import state
    eager, comp = _pair()
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    grads = []
    for m in (eager, comp, comp):
        tg.manual_seed(5)
        for p in m.parameters():
            p.grad = None
        out = (m(tg.tensor(x)) ** 2).sum()
        out.backward(retain_graph=True)
        out.backward()  # the second one accumulates: the replayed node kept its arrays
        grads.append([p.grad._data.copy() for p in m.parameters()])
        assert not state.observers  # the capture's watch stopped after its backward
    assert comp._runner.replays == 1
    _assert_equal_runs(grads[:1], grads[2:])
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


class ChangesThroughData(Small):
    def forward(self, x):
        h = self.l1(x)
        h.data[0] = 0.0  # an in-place change autograd does not see (.data's own version)
        return self.l2(h)


class MutatesAConstant(Small):
    def forward(self, x):
        z = tg.zeros(x.shape[0], 8)
        z[0] = 1.0  # a constant changed in place after the tape recorded it
        return self.l2(self.l1(x) + z)


@pytest.mark.parametrize("cls", [ChangesThroughData, MutatesAConstant])
def test_writes_outside_the_graph_are_replayed(cls):
    # an in-place write autograd does not record (through .data, into a constant) is a
    # step of the tape: the replay writes again, as eager does
    eager, comp = _pair(cls)
    r = np.random.default_rng(2)
    _check_calls(eager, comp, [(r.standard_normal((3, 4)).astype(np.float32), _nothing)
                               for _ in range(4)])
    assert comp._runner.replays == 3, comp._runner.why
    assert "write_into" in comp.explain()


class WritesThroughNumPy(Small):
    def forward(self, x):
        h = self.l1(x)
        h.detach().numpy()[0] = 0.0  # a write no op of the library made: the tape is blind
        return self.l2(h)


def test_a_change_the_tape_did_not_see_runs_eagerly():
    eager, comp = _pair(WritesThroughNumPy)
    r = np.random.default_rng(2)
    _check_calls(eager, comp, [(r.standard_normal((3, 4)).astype(np.float32), _nothing)
                               for _ in range(4)])
    assert comp._runner.replays == 0 and comp._runner.why


def test_a_parameter_also_used_outside_the_compiled_call_gives_eager_results():
    """loss = f(model(x)) + a penalty on one of model's parameters, computed outside."""
    eager, comp = _pair()
    x = tg.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    grads = []
    for m in (eager, comp, comp, comp):
        tg.manual_seed(5)
        for p in m.parameters():
            p.grad = None
        loss = m(x).sum() + (m.l1.weight ** 2).sum() * 0.1 + (m.l1.weight * 3).mean()
        loss.backward()
        grads.append([p.grad._data.copy() for p in m.parameters()])
    for g in grads[1:]:
        _assert_equal_runs(grads[:1], [g])

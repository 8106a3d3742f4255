"""The generated replay's written-out paths (tapegrad/_compile/emit.py, inline.py): each
hot op, rule, host step and optimizer call emitted as NumPy lines gives eager's bits.

Every test trains (or steps) twice from the same weights, eagerly and with the step
compiled, compares every loss, gradient, parameter and buffer with np.array_equal, checks
that the compiled run replayed, and that the printed replay holds the written-out line
(a test whose path fell back to the generic call would prove nothing about it).
"""
import re

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.train.char_models import MakemoreMLP

nn = tg.nn
F = tg.nn.functional
V = 27


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """Replays are counted: the eager-vs-replay timing trial is off."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)


def _same(a, b):
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.dtype == y.dtype, k
        assert np.array_equal(x, y, equal_nan=True), f"array {k} differs"


def _state(model, opt=None):
    out = [p.grad._data.copy() for p in model.parameters() if p.grad is not None]
    out += [p._data.copy() for p in model.parameters()]
    out += [b._data.copy() for b in model.buffers()]
    if opt is not None:
        out += [v._data.copy() for st in opt.state.values() for v in st.values()
                if isinstance(v, tg.Tensor)]
    return out


def _train(make_model, make_opt, batches, compiled, loss_fn=None, between=None):
    tg.manual_seed(0)
    model = make_model()
    opt = make_opt(model.parameters())
    loss_fn = loss_fn or (lambda out, y: F.cross_entropy(out, y))

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = tg.compile(step) if compiled else step
    rec = []
    for k, (x, y) in enumerate(batches):
        if between is not None:
            between(k, opt)
        rec.append(run(tg.tensor(x), tg.tensor(y))._data.copy())
        rec += _state(model, opt)
    return run, rec


def _check(make_model, make_opt, batches, lines, **kw):
    _, eager = _train(make_model, make_opt, batches, False, **kw)
    run, comp = _train(make_model, make_opt, batches, True, **kw)
    _same(eager, comp)
    assert run._runner.replays == len(batches) - 1, run._runner.why
    code = run.explain()
    for line in lines:
        assert line in code, line
    return code


def _makemore_batches(n, seed=0):
    r = np.random.default_rng(seed)
    return [(r.integers(0, V, (32, 3)), r.integers(0, V, 32)) for _ in range(n)]


def _sgd(**kw):
    return lambda params: tg.optim.SGD(params, lr=0.1, **kw)


def test_makemore_step_batch_norm_linear_tanh_and_plain_sgd():
    # W4's step: embedding, reshape, linear without bias, BatchNorm (forward, fused rule,
    # running statistics, batch count), tanh, linear, cross-entropy, plain SGD
    code = _check(lambda: MakemoreMLP(V, 3, 10, 64), _sgd(), _makemore_batches(8),
                  ["add_reduce(", "np.sqrt(", "np.tanh(", "matmul(", "*= 0.9",
                   "+= 1", "add_scaled_(p._data, -lr, g._data)", "gset(p, None)", "[v0]"])
    assert "batch_norm_" not in code and "_update_running" not in code


def test_sgd_with_momentum_set_between_steps_takes_the_optimizer_step():
    # plain SGD is written out; a group that gains momentum takes SGD.step itself
    def between(k, opt):
        if k == 4:
            opt.param_groups[0]["momentum"] = 0.9
            opt.param_groups[0]["lr"] = 0.05
    _check(lambda: MakemoreMLP(V, 3, 10, 64), _sgd(), _makemore_batches(8),
           ["if plain_sgd("], between=between)


class _MLP(nn.Module):
    """W3's model: matmul + bias (a broadcast add whose rule is summed back), relu."""

    def __init__(self, dtype=np.float32):
        super().__init__()
        r = np.random.default_rng(0)
        self.W1 = nn.Parameter(tg.tensor(r.standard_normal((12, 16)).astype(dtype) / 4))
        self.b1 = nn.Parameter(tg.tensor(r.standard_normal(16).astype(dtype)))
        self.W2 = nn.Parameter(tg.tensor(r.standard_normal((16, 5)).astype(dtype) / 4))
        self.b2 = nn.Parameter(tg.tensor(r.standard_normal(5).astype(dtype)))

    def forward(self, x):
        return (x @ self.W1 + self.b1).relu() @ self.W2 + self.b2


def _mlp_batches(n, dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    return [(r.standard_normal((8, 12)).astype(dtype), r.integers(0, 5, 8)) for _ in range(n)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_bias_relu_mlp(dtype):
    _check(lambda: _MLP(dtype), _sgd(), _mlp_batches(6, dtype),
           ["matmul(v", "maximum(", "np.isfinite(", "fit("])


def test_adam_and_adamw_steps_replay_bit_for_bit():
    for make in (lambda p: tg.optim.Adam(p, lr=1e-2),
                 lambda p: tg.optim.AdamW(p, lr=1e-2, weight_decay=0.1)):
        _check(lambda: _MLP(), make, _mlp_batches(6), ["matmul(v"])


def test_pointwise_ops_and_their_rules():
    # add/sub/mul/div, exp/log/tanh, a full sum, a broadcast operand (its rule is summed
    # back to its shape), the same tensor twice (x * x: both rules into one leaf)
    r = np.random.default_rng(1)
    a = tg.tensor(r.standard_normal((5, 4)).astype(np.float32), requires_grad=True)
    b = tg.tensor(r.uniform(1, 2, (5, 4)).astype(np.float32), requires_grad=True)
    c = tg.tensor(r.standard_normal((1, 4)).astype(np.float32), requires_grad=True)

    def f():
        h = (a * b + c) / b - c.exp() * a
        (h.tanh() + (b.log() * a * a)).sum().backward()

    grads = []
    for _ in range(3):
        f()
        grads += [t.grad._data.copy() for t in (a, b, c)]
        a.grad = b.grad = c.grad = None
    run = tg.compile(f)
    got = []
    for _ in range(3):
        run()
        got += [t.grad._data.copy() for t in (a, b, c)]
        a.grad = b.grad = c.grad = None
    _same(grads, got)
    assert run._runner.replays == 2
    code = run.explain()
    for line in (" * ", " / ", " - ", "np.exp(", "np.log(", "np.tanh(", "add_reduce(",
                 "fit(", "gset("):
        assert line in code, line


def test_gradients_accumulate_into_existing_grad():
    # no zero_grad: the second and later replays add into .grad (the engine's accumulate)
    r = np.random.default_rng(2)
    a = tg.tensor(r.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
    b = tg.tensor(r.standard_normal((3, 3)).astype(np.float32), requires_grad=True)

    def f():
        (a * b + a).tanh().sum().backward()
    for _ in range(4):
        f()
    want = [a.grad._data.copy(), b.grad._data.copy()]
    a.grad = b.grad = None
    run = tg.compile(f)
    for _ in range(4):
        run()
    _same(want, [a.grad._data.copy(), b.grad._data.copy()])
    assert run._runner.replays == 3


def test_relu_rule_selects_where_the_gradient_is_not_finite():
    # an inf gradient at a blocked entry: eager's rule selects (0, not 0 * inf = nan)
    x = tg.tensor(np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32), requires_grad=True)
    w = tg.tensor(np.array([[np.inf, 1.0], [2.0, np.inf]], np.float32))

    def f():
        (x.relu() * w).sum().backward()
    f()
    want = x.grad._data.copy()
    x.grad = None
    run = tg.compile(f)
    for _ in range(3):
        run()
        _same([want], [x.grad._data.copy()])
        x.grad = None
    assert run._runner.replays == 2 and "np.where(" in run.explain()
    assert np.isfinite(want).all()


def test_layer_norm_gelu_block_replays_bit_for_bit():
    # a GPT-like block: layer norm, linear with 3-D input, GELU, residual add
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(16, 16)
            self.ln = nn.LayerNorm(16)
            self.fc = nn.Linear(16, 32)
            self.proj = nn.Linear(32, 16)
            self.head = nn.Linear(16, 5)

        def forward(self, x):
            x = self.inp(x)  # (the layer norm's input then needs its gradient too)
            x = x + self.proj(F.gelu(self.fc(self.ln(x))))
            return self.head(x).reshape(-1, 5)

    r = np.random.default_rng(3)
    batches = [(r.standard_normal((4, 6, 16)).astype(np.float32), r.integers(0, 5, 24))
               for _ in range(6)]
    code = _check(Block, lambda p: tg.optim.AdamW(p, lr=1e-2), batches,
                  [".reshape(-1, 16), v", "matmul(", "= layer_norm_rows(v", "ng_fwd(",
                   "= gelu_f32(v", "P = adam_plan(O"])
    # gelu's rule: g times the forward's saved gelu'(x) (into g's buffer: inplace.py)
    assert re.search(r"d\d+_0 = (\w+ \* v\d+|np\.multiply\(\w+, v\d+, out=\w+\))\n",
                     code), code


def test_gelu_float64_and_tanh_forms_take_the_entry_call():
    # float64 saves Phi(x), the tanh form nothing: both keep the generic call (bit for bit)
    for dtype, approximate in ((np.float64, "none"), (np.float32, "tanh")):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8, dtype=dtype)

            def forward(self, x):
                return F.gelu(self.fc(x), approximate=approximate)

        r = np.random.default_rng(4)
        batches = [(r.standard_normal((5, 8)).astype(dtype), r.integers(0, 8, 5))
                   for _ in range(4)]
        code = _check(Net, _sgd(), batches, ["gelu_"])
        assert "gelu_f32(" not in code


def test_float16_model_replays_as_eager_computes_it():
    # float16 is computed in float32 and rounded once (core/opmath.py), in the forward and
    # in the rules: the replay does the same
    def make():
        return nn.Sequential(nn.Linear(6, 16), nn.LayerNorm(16), nn.GELU(),
                             nn.Linear(16, 5)).to(tg.float16)
    r = np.random.default_rng(4)
    batches = [(r.standard_normal((8, 6)).astype(np.float16),
                r.standard_normal((8, 5)).astype(np.float16)) for _ in range(6)]
    _check(make, _sgd(), batches, ["widen(", "widen_rule(", "narrow"],
           loss_fn=lambda out, y: ((out - y) ** 2).mean())


def test_a_parameter_read_as_a_global_that_changes_shape_is_captured_again():
    w = tg.tensor(np.ones((3, 2), np.float32), requires_grad=True)

    def f(x):
        loss = (x @ w).sum()
        loss.backward()
        return loss
    run = tg.compile(f)
    x = tg.ones(4, 3)
    for _ in range(3):
        run(x)
    assert run._runner.replays == 2
    w.data = tg.ones(3, 5)  # another shape: the replay refuses, a new capture follows
    w.grad = None
    assert run(x).item() == 60.0
    assert run(x).item() == 60.0 and run._runner.captures == 2


def test_cross_entropy_common_case_and_ignored_rows_and_a_bad_target():
    # every target a class: the written-out lines; a batch with ignored rows (-100): the
    # entry's general case, in both the forward and the rule; a target out of range:
    # IndexError, as eager
    r = np.random.default_rng(5)
    batches = [(r.standard_normal((8, 12)).astype(np.float32), r.integers(0, 5, 8))
               for _ in range(6)]
    batches[3][1][[1, 4]] = -100
    batches[5][1][:] = -100  # every row ignored: loss nan, gradient 0
    code = _check(lambda: _MLP(), _sgd(), batches, ["index_top(", "max_reduce(", "ce_dx("])
    assert "cross_entropy_" not in code
    run, _ = _train(lambda: _MLP(), _sgd(), batches[:3], True)
    bad = batches[0][1].copy()
    bad[2] = 5
    with pytest.raises(IndexError, match="out of bounds"):
        run(tg.tensor(batches[0][0]), tg.tensor(bad))


def test_cross_entropy_row_max_of_many_rows_is_max_last():
    # from 32 rows the entry's row max goes through _rowsum.max_last (a transposed copy):
    # the written-out line calls it too, and the steps stay eager's bit for bit
    r = np.random.default_rng(6)
    batches = [(r.standard_normal((40, 12)).astype(np.float32), r.integers(0, 5, 40))
               for _ in range(4)]
    code = _check(lambda: _MLP(), _sgd(), batches, ["index_top(", "max_last(", "ce_dx("])
    assert "max_reduce(" not in code and "cross_entropy_" not in code


def test_mean_and_permute_and_their_rules():
    r = np.random.default_rng(6)
    a = tg.tensor(r.standard_normal((2, 3, 4)).astype(np.float32), requires_grad=True)
    b = tg.tensor(r.standard_normal((4, 2, 3)).astype(np.float32), requires_grad=True)

    def f():
        (a.permute(2, 0, 1) * b).tanh().mean().backward()
    want = []
    for _ in range(3):
        f()
        want += [a.grad._data.copy(), b.grad._data.copy()]
        a.grad = b.grad = None
    run = tg.compile(f)
    got = []
    for _ in range(3):
        run()
        got += [a.grad._data.copy(), b.grad._data.copy()]
        a.grad = b.grad = None
    _same(want, got)
    code = run.explain()
    assert run._runner.replays == 2
    assert ".transpose((2, 0, 1))" in code and ".transpose((1, 2, 0))" in code
    assert ".mean(axis=None" in code and "/ 24" in code


def test_adam_and_adamw_updates_are_written_out(monkeypatch):
    # adam_flat's arithmetic in the replay (optim/_flat.py's packs), lr changed between
    # steps (read at replay time); amsgrad, maximize and Adam's L2 decay take the step
    from tapegrad.optim import adam as adam_mod
    calls = []
    flat = adam_mod.adam_flat
    monkeypatch.setattr(adam_mod, "adam_flat", lambda *a, **k: calls.append(1) or flat(*a, **k))

    def lr_drop(k, opt):
        for grp in opt.param_groups:
            grp["lr"] = 1e-2 / (k + 1)
    for make in (lambda p: tg.optim.Adam(p, lr=1e-2),
                 lambda p: tg.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
                 lambda p: tg.optim.AdamW(p, lr=1e-2, betas=(0.8, 0.95))):
        calls.clear()
        code = _check(lambda: _MLP(), make, _mlp_batches(6), ["P = adam_plan(O"],
                      between=lr_drop)
        assert "adam_moments_(g, m, v, tmp, upd, b1, b2, lr / (1 - b1 ** t)" in code
        assert len(calls) == 6 + 1  # eager's six steps, the capture's: no replay calls it
    for make in (lambda p: tg.optim.Adam(p, lr=1e-2, amsgrad=True),
                 lambda p: tg.optim.Adam(p, lr=1e-2, maximize=True),
                 lambda p: tg.optim.Adam(p, lr=1e-2, weight_decay=0.1),
                 lambda p: tg.optim.AdamW(p, lr=1e-2, betas=(0.1, 0.9)),
                 lambda p: tg.optim.AdamW(p, lr=1e-2, foreach=False)):
        _check(lambda: _MLP(), make, _mlp_batches(4), ["P = adam_plan(O"])


def test_adam_settings_changed_between_replays_take_the_optimizer_step():
    # amsgrad / maximize switched on after the flat steps: the plan refuses, eager's step
    # runs (its per-parameter path on the same state), as eager would
    def switch(k, opt):
        if k == 3:
            opt.param_groups[0]["maximize"] = True
        if k == 4:
            opt.param_groups[0]["maximize"] = False
            opt.param_groups[0]["betas"] = (0.2, 0.9)
    _check(lambda: _MLP(), lambda p: tg.optim.AdamW(p, lr=1e-2), _mlp_batches(6),
           ["P = adam_plan(O"], between=switch)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_clip_grad_norm_is_written_out(monkeypatch, dtype):
    # a small max_norm scales every gradient, a large one none (coef 1: no pass); float16
    # gradients take the function (its float32 accumulation)
    from tapegrad.nn.utils import clip_grad
    calls = []
    total_norm = clip_grad.get_total_norm
    monkeypatch.setattr(clip_grad, "get_total_norm",
                        lambda *a, **k: calls.append(1) or total_norm(*a, **k))
    for max_norm in (0.05, 1e6):
        runs = []
        for compiled in (False, True):
            tg.manual_seed(0)
            model = _MLP(dtype)
            opt = tg.optim.SGD(model.parameters(), lr=0.1)

            def step(x, y):
                opt.zero_grad()
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                opt.step()
                return loss
            run = tg.compile(step) if compiled else step
            calls.clear()
            rec = []
            for x, y in _mlp_batches(5, dtype):
                rec.append(np.asarray(run(tg.tensor(x), tg.tensor(y))._data).copy())
                rec += _state(model)
            runs.append((run, rec, len(calls)))
        (_, eager, n_eager), (run, comp, n_comp) = runs
        _same(eager, comp)
        assert run._runner.replays == 4, run._runner.why
        assert "ars = clip_arrays(gs)" in run.explain()
        assert n_eager == 5 and n_comp == (5 if dtype == np.float16 else 1)


def test_comment_words_are_no_variables_when_freeing():
    # codegen._free deletes each variable after its last use; the words of a comment
    # ("a", "d1", "G" in prose) are no variables: a `del a` there would raise NameError
    # in the replay, and a variable named in a later comment would be held too long
    from tapegrad._compile.codegen import _free
    lines = ["    v1 = f(v0)  # a d1 of G: the sum",
             "    # v1 again, a comment line",
             "    v2 = g(v1)  # v0 is kept by a",
             "    return {2: v2}"]
    out = _free(lines)
    assert out == [lines[0], "    del v0", lines[1], lines[2], "    del v1", lines[3]]

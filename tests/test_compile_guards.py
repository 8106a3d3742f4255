"""tg.compile reads Python values afresh (issue 30): every Python value a compiled call
reads is a guard or an input, a data-dependent read is a graph break (eager, right
results) or, under fullgraph=True, torch's `Unsupported`; re-captures are bounded by
`recompile_limit` (torch's 8), then eager with one warning.

The expected values come from PyTorch eager on the same numbers; each test also asserts
the compiled callable DID replay where it should (a callable that silently stayed eager
would pass the value checks trivially).
"""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """These tests count replays: the eager-vs-replay timing trial (which may run some
    calls eagerly, by the clock) is off; test_compile_whole_step.py tests it."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)

SCALE = 1.0


def _check(got, want):
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


# ---- the three repros --------------------------------------------------------------
def test_a_changed_global_is_read_afresh():
    global SCALE
    f = tg.compile(lambda x: x * SCALE)
    for s in (1.0, 2.0, 3.0, 3.0, 3.0, 2.0, 2.0):
        SCALE = s
        _check(f(tg.ones(3)), torch.ones(3) * s)
    assert f._runner.replays == 4  # 3.0 twice, 2.0 twice more: the kept captures replay
    assert f._runner.captures == 3


def test_a_changed_closure_variable_is_read_afresh():
    c = 1.0
    f = tg.compile(lambda x: x * c)
    for s in (1.0, 2.0, 3.0, 3.0):
        c = s
        _check(f(tg.ones(3)), torch.ones(3) * s)
    assert f._runner.replays == 1


def test_an_index_computed_from_values_is_a_graph_break():
    f = tg.compile(lambda x: x[x.argmax()])
    for v in ([1.0, 5.0, 2.0], [1.0, 2.0, 9.0], [7.0, 2.0, 3.0]):
        t = torch.tensor(v)
        _check(f(tg.tensor(v)), t[t.argmax()])
    assert f._runner.replays == 0
    (why,) = f._runner.why.values()
    assert "index" in why


# ---- what else a call reads -------------------------------------------------------------
OFFSET = 0.5


def _helper(x):
    return x + OFFSET  # a global read one call deeper


def test_a_global_read_by_a_function_the_compiled_one_calls():
    global OFFSET
    f = tg.compile(lambda x: _helper(x * 2.0))
    for o in (0.5, 0.5, -1.0, -1.0):
        OFFSET = o
        _check(f(tg.ones(2)), torch.ones(2) * 2.0 + o)
    assert f._runner.replays == 2


class Shift(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tg.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x) * SCALE


def test_a_module_forward_reading_a_global_and_its_gradients():
    global SCALE
    tg.manual_seed(0)
    m = Shift()
    tm = torch.nn.Linear(3, 2)
    tm.load_state_dict({k[4:]: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    cm = tg.compile(m)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    for s in (1.0, 1.0, 1.0, 2.0, 2.0, 2.0):
        SCALE = s
        m.zero_grad()
        tm.zero_grad()
        out = cm(tg.tensor(x))
        out.sum().backward()
        want = tm(torch.tensor(x)) * s
        want.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(m.lin.weight.grad.numpy(), tm.weight.grad.numpy(),
                                   rtol=1e-6)
    assert cm._runner.replays >= 2


def test_python_numbers_passed_in_are_guarded():
    f = tg.compile(lambda x, a: x * a)
    for a in (1.0, 2.0, 2.0, 3, 3):
        _check(f(tg.ones(2), a), torch.ones(2) * a)
    assert f._runner.replays == 2


def test_data_dependent_branches_give_eager_results():
    def g(x):
        if x.sum() > 0:  # bool() of a tensor: a graph break
            return x * 2
        return x - 1
    f = tg.compile(g)
    for v in ([1.0, 2.0], [-3.0, 1.0], [4.0, 4.0], [-1.0, -1.0]):
        t = torch.tensor(v)
        _check(f(tg.tensor(v)), t * 2 if t.sum() > 0 else t - 1)
    assert f._runner.replays == 0


# ---- fullgraph=True ------------------------------------------------------------------------
def test_the_exception_classes_are_torchs():
    ours = [c.__name__ for c in tg._dynamo.exc.Unsupported.__mro__]
    theirs = [c.__name__ for c in torch._dynamo.exc.Unsupported.__mro__]
    assert ours == theirs


@pytest.mark.parametrize("body", [
    lambda x: x * 2 if x.sum() > 0 else x,   # torch raises here too
    lambda x: x * x.sum().item(),
    lambda x: x[x.argmax()],
], ids=["bool", "item", "index"])
def test_fullgraph_raises_at_a_graph_break(body):
    f = tg.compile(body, fullgraph=True)
    with pytest.raises(tg._dynamo.exc.Unsupported, match="fullgraph=True"):
        f(tg.ones(3))
    assert tg.core.state.state.tape is None  # the capture is over
    ok = tg.compile(lambda x: (x * 2).sum(), fullgraph=True)
    for _ in range(3):
        assert ok(tg.ones(3)).item() == 6.0


def test_torch_raises_unsupported_for_data_dependent_branching_too():
    tf = torch.compile(lambda x: x * 2 if x.sum() > 0 else x, fullgraph=True, backend="eager")
    with pytest.raises(torch._dynamo.exc.Unsupported):
        tf(torch.ones(3))


# ---- the recompile limit -------------------------------------------------------------------
def test_recompile_limit_then_eager_with_one_warning():
    global SCALE
    f = tg.compile(lambda x: x * SCALE)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for s in range(1, 13):
            SCALE = float(s)
            _check(f(tg.ones(2)), torch.ones(2) * s)
    hits = [x for x in w if "recompile_limit" in str(x.message)]
    assert len(hits) == 1 and "global SCALE" in str(hits[0].message)
    assert f._runner.captures == tg._dynamo.config.recompile_limit == 8
    SCALE = 3.0  # still captured: replayed
    before = f._runner.replays
    _check(f(tg.ones(2)), torch.ones(2) * 3.0)
    assert f._runner.replays == before + 1


def test_config_and_reset(monkeypatch):
    global SCALE
    monkeypatch.setattr(tg._dynamo.config, "recompile_limit", 2)
    f = tg.compile(lambda x: x * SCALE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in (1.0, 2.0, 3.0, 3.0):
            SCALE = s
            _check(f(tg.ones(2)), torch.ones(2) * s)
    assert f._runner.captures == 2 and f._runner.replays == 0
    tg._dynamo.reset()
    assert f._runner.captures == 0
    f(tg.ones(2))
    _check(f(tg.ones(2)), torch.ones(2) * 3.0)
    assert f._runner.replays == 1


def test_torch_compile_arguments_are_accepted():
    for kw in ({"mode": "reduce-overhead"}, {"mode": "max-autotune"}, {"dynamic": True},
               {"dynamic": False}, {"backend": "eager"}, {"backend": "aot_eager"},
               {"options": {"trace.enabled": False}}, {"fullgraph": True}):
        f = tg.compile(lambda x: x + 1, **kw)
        for _ in range(3):
            _check(f(tg.ones(2)), torch.ones(2) + 1)
    g = lambda x: x + 1  # noqa: E731
    assert tg.compile(g, disable=True) is g
    with pytest.raises(RuntimeError, match="unrecognized mode"):
        tg.compile(g, mode="fastest")


def test_a_capture_under_a_profiler_runs_eagerly():
    # a profiler holds sys.setprofile: the values the call reads cannot be seen
    import cProfile
    global SCALE
    f = tg.compile(lambda x: x * SCALE)
    prof = cProfile.Profile()
    prof.enable()
    try:
        for s in (1.0, 2.0, 3.0):
            SCALE = s
            _check(f(tg.ones(2)), torch.ones(2) * s)
    finally:
        prof.disable()
    assert f._runner.replays == 0
    assert "profiler" in next(iter(f._runner.why.values()))


# ---- functions nested in the step: their free variables are the step's own -----------------
def test_comprehensions_and_lambdas_over_the_steps_locals_replay():
    # Python 3.11 runs a comprehension or generator expression as a function whose free
    # variables are the step's locals (a new list, new tensors per call): no guards (each
    # call would fail them and the guard would hold the call's tensors)
    w = tg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    k = 2.0

    def step(x):
        hs = [x * w, (x * w).tanh(), x + w]
        picked = [hs[i] for i in (2, 0)]
        scale = (lambda t: t * k)
        loss = sum(scale(h).sum() for h in picked) + sum((h * h).sum() for h in hs)
        return loss

    f = tg.compile(step)
    wt = torch.tensor(w.detach().numpy())
    for v in (1.0, 2.0, 3.0, 4.0):
        x = np.full((3, 4), v, dtype=np.float32)
        xt = torch.tensor(x)
        hs = [xt * wt, (xt * wt).tanh(), xt + wt]
        want = sum((h * k).sum() for h in (hs[2], hs[0])) + sum((h * h).sum() for h in hs)
        np.testing.assert_allclose(f(tg.tensor(x)).item(), want.item(), rtol=1e-6)
    assert f._runner.replays == 3, f._runner.why
    assert f._runner.captures == 1
    k = 5.0  # the step's own closure variable is still a guard, read by the lambda
    x = np.ones((3, 4), dtype=np.float32)
    got = f(tg.tensor(x)).item()
    xt = torch.tensor(x)
    hs = [xt * wt, (xt * wt).tanh(), xt + wt]
    want = sum((h * 5.0).sum() for h in (hs[2], hs[0])) + sum((h * h).sum() for h in hs)
    np.testing.assert_allclose(got, want.item(), rtol=1e-6)
    assert f._runner.captures == 2


# ---- values read THROUGH an object: a dict's items, a list's, a config's attributes -------
CFG = {"scale": 2.0, "inner": {"shift": 1.0}}


def test_values_read_through_dicts_lists_and_config_objects_are_read_afresh():
    import argparse
    import types
    args = argparse.Namespace(scale=2.0)
    ns = types.SimpleNamespace(scale=2.0)
    lst = [2.0]

    class Config:
        def __init__(self):
            self.scale = 2.0
    cfg = Config()
    fs = {"dict": tg.compile(lambda x: x * CFG["scale"] + CFG["inner"]["shift"]),
          "argparse": tg.compile(lambda x: x * args.scale + 1.0),
          "namespace": tg.compile(lambda x: x * ns.scale + 1.0),
          "list": tg.compile(lambda x: x * lst[0] + 1.0),
          "object": tg.compile(lambda x: x * cfg.scale + 1.0)}
    for v in (2.0, 2.0, 3.0, 3.0, 5.0):
        CFG["scale"] = args.scale = ns.scale = lst[0] = cfg.scale = v
        for name, f in fs.items():
            _check(f(tg.ones(3)), torch.ones(3) * v + 1.0)
    for name, f in fs.items():
        assert f._runner.replays == 2, name  # the repeated values replayed
    CFG["inner"]["shift"] = 4.0  # one level deeper
    _check(fs["dict"](tg.ones(3)), torch.ones(3) * 5.0 + 4.0)


def test_a_step_whose_python_changes_what_it_reads_runs_eagerly():
    # the step itself counts in a list and sets its optimizer's lr from the count: a
    # replay runs no Python, so it would repeat neither (torch.compile's graph would
    # not either: its guards would fail)
    def train(compiled):
        W = tg.tensor(np.ones((3, 4), dtype=np.float32), requires_grad=True)
        opt = tg.optim.SGD([W], lr=0.1)
        it = [0]

        def step(x):
            lr = 0.1 * 0.5 ** (it[0] // 2)
            for g in opt.param_groups:
                g["lr"] = lr
            it[0] += 1
            opt.zero_grad()
            loss = (x * W).sum()
            loss.backward()
            opt.step()
            return loss
        run = tg.compile(step) if compiled else step
        for _ in range(6):
            run(tg.ones(3, 4))
        return run, W.detach().numpy().copy()
    _, want = train(False)
    run, got = train(True)
    np.testing.assert_array_equal(got, want)
    assert run._runner.replays == 0
    assert "changed" in next(iter(run._runner.why.values()))


# ---- values that change by themselves: random numbers and clocks read in Python ----------
_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("draw", ["random", "numpy_global", "numpy_generator", "clock"])
def test_python_random_numbers_and_clocks_are_not_frozen_into_the_replay(draw):
    # a replay runs no Python: a number drawn (or read off a clock) while capturing
    # would be the same on every replay; such calls run eagerly, each drawing anew
    import random
    import time
    fns = {"random": lambda: random.random(),
           "numpy_global": lambda: float(np.random.rand()),
           "numpy_generator": lambda: float(_RNG.normal()),
           "clock": lambda: time.perf_counter_ns() % 100003 + 1.0}  # (float32 sees it)
    read = fns[draw]
    f = tg.compile(lambda x: x * read())
    got = [f(tg.ones(1)).item() for _ in range(4)]
    assert len(set(got)) == 4, got
    assert f._runner.replays == 0
    (why,) = f._runner.why.values()
    assert "replay would" in why


def test_the_librarys_own_random_ops_still_replay():
    # dropout draws from tapegrad's generator in a host step the replay repeats
    f = tg.compile(lambda x: tg.nn.functional.dropout(x, 0.5, training=True))
    tg.manual_seed(3)
    got = [f(tg.ones(64)).numpy().copy() for _ in range(4)]
    tg.manual_seed(3)
    want = [tg.nn.functional.dropout(tg.ones(64), 0.5, training=True).numpy() for _ in range(4)]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert f._runner.replays == 3


def test_a_modules_list_dict_and_config_attributes_are_read_afresh():
    class Config:
        def __init__(self):
            self.shift = 1.0

    class M(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = [2.0]
            self.opts = {"power": 1}
            self.config = Config()
            self.lin = tg.nn.Linear(2, 2)
            self.lin.extra = {"bias_scale": 1.0}  # (a submodule's too)

        def forward(self, x):
            y = x * self.scales[0] + self.config.shift
            return y ** self.opts["power"] + self.lin.extra["bias_scale"]

    m = M()
    cm = tg.compile(m)
    x = tg.ones(3)
    with tg.no_grad():
        for k, v in enumerate((2.0, 2.0, 3.0, 3.0)):
            m.scales[0] = m.config.shift = m.lin.extra["bias_scale"] = v
            m.opts["power"] = 1 + k // 3
            np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
    assert cm._runner.replays == 1  # the one call whose values were all as captured


def test_a_forward_that_appends_to_a_modules_list_runs_eagerly():
    class M(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x):
            self.seen.append(x.shape[0])
            return x * 2

    m = M()
    cm = tg.compile(m)
    with tg.no_grad():
        for _ in range(3):
            cm(tg.ones(4))
    assert m.seen == [4, 4, 4] and cm._runner.replays == 0


def test_parameters_held_in_a_dict_or_list_replay_and_a_replaced_one_is_seen():
    # functional code: the parameters live in a global dict / a list the step reads
    r = np.random.default_rng(0)
    params = {"W": tg.tensor(r.standard_normal((3, 2)).astype(np.float32), requires_grad=True),
              "b": tg.zeros(2, requires_grad=True)}
    layers = [tg.tensor(r.standard_normal((2, 2)).astype(np.float32), requires_grad=True)]

    def loss_fn(x):
        return ((x @ params["W"] + params["b"]).tanh() @ layers[0]).sum()
    f = tg.compile(loss_fn)
    x = tg.tensor(r.standard_normal((4, 3)).astype(np.float32))
    for _ in range(3):
        f(x).backward()
    got = [params["W"].grad.numpy().copy(), layers[0].grad.numpy().copy()]
    for t in (params["W"], params["b"], layers[0]):
        t.grad = None
    for _ in range(3):
        loss_fn(x).backward()
    np.testing.assert_array_equal(got[0], params["W"].grad.numpy())
    np.testing.assert_array_equal(got[1], layers[0].grad.numpy())
    assert f._runner.replays == 2
    layers[0] = tg.ones(2, 2, requires_grad=True)  # a new tensor in the list: read afresh
    np.testing.assert_array_equal(f(x).detach().numpy(), loss_fn(x).detach().numpy())


def test_an_input_of_other_strides_is_another_key():
    # `x.view(-1)` of a transposed input raises in eager (torch's stride rule): a replay
    # captured on a contiguous input must not reshape (copy) it silently
    f = tg.compile(lambda x: x.view(-1) * 2)
    a = tg.ones(3, 4)
    for _ in range(3):
        assert f(a).shape == (12,)
    assert f._runner.replays == 2
    with pytest.raises(RuntimeError):
        f(tg.ones(4, 3).T)
    with pytest.raises(RuntimeError):
        torch.ones(4, 3).T.view(-1)


def test_a_tensor_kept_as_a_plain_module_attribute_replays_and_a_new_one_is_seen():
    # older model code keeps a mask as a plain attribute, not a buffer
    class M(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tg.nn.Linear(3, 3)
            self.mask = tg.tensor(np.array([1.0, 0.0, 1.0], dtype=np.float32))

        def forward(self, x):
            return self.lin(x) * self.mask

    m = M()
    cm = tg.compile(m)
    x = tg.ones(2, 3)
    with tg.no_grad():
        for k in range(5):
            if k == 3:
                m.mask = tg.tensor(np.array([0.0, 2.0, 0.0], dtype=np.float32))
            np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
    assert cm._runner.replays == 3 and cm._runner.captures == 2, cm._runner.why


# ---- numbers the step's own code reads from the library's optimizers and schedulers ------
def _lr_reading_run(lib, variant, compiled=False):
    """An SGD step whose own code reads the learning rate a StepLR moves (halving every
    2 calls), for tapegrad (`lib` tg) or torch: a hand-written update with the group's
    lr, or a penalty scaled by the scheduler's last rate; losses and weights."""
    F = lib.nn.functional
    W = lib.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4), requires_grad=True)
    opt = lib.optim.SGD([W], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    x = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    y = lib.tensor(np.ones((3, 2), dtype=np.float32))

    def reads(x, y):
        loss = F.mse_loss(x @ W.T, y)
        if variant == "penalty":
            loss = loss + sched.get_last_lr()[0] * W.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        if variant == "manual":
            lr = opt.param_groups[0]["lr"]
            with lib.no_grad():
                W.sub_(lr * W.grad)
        else:
            opt.step()
        return loss

    def plain(x, y):  # the optimizer's own step reads the rate (no read in this code)
        loss = F.mse_loss(x @ W.T, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    step = plain if variant == "plain" else reads
    run = tg.compile(step) if compiled else step
    losses = []
    for _ in range(7):
        losses.append(run(x, y).item())
        sched.step()
    return run, losses, W.detach().numpy().copy()


@pytest.mark.parametrize("variant", ["manual", "penalty"])
def test_learning_rates_the_step_reads_are_guards(variant):
    # the step's own code reads opt.param_groups[0]["lr"] / sched.get_last_lr(): those
    # numbers are guards (torch guards a float lr the same way), so a scheduler that
    # moves them re-captures and the results are eager's, torch's; a step that leaves
    # them to the optimizer's own step replays across the scheduler's moves
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (scheduler.step() before optimizer.step())
        _, want_losses, want_w = _lr_reading_run(torch, variant)
        run, losses, w = _lr_reading_run(tg, variant, compiled=True)
        plain, plain_losses, plain_w = _lr_reading_run(tg, "plain", compiled=True)
        _, ref_losses, ref_w = _lr_reading_run(torch, "plain")
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    np.testing.assert_allclose(w, want_w, rtol=1e-6, atol=1e-7)
    assert run._runner.replays == 3  # the calls at an unchanged rate replayed (2, 4, 6)
    np.testing.assert_allclose(plain_losses, ref_losses, rtol=1e-6)
    np.testing.assert_allclose(plain_w, ref_w, rtol=1e-6, atol=1e-7)
    assert plain._runner.replays == 6  # every call after the captured one


def test_rate_guards_keep_no_optimizer_the_program_dropped():
    # every live optimizer's groups are guards of a step that reads param_groups: held
    # weakly, so an optimizer (and its parameters and state) the program drops is freed
    import gc
    import weakref
    W = tg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    opt = tg.optim.SGD([W], lr=0.1)

    def step(x):
        loss = (W * x).sum()
        opt.zero_grad()
        loss.backward()
        lr = opt.param_groups[0]["lr"]
        with tg.no_grad():
            W.sub_(lr * W.grad)
        return loss
    f = tg.compile(step)
    other = tg.optim.Adam([tg.tensor(np.ones(2, dtype=np.float32), requires_grad=True)])
    gone = weakref.ref(other)
    for _ in range(3):
        f(tg.ones(3))
    assert f._runner.replays == 2
    del other
    gc.collect()
    assert gone() is None
    f(tg.ones(3))  # (its guard reads nothing now: the replay goes on)
    assert f._runner.replays == 3
    np.testing.assert_allclose(W.detach().numpy(), 1 - 0.1 * 4, rtol=1e-6)

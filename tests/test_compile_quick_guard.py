"""tg.compile's quick guard (_compile/guards.py `quick`): a call is first tested directly
against the key of the call that last replayed. It must be exactly as strict as the full
key: every change between two calls that the key sees (an argument's shape, dtype,
requires_grad, class or plain value, shared arrays, grad mode, the default dtype, a
module's state, a global read) must still be seen after a run of replays.

Each test first replays a few times (and checks that the quick path is armed: the runner
holds a `hot` entry), then makes one change and compares with PyTorch eager; the capture
count shows the change was seen (a stale quick guard would replay the old capture).
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """The eager-vs-replay timing trial (which may run calls eagerly, by the clock) off."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)


def _check(got, want, rtol=0):
    """Same dtype, requires_grad and values (a Linear's matmul may round differently
    from torch's: rtol)."""
    assert got.dtype == getattr(tg, str(want.dtype).split(".")[1])
    assert got.requires_grad == want.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=0)


def _armed(f, n=3, *args):
    """Call `f(*args)` n times (and its backward when it requires grad): the last ones
    replay, so the quick guard is armed."""
    for _ in range(n):
        out = f(*args)
        if out.requires_grad:
            out.sum().backward()
    assert f._runner.replays >= 1 and f._runner.hot is not None


X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5


def _pair(a=X, rg=False):
    return tg.tensor(a, requires_grad=rg), torch.tensor(a, requires_grad=rg)


def test_shape_dtype_class_and_requires_grad_of_an_argument():
    f = tg.compile(lambda x: (x * 2.0).tanh())
    # (made first: making a tensor that requires grad moves the structure epoch, which
    # alone would send the next call to the full key)
    calls = [_pair(a, rg)
             for a, rg in ((X, True), (X[:1], False), (X.astype(np.float64), False))]
    t, tt = _pair()
    p, tp = tg.nn.Parameter(t), torch.nn.Parameter(tt)
    n = 1
    for t, tt in calls:
        _armed(f, 3, _pair()[0])
        _check(f(t), (tt * 2.0).tanh())
        n += 1
        assert f._runner.captures == n
    _armed(f, 3, _pair()[0])
    _check(f(p), (tp * 2.0).tanh())  # another class
    assert f._runner.captures == n + 1


def test_a_plain_argument_by_value_and_type():
    f = tg.compile(lambda x, s: x * s)
    t, tt = _pair()
    _armed(f, 3, t, 2.0)
    n = f._runner.captures
    for s in (3.0, 2, True, 2.0):
        _check(f(t, s), tt * s)
    assert f._runner.captures == n + 3  # 3.0, 2 and True are new keys; 2.0 replays


def test_grad_mode_and_default_dtype():
    f = tg.compile(lambda x: x * tg.ones(3))
    t, tt = _pair(rg=True)
    _armed(f, 3, t)
    with tg.no_grad(), torch.no_grad():
        _check(f(t), tt * torch.ones(3))
    _check(f(t), tt * torch.ones(3))
    assert f._runner.captures == 2
    old = tg.get_default_dtype()
    try:
        tg.set_default_dtype(tg.float64)
        torch.set_default_dtype(torch.float64)
        _check(f(t), tt * torch.ones(3))
    finally:
        tg.set_default_dtype(old)
        torch.set_default_dtype(torch.float32)
    assert f._runner.captures == 3  # (the last one's backward never came: a capture)


def test_arguments_that_share_an_array():
    f = tg.compile(lambda a, b: (a * b).sum())
    a, ta = _pair(rg=True)
    b, tb = _pair(X + 1, rg=True)
    for _ in range(3):
        f(a, b).backward()
        a.grad = b.grad = None
    _ = f._runner.hot is not None or pytest.fail("the quick guard is not armed")
    f(a, a).backward()  # the same tensor twice: its gradient is the sum of both
    (ta * ta).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    assert f._runner.captures == 2


def test_three_arguments_two_of_which_share_an_array():
    f = tg.compile(lambda a, b, c: (a * b * c).sum())
    a, ta = _pair(rg=True)
    b, tb = _pair(X + 1, rg=True)
    c, tc = _pair(X - 1, rg=True)
    for _ in range(3):
        f(a, b, c).backward()
        a.grad = b.grad = c.grad = None
    _ = f._runner.hot is not None or pytest.fail("the quick guard is not armed")
    f(a, b, a).backward()
    (ta * tb * ta).sum().backward()
    for x, xt in ((a, ta), (b, tb)):
        np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    assert f._runner.captures == 2


def test_a_global_read_changes():
    global SCALE
    SCALE = 2.0
    f = tg.compile(lambda x: x * SCALE)
    t, tt = _pair()
    _armed(f, 3, t)
    SCALE = 5.0
    _check(f(t), tt * 5.0)
    SCALE = 2.0
    _check(f(t), tt * 2.0)
    assert f._runner.captures == 2


SCALE = 2.0


def _model():
    tg.manual_seed(0)
    m = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Dropout(0.0), tg.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.0),
                                 torch.nn.Linear(4, 2))
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in m.state_dict().items()})
    return m, theirs


@pytest.mark.parametrize("change", ["eval", "requires_grad", "attribute", "hook",
                                    "data"])
def test_a_compiled_module_whose_state_changes(change):
    m, theirs = _model()
    f = tg.compile(m)
    t, tt = _pair()
    _armed(f, 3, t)
    n = f._runner.captures
    if change == "eval":
        m.eval(), theirs.eval()
    elif change == "requires_grad":
        m[0].weight.requires_grad_(False), theirs[0].weight.requires_grad_(False)
    elif change == "attribute":
        m[1].p = theirs[1].p = 1.0  # dropout's p: every value zeroed
    elif change == "hook":
        m[2].register_forward_hook(lambda mod, i, o: o * 3.0)
        theirs[2].register_forward_hook(lambda mod, i, o: o * 3.0)
    else:  # the parameters' arrays replaced: the hidden layer grows from 4 to 5
        w = np.linspace(-1, 1, 15, dtype=np.float32)
        for mod, a in ((m, tg.tensor), (theirs, torch.tensor)):
            mod[0].weight.data = a(w.reshape(5, 3))
            mod[0].bias.data = a(w[:5])
            mod[2].weight.data = a(w[:10].reshape(2, 5))
    replays = f._runner.replays
    _check(f(t), theirs(tt), rtol=1e-6)
    assert f._runner.captures == n + (change != "hook")  # (a forward hook: eager)
    assert f._runner.replays == replays


def test_a_parameter_read_as_a_global_replaced_by_another_shape():
    w = tg.tensor(np.ones((3, 2), np.float32), requires_grad=True)
    f = tg.compile(lambda x: x @ w)
    t, tt = _pair()
    _armed(f, 3, t)
    n = f._runner.captures
    w.data = tg.tensor(np.full((3, 5), 0.5, np.float32))
    _check(f(t), (tt @ torch.full((3, 5), 0.5)).requires_grad_())
    assert f._runner.captures == n + 1


def test_the_first_variant_of_a_key_is_taken_as_the_lookup_would():
    """Two captures under one key (a global's two values): alternating between them
    replays each (the quick guard holds one; the other goes through the lookup)."""
    global SCALE
    f = tg.compile(lambda x: x * SCALE)
    t, tt = _pair()
    for s in (2.0, 2.0, 3.0, 3.0, 2.0, 3.0, 2.0, 2.0, 3.0):
        SCALE = s
        _check(f(t), tt * s)
    assert f._runner.captures == 2 and f._runner.replays == 7
    SCALE = 2.0


def test_a_call_with_keywords_or_containers_takes_the_lookup():
    f = tg.compile(lambda x, scale=1.0: x * scale)
    t, tt = _pair()
    for s in (2.0, 2.0, 2.0, 4.0):
        _check(f(t, scale=s), tt * s)
    assert f._runner.hot is None and f._runner.replays == 2
    g = tg.compile(lambda xs: xs[0] + xs[1])
    for _ in range(3):
        _check(g([t, t]), tt + tt)
    assert g._runner.hot is None and g._runner.replays == 2


def test_a_gradient_hook_registered_between_replays_runs():
    # tensor hooks move no guard: the generated hand-off tests each leaf for hooks (a
    # fresh total included) and sends a hooked one through the engine, as eager
    w = tg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    b = tg.tensor(np.zeros(4, np.float32), requires_grad=True)
    wt, bt = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (w, b))

    x = tg.tensor(X)

    def step():
        loss = ((x @ w + b).tanh() ** 2).sum()
        loss.backward()
        return loss
    f = tg.compile(step)
    for _ in range(3):
        w.grad = b.grad = None
        f()
    assert f._runner.hot is not None
    seen = []
    w.register_hook(lambda g: seen.append(1) or g * 2.0)
    b.register_post_accumulate_grad_hook(lambda p: seen.append(2))
    w.grad = b.grad = None
    f()
    wt.register_hook(lambda g: g * 2.0)
    ((torch.tensor(X) @ wt + bt).tanh() ** 2).sum().backward()
    assert seen == [1, 2] or seen == [2, 1]
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5)  # (float32 tanh)
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-5)
    assert f._runner.replays == 3

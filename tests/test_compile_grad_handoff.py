"""The engine hands a gradient to `.grad` by identity (issue 30): a fresh array the engine
made may become `.grad` as it is; an array from outside (a seed the caller passed, what a
hook or a custom Function's backward returned, one array two leaves received) is copied.
The old test, `sys.getrefcount`, gave the caller's array away once the core is compiled
(Cython/mypyc count references differently): `.grad` then shared memory with `g`."""
import inspect

import numpy as np
import torch

import tapegrad as tg
from tapegrad.core import engine


def _shares(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


def test_backward_twice_with_the_callers_gradient_never_aliases_it():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g = tg.tensor([0.5, -1.0, 2.0])
    xt = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    gt = torch.tensor([0.5, -1.0, 2.0])
    x.backward(g)
    assert not _shares(x.grad, g)
    x.backward(g)
    xt.backward(gt)
    xt.backward(gt)
    assert not _shares(x.grad, g)
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    np.testing.assert_array_equal(g.numpy(), gt.numpy())  # the caller's g is unchanged


def test_a_gradient_passed_through_to_a_leaf_is_copied():
    # clone's and add's rules return g itself: g is the caller's array
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    g = tg.tensor([3.0, 4.0])
    x.clone().backward(g)
    assert not _shares(x.grad, g)
    y = tg.tensor([1.0, 2.0], requires_grad=True)
    z = tg.tensor([5.0, 6.0], requires_grad=True)
    (y + z).backward(g)
    assert not _shares(y.grad, g) and not _shares(z.grad, g)
    assert not _shares(y.grad, z.grad)
    y.backward(g)
    np.testing.assert_array_equal(y.grad.numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(z.grad.numpy(), [3.0, 4.0])


def test_one_array_two_leaves_received_is_not_shared_between_their_grads():
    y = tg.tensor([1.0, 2.0], requires_grad=True)
    z = tg.tensor([5.0, 6.0], requires_grad=True)
    (y + z).sum().backward()  # add's rule hands both inputs the same array
    assert not _shares(y.grad, z.grad)
    y.grad.add_(1.0)
    np.testing.assert_array_equal(z.grad.numpy(), [1.0, 1.0])


def test_what_a_custom_function_or_a_hook_returns_is_copied():
    kept = tg.tensor([7.0, 8.0])

    class Keep(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return kept

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    Keep.apply(x).sum().backward()
    assert not _shares(x.grad, kept)
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 8.0])

    w = tg.tensor([1.0, 2.0], requires_grad=True)
    h = w * 1.0
    h.register_hook(lambda grad: kept)
    h.sum().backward()
    assert not _shares(w.grad, kept)
    np.testing.assert_array_equal(w.grad.numpy(), [7.0, 8.0])


def test_retain_graph_gradients_match_torch_and_do_not_alias():
    x = tg.tensor([1.0, -2.0, 3.0], requires_grad=True, dtype=tg.float64)
    xt = torch.tensor([1.0, -2.0, 3.0], requires_grad=True, dtype=torch.float64)
    y = (x.exp() * x).sum()
    yt = (xt.exp() * xt).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    yt.backward(retain_graph=True)
    yt.backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    assert not _shares(first, x.grad)


def test_the_engine_does_not_decide_by_reference_counts():
    # the hand-off must not depend on how the interpreter counts references
    assert "getrefcount" not in inspect.getsource(engine)


def test_a_compiled_replay_hands_one_array_two_leaves_received_to_one_only(monkeypatch):
    # clone's rule returns the gradient itself, and add's passes it on to both clones: in
    # the generated hand-off, two leaves' totals are one array under two names (the
    # replay's identity check sends them through the engine, which copies); c's is its own
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)  # (replays only)
    a, b, c = (tg.tensor(v, requires_grad=True) for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]))
    at, bt, ct = (torch.tensor(v, requires_grad=True)
                  for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]))

    @tg.compile
    def step():
        loss = (a.clone() + b.clone() + c * 2.0).sum()
        loss.backward()
        return loss
    (at.clone() + bt.clone() + ct * 2.0).sum().backward()
    for _ in range(4):
        a.grad = b.grad = c.grad = None
        step()
        assert not _shares(a.grad, b.grad)
        for x, xt in ((a, at), (b, bt), (c, ct)):
            np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    assert step._runner.replays == 3  # (the first call captures)


def test_every_grad_a_compiled_step_hands_off_owns_its_memory(monkeypatch):
    # as the engine's: a gradient becomes .grad as it is only when it owns its memory
    # (the sums of a linear's bias and a 1-D layer norm's weight), a view is copied (the
    # (4, 5) layer norm's weight sum reshaped); the values are eager's
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)
    x = tg.tensor(np.linspace(-1, 1, 3 * 2 * 4 * 5, dtype=np.float32).reshape(3, 2, 4, 5))

    def make():
        tg.manual_seed(0)
        return tg.nn.Sequential(tg.nn.LayerNorm((4, 5)), tg.nn.Linear(5, 5),
                                tg.nn.LayerNorm(5))

    def step_of(model, opt):
        def step():
            opt.zero_grad()
            loss = model(x).square().sum()
            loss.backward()
            return loss
        return step
    models = [make(), make()]
    opts = [tg.optim.SGD(m.parameters(), lr=0.0) for m in models]
    eager, compiled = step_of(models[0], opts[0]), tg.compile(step_of(models[1], opts[1]))
    for _ in range(4):
        eager()
        compiled()
    assert compiled._runner.replays == 3
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert q.grad._data.base is None and p.grad._data.base is None
        np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())


def test_a_broadcast_bias_gradient_summed_is_handed_off_as_the_engine_does(monkeypatch):
    # `x @ w + b` with b of shape (5,) (axes added) and (1, 5) (an axis stretched): the
    # fitted sums are new arrays, stolen into .grad; a (2, 5) c reaches its grad as is
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)
    r = np.random.default_rng(0)
    x = tg.tensor(r.standard_normal((2, 3, 4)).astype(np.float32))
    init = [r.standard_normal(s).astype(np.float32) for s in ((4, 5), (5,), (1, 5), (2, 1, 5))]

    def step_of(w, b, b2, c):
        def step():  # (the tensors as closure variables: guarded, as a list's are not)
            loss = ((x @ w + b + b2) * c).sum()
            loss.backward()
            return loss
        return step
    sides = [[tg.tensor(a, requires_grad=True) for a in init] for _ in range(2)]
    eager, compiled = step_of(*sides[0]), tg.compile(step_of(*sides[1]))
    for _ in range(4):
        for ps in sides:
            for p in ps:
                p.grad = None
        eager()
        compiled()
    assert compiled._runner.replays == 3
    for p, q in zip(*sides):
        assert q.grad._data.base is None and p.grad._data.base is None
        np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())

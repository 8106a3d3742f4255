"""The five wrong results of issue 11 and issue 12 item 8, each checked against torch.

1. custom Functions that save outputs / return intermediates: double backward, gradgradcheck
2. nested func transforms: jacrev(jacfwd), jacfwd(jacfwd), jacrev(jacrev), hessian of vectors
3. a saved input changed in place after a retained backward: torch's version error
4. saved tensors freed after backward (kept with retain_graph), checkpoint's too
5. grad mode (and anomaly/strict mode) per thread; two threads' backward at once
6. no reference cycles from a training step
7. unpack_dual(make_dual(p, t)).tangent is t

The same class bodies and programs run on both libraries (`L` is tapegrad or torch).
"""
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.utils.checkpoint import checkpoint as tg_checkpoint
from torch.utils.checkpoint import checkpoint as torch_checkpoint

from _helpers import assert_close, to_numpy

LIBS = (tg, torch)


# ---- 1. custom Functions under create_graph --------------------------------------------
def _functions(L):
    class Exp(L.autograd.Function):
        """The PyTorch docs' example: saves its OUTPUT."""

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Cube(L.autograd.Function):
        """Returns an intermediate (dx = 3x^2) as an output and saves it (setup_context
        style, as in PyTorch's double-backward tutorial); backward uses both grads."""

        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, g, g_dx):
            x, dx = ctx.saved_tensors
            return g * dx + g_dx * 6 * x

    class SinCos(L.autograd.Function):
        """Two outputs, both saved; backward combines both incoming gradients."""

        @staticmethod
        def forward(ctx, x, y):
            s, c = (x * y).sin(), (x * y).cos()
            ctx.save_for_backward(x, y, s, c)
            return s, c

        @staticmethod
        def backward(ctx, gs, gc_):
            x, y, s, c = ctx.saved_tensors
            d = gs * c - gc_ * s
            return d * y, d * x

    class ExpInplace(L.autograd.Function):
        """Changes its input in place (mark_dirty) and saves the result."""

        @staticmethod
        def forward(ctx, x):
            x.exp_()
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return {
        "Exp": (lambda x, y: Exp.apply(x * y)),
        "Cube": (lambda x, y: sum(o.sin() for o in Cube.apply(x + y))),
        "SinCos": (lambda x, y: SinCos.apply(x, y)[0] * SinCos.apply(y, x)[1] ** 2),
        "ExpInplace": (lambda x, y: ExpInplace.apply(x * y) * x),
    }


def _inputs(L):
    x = L.tensor([[0.3, -0.7, 1.1], [0.5, 0.2, -1.3]], dtype=L.float64, requires_grad=True)
    y = L.tensor([0.9, -0.4, 0.6], dtype=L.float64, requires_grad=True)
    return x, y


@pytest.mark.parametrize("name", ["Exp", "Cube", "SinCos", "ExpInplace"])
def test_function_double_backward_matches_torch(name):
    got = {}
    for L in LIBS:
        f = _functions(L)[name]
        x, y = _inputs(L)
        out = f(x, y)
        v = L.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=L.float64)
        gx, gy = L.autograd.grad((out * v).sum(), (x, y), create_graph=True)
        assert gx.requires_grad and gy.requires_grad and gx.grad_fn is not None
        hx, hy = L.autograd.grad((gx * gx).sum() + (gy * x).sum(), (x, y))
        got[L] = (out, gx, gy, hx, hy)
    for a, b in zip(got[tg], got[torch]):
        assert_close(a, b)


@pytest.mark.parametrize("name", ["Exp", "Cube", "SinCos", "ExpInplace"])
def test_function_gradgradcheck(name):
    for L in LIBS:
        f = _functions(L)[name]
        assert L.autograd.gradcheck(f, _inputs(L))
        assert L.autograd.gradgradcheck(f, _inputs(L))


def test_function_hessian_matches_torch():
    got = {}
    for L in LIBS:
        f = _functions(L)["Cube"]
        x = L.tensor([0.3, -0.7, 1.1], dtype=L.float64)
        got[L] = L.autograd.functional.hessian(lambda x: f(x, x.flip(0)).sum(), x)
    assert_close(got[tg], got[torch])


def test_function_float32_double_backward():
    got = {}
    for L in LIBS:
        x = L.tensor([0.3, -0.7, 1.1], requires_grad=True)
        (g,) = L.autograd.grad(_functions(L)["Exp"](x, x).sum(), x, create_graph=True)
        (h,) = L.autograd.grad(g.sum(), x)
        assert g.dtype == L.float32 and h.dtype == L.float32
        got[L] = (g, h)
    for a, b in zip(got[tg], got[torch]):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


# ---- 2. nested function transforms ------------------------------------------------------
_FUNCS = {
    "cubesum": lambda W, x: (x ** 3).sum(),
    "vector": lambda W, x: x ** 3 * x.sin().flip(0),
    "mlp": lambda W, x: ((W @ x).tanh() * 2).softmax(-1),
    "lse": lambda W, x: (W * x).logsumexp(1) + (W.sum() * x).sigmoid().sum(),
    "matrix": lambda W, x: (W.t() @ W) @ x.exp(),
}

_NESTINGS = {
    "jacrev(jacfwd)": lambda F, f, n: F.jacrev(F.jacfwd(f, argnums=n), argnums=n),
    "jacfwd(jacfwd)": lambda F, f, n: F.jacfwd(F.jacfwd(f, argnums=n), argnums=n),
    "jacrev(jacrev)": lambda F, f, n: F.jacrev(F.jacrev(f, argnums=n), argnums=n),
    "jacfwd(jacrev)": lambda F, f, n: F.jacfwd(F.jacrev(f, argnums=n), argnums=n),
    "hessian": lambda F, f, n: F.hessian(f, argnums=n),
}


def test_issue_example_jacrev_of_jacfwd():
    x = tg.tensor([1., 2.])
    h = tg.func.jacrev(tg.func.jacfwd(lambda x: (x ** 3).sum()))(x)
    th = torch.func.jacrev(torch.func.jacfwd(lambda x: (x ** 3).sum()))(torch.tensor([1., 2.]))
    assert_close(h, th)
    np.testing.assert_array_equal(to_numpy(h), [[6., 0.], [0., 12.]])


@pytest.mark.parametrize("nesting", list(_NESTINGS))
@pytest.mark.parametrize("fname", list(_FUNCS))
@pytest.mark.parametrize("argnum", [0, 1])
def test_nested_jacobians_match_torch_func(nesting, fname, argnum):
    got = {}
    for L, F in ((tg, tg.func), (torch, torch.func)):
        W = L.tensor(np.arange(6.).reshape(2, 3) / 7 - 0.3, dtype=L.float64)
        x = L.tensor([0.3, -1.2, 0.7], dtype=L.float64)
        got[L] = _NESTINGS[nesting](F, _FUNCS[fname], argnum)(W, x)
    assert tuple(got[tg].shape) == tuple(got[torch].shape)
    assert_close(got[tg], got[torch])


def test_hessian_of_vector_output_float32():
    got = {}
    for L, F in ((tg, tg.func), (torch, torch.func)):
        x = L.tensor([0.3, -1.2, 0.7])
        got[L] = F.hessian(lambda x: x.tanh() * x.sum())(x)
    assert tuple(got[tg].shape) == (3, 3, 3)
    assert_close(got[tg], got[torch], rtol=1e-5, atol=1e-6)


# ---- 3. in-place change after a retained backward ----------------------------------------
def _saving_function(L):
    class MyFunction(L.autograd.Function):
        @staticmethod
        def forward(ctx, w):
            ctx.save_for_backward(w)
            return w * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return 2 * g * w

    return MyFunction


def test_saved_input_changed_after_retained_backward_raises():
    grads = {}
    for L in LIBS:
        w = L.tensor([1., 2., 3.], requires_grad=True)
        y = _saving_function(L).apply(w).sum()
        y.backward(retain_graph=True)
        with L.no_grad():
            w.mul_(10)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        grads[L] = w.grad
    assert_close(grads[tg], grads[torch])  # the failed pass accumulated nothing


def test_saved_output_changed_after_retained_backward_raises():
    for L in LIBS:
        x = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
        y = _functions(L)["Exp"](x, 1.0)
        s = (y * 3).sum()
        s.backward(retain_graph=True)
        with L.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.backward()


def test_unsaved_input_changed_in_place_second_backward_matches_torch():
    """A Function that saves nothing does not care: both passes accumulate (torch too)."""

    grads = {}
    for L in LIBS:
        class Twice(L.autograd.Function):
            @staticmethod
            def forward(ctx, w):
                return w * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        w = L.tensor([1., 2.], requires_grad=True)
        y = Twice.apply(w).sum()
        y.backward(retain_graph=True)
        with L.no_grad():
            w.mul_(10)
        y.backward()
        grads[L] = w.grad
    assert_close(grads[tg], grads[torch])


# ---- 4. saved tensors freed after backward ---------------------------------------------
def _weak_saver(L, refs):
    class Save(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            t = x * 3
            ctx.save_for_backward(t, x)
            refs.append(weakref.ref(t))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            t, x = ctx.saved_tensors
            return g * t

    return Save


@pytest.mark.parametrize("how", ["backward", "grad"])
@pytest.mark.parametrize("retain", [False, True])
def test_function_saved_tensors_freed_after_backward(how, retain):
    alive = {}
    for L in LIBS:
        refs = []
        x = L.tensor([1., 2.], requires_grad=True)
        out = _weak_saver(L, refs).apply(x)
        assert refs[0]() is not None
        if how == "backward":
            out.sum().backward(retain_graph=retain)
        else:
            L.autograd.grad(out.sum(), x, retain_graph=retain)
        after = refs[0]() is not None
        del out
        alive[L] = (after, refs[0]() is not None)
    assert alive[tg] == alive[torch] == (retain, False)


def test_checkpoint_saved_input_freed_after_backward():
    alive = {}
    for L, cp in ((tg, tg_checkpoint), (torch, torch_checkpoint)):
        x = L.tensor([0.1, 0.2, 0.3], requires_grad=True)
        h = x * 2
        ref = weakref.ref(h)
        y = cp(lambda a: a.sin() * a, h, use_reentrant=False)
        del h
        before = ref() is not None
        y.sum().backward()
        alive[L] = (before, ref() is not None)
    assert alive[tg] == alive[torch] == (True, False)


# ---- 5. grad mode per thread --------------------------------------------------------------
N_ITER = 200


def _pair(target_a, target_b):
    errors = []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # report in the main thread
                errors.append(e)
                bar.abort()
        return run

    bar = threading.Barrier(2, timeout=60)
    threads = [threading.Thread(target=guard(lambda: target_a(bar))),
               threading.Thread(target=guard(lambda: target_b(bar)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_no_grad_in_one_thread_does_not_stop_recording_in_another():
    seen = {"recorded": 0, "off": 0, "modes": []}

    def sitter(bar):
        for _ in range(N_ITER):
            with tg.no_grad():
                bar.wait()  # the other thread records now, while this one is in no_grad
                seen["off"] += tg.tensor([1.], requires_grad=True).mul(2).grad_fn is None
                bar.wait()
        seen["modes"].append(tg.is_grad_enabled())

    def recorder(bar):
        x = tg.tensor([1., 2.], requires_grad=True)
        for _ in range(N_ITER):
            bar.wait()
            seen["recorded"] += (x * 3).grad_fn is not None
            bar.wait()
        seen["modes"].append(tg.is_grad_enabled())

    _pair(sitter, recorder)
    assert seen["recorded"] == seen["off"] == N_ITER
    assert seen["modes"] == [True, True] and tg.is_grad_enabled()


def test_backward_in_one_thread_does_not_stop_recording_in_another():
    """A hook that waits mid-walk holds one thread inside backward (where its grad mode
    is off, as in torch) while the other records."""
    in_hook = {}
    for L in LIBS:
        x = L.tensor([1., 2.], requires_grad=True)
        h = x * 2
        def look(g, L=L):
            in_hook[L] = L.is_grad_enabled()
        h.register_hook(look)
        (h * h).sum().backward()
    assert in_hook[tg] == in_hook[torch] is False

    seen = {"recorded": 0, "grads": []}

    def walker(bar):
        x = tg.tensor([1., 2.], requires_grad=True)
        for _ in range(N_ITER):
            h = x * 2

            def hook(g):
                bar.wait()
                bar.wait()
            h.register_hook(hook)
            (h * h).sum().backward()
            seen["grads"].append(x.grad.numpy().copy())
            x.grad = None

    def recorder(bar):
        x = tg.tensor([1., 2.], requires_grad=True)
        for _ in range(N_ITER):
            bar.wait()
            seen["recorded"] += (x.exp() * x).grad_fn is not None
            bar.wait()

    _pair(walker, recorder)
    assert seen["recorded"] == N_ITER
    np.testing.assert_array_equal(np.array(seen["grads"]), np.tile([8., 16.], (N_ITER, 1)))
    assert tg.is_grad_enabled()


def test_grad_mode_of_a_thread_stays_in_that_thread():
    modes = {}
    for L in LIBS:
        def switch_off():
            L.set_grad_enabled(False)
            modes[(L, "inside")] = L.is_grad_enabled()

        t = threading.Thread(target=switch_off)
        t.start()
        t.join()
        with L.no_grad():  # a new thread starts with grad mode on, whatever its parent's
            t = threading.Thread(target=lambda: modes.setdefault((L, "child"),
                                                                 L.is_grad_enabled()))
            t.start()
            t.join()
        modes[(L, "main")] = L.is_grad_enabled()
    for L in LIBS:
        assert (modes[(L, "inside")], modes[(L, "child")], modes[(L, "main")]) == \
            (False, True, True)


def _mlp_grads(L, seed, retain_hook=None):
    rng = np.random.default_rng(seed)
    W1 = L.tensor(rng.normal(size=(6, 4)), requires_grad=True)
    W2 = L.tensor(rng.normal(size=(1, 6)), requires_grad=True)
    x = L.tensor(rng.normal(size=(5, 4)))
    h = (x @ W1.t()).tanh()
    if retain_hook is not None:
        h.register_hook(retain_hook)
    loss = ((h @ W2.t()) ** 2).mean() + _functions(L)["Exp"](W1, 0.1).sum()
    loss.backward()
    return W1.grad, W2.grad


def test_two_threads_run_backward_at_once():
    expect = {seed: _mlp_grads(torch, seed) for seed in (1, 2)}
    got = {1: [], 2: []}
    rounds = 50

    def worker(seed):
        def run(bar):
            for _ in range(rounds):
                # both walks stop halfway at the same time: they overlap
                got[seed].append(_mlp_grads(tg, seed, lambda g: (bar.wait(), g)[1]))
        return run

    _pair(worker(1), worker(2))
    for seed in (1, 2):
        assert len(got[seed]) == rounds
        for g1, g2 in got[seed]:
            assert_close(g1, expect[seed][0])
            assert_close(g2, expect[seed][1])


def test_anomaly_and_strict_mode_are_per_thread():
    """Documented in autograd/anomaly.py: unlike PyTorch's process-wide anomaly flag,
    tapegrad keeps anomaly (and strict) mode in the thread's state."""
    seen = {}

    def nan_backward():
        x = tg.tensor([0.0], requires_grad=True)
        tg.sqrt(x * x).sum().backward()  # 0 * inf: nan in the gradient
        return bool(np.isnan(x.grad.numpy()).all())

    def other(bar):
        bar.wait()
        seen["anomaly"] = tg.autograd.is_anomaly_enabled()
        seen["strict"] = tg.autograd.is_strict_enabled()
        seen["nan"] = nan_backward()  # no anomaly error here
        bar.wait()

    def anomalous(bar):
        with pytest.warns(UserWarning), tg.autograd.detect_anomaly(), \
                tg.autograd.strict():
            bar.wait()
            bar.wait()
            with pytest.raises(RuntimeError, match="returned inf"):
                nan_backward()
        seen["after"] = tg.autograd.is_anomaly_enabled()

    _pair(anomalous, other)
    assert seen == {"anomaly": False, "strict": False, "nan": True, "after": False}
    assert not tg.autograd.is_anomaly_enabled() and not tg.autograd.is_strict_enabled()


def test_anomaly_mode_entered_in_two_threads_is_left_cleanly():
    """Both threads switch it on and off, interleaved: each ends with it fully off
    (a shared flag with per-thread observers once left one thread half enabled)."""
    after = []

    def user(first):
        def run(bar):
            if not first:
                bar.wait()
            with pytest.warns(UserWarning), tg.autograd.detect_anomaly():
                if first:
                    bar.wait()
                bar.wait()
                x = tg.tensor([-1.0], requires_grad=True)
                with pytest.raises(RuntimeError, match="sqrt"):
                    tg.sqrt(x).sum().backward()
            bar.wait()
            x = tg.tensor([-1.0], requires_grad=True)
            tg.sqrt(x).sum().backward()  # no error: anomaly mode is off again
            after.append((tg.autograd.is_anomaly_enabled(), tg.tensor([1.], requires_grad=True)
                          .mul(2).grad_fn.site))
        return run

    _pair(user(True), user(False))
    assert after == [(False, None), (False, None)]


# ---- 6. no reference cycles ----------------------------------------------------------------
def test_training_step_leaves_no_reference_cycles():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 1))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].weight.register_hook(lambda g: g * 1.0)
    fns = _functions(tg)
    refs = []

    def step(double):
        x = tg.randn(5, 4)
        h = model[0](x)
        h.retain_grad()
        h.register_hook(lambda g: g)
        h = fns["Cube"](fns["Exp"](h, 0.1), 0.0) + fns["SinCos"](h, h)
        h = tg_checkpoint(lambda t: model[2](model[1](t)), h, use_reentrant=False)
        refs.append(weakref.ref(h))
        loss = h.pow(2).mean()
        opt.zero_grad()
        if double:
            (g,) = tg.autograd.grad(loss, model[0].weight, create_graph=True)
            g.pow(2).sum().backward()
        else:
            loss.backward()
        opt.step()

    gc.collect()
    gc.disable()
    try:
        for double in (False, True, False):
            step(double)
            assert gc.collect() == 0
            assert refs[-1]() is None  # freed by reference counting alone
    finally:
        gc.enable()
        handle.remove()


# ---- 7. forward-mode identity ----------------------------------------------------------------
def test_unpack_dual_returns_the_tangent_given():
    for L in LIBS:
        fwAD = L.autograd.forward_ad
        p, t = L.randn(3), L.randn(3)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t)
            assert fwAD.unpack_dual(d).tangent is t  # PyTorch's forward-AD tutorial
            assert fwAD.unpack_dual(d).tangent is fwAD.unpack_dual(d).tangent
            y = d.sin() * 2
            assert fwAD.unpack_dual(y).tangent is fwAD.unpack_dual(y).tangent
            assert fwAD.unpack_dual(d).primal is not p
            with L.no_grad():
                t.mul_(100)  # shares memory with the dual's tangent (no copy)
            assert_close(fwAD.unpack_dual(d).tangent, t)
        assert fwAD.unpack_dual(d).tangent is None


def test_unpack_dual_after_tangent_data_reassigned():
    fwAD = tg.autograd.forward_ad
    p, t = tg.randn(3), tg.randn(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, t)
        old = t.numpy(force=True)
        t.data = np.zeros(3, np.float32)  # t no longer shows the dual's tangent
        tan = fwAD.unpack_dual(d).tangent
        assert tan is not t and tan.numpy() is not None
        np.testing.assert_array_equal(tan.numpy(), old)

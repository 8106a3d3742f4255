"""Grad mode, anomaly mode and strict mode are per thread (as torch's thread-local state):
no_grad or a backward in one thread does not stop recording in another; two threads run
backward at once and get torch's gradients. Every wait is bounded (a barrier timeout).
"""
import threading

import numpy as np
import pytest
import torch

import tapegrad as tg

from _custom_functions import functions
from _helpers import assert_close


LIBS = (tg, torch)


# ---- grad mode per thread --------------------------------------------------------------
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
    loss = ((h @ W2.t()) ** 2).mean() + functions(L)["Exp"](W1, 0.1).sum()
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

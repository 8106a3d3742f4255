"""Benchmark: one training step of the character models, as time ratios.

  makemore MLP (emb 10, block 3, hidden 200, BatchNorm, tanh, batch 32):
      tapegrad vs a hand-written NumPy forward/backward/SGD step (target: <= 1.3x)
  tiny GPT (2 layers, n_embd 64, 4 heads, T 16, batch 32, AdamW):
      tapegrad vs the same model in PyTorch CPU (target: <= 2x)

Usage: python bench/bench_char.py [--threads 1] [--reps 200] [--default-malloc]

As bench_conv.py, the bench calls tapegrad._alloc.keep_freed_memory() (glibc's mmap and
trim thresholds raised) for the whole process, so BOTH columns run with it: PyTorch's CPU
allocator gets its memory from the same glibc malloc. Measured (GPT step, CPU time, 1
thread, shared machine): tapegrad 15.2 -> 12.6 ms with it, torch 12.3 -> 12.3 ms (its
kernels allocate fewer fresh temporaries). --default-malloc keeps glibc's defaults.
"""
import argparse
import functools
import os
import sys

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=1)
_p.add_argument("--reps", type=int, default=200)
_p.add_argument("--default-malloc", action="store_true",
                help="keep glibc's default malloc thresholds (by default the bench calls "
                     "tapegrad._alloc.keep_freed_memory(), which applies to both columns)")
ARGS = _p.parse_args() if __name__ == "__main__" else _p.parse_args([])
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)

import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tapegrad as tg  # noqa: E402
from tapegrad.train.char_models import GPT, MakemoreMLP  # noqa: E402

torch.set_num_threads(ARGS.threads)
B, BLOCK, EMB, HID, V = 32, 3, 10, 200, 27


def best_of_each(fns, reps, rounds=20, clock=time.perf_counter, before_round=None):
    """{name: seconds per call} of several callables timed in turns: `rounds` rounds of
    `reps` calls of each, the order rotated by one every round (two sides: which goes
    first swaps), the min per callable. This machine's speed drifts by up to a third
    within minutes, also when idle: timed one after the other, the sides can see
    different machines; in turns, all see the same. `before_round`: called before each
    round (bench/run.py passes gc.collect)."""
    names = list(fns)
    for fn in fns.values():
        fn()  # warm up
    best = dict.fromkeys(names, float("inf"))
    for r in range(rounds):
        if before_round is not None:
            before_round()
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = fns[name]
            t = clock()
            for _ in range(reps):
                fn()
            best[name] = min(best[name], (clock() - t) / reps)
    return best


def paired_best(fa, fb, reps, rounds=20, clock=time.perf_counter):
    """(seconds per call of fa, of fb), timed in turns: `best_of_each` of the two."""
    t = best_of_each({0: fa, 1: fb}, reps, rounds, clock)
    return t[0], t[1]


# ---- makemore MLP ------------------------------------------------------------------------
def numpy_mlp_step(P, X, Y, lr=0.1, eps=1e-5):
    """Forward, the fused backward formulas, and SGD, written by hand in NumPy."""
    n = X.shape[0]
    emb = P["C"][X].reshape(n, -1)                                       # (n, 30)
    hpre = emb @ P["W1"].T                                               # (n, H)
    mu = hpre.mean(0)
    var = hpre.var(0)
    inv = 1.0 / np.sqrt(var + eps)
    raw = (hpre - mu) * inv
    h = np.tanh(P["gamma"] * raw + P["beta"])
    logits = h @ P["W2"].T + P["b2"]                                     # (n, 27)
    z = logits - logits.max(1, keepdims=True)
    e = np.exp(z)
    s = e / e.sum(1, keepdims=True)
    loss = -np.log(s[np.arange(n), Y]).mean()
    d = s
    d[np.arange(n), Y] -= 1
    d /= n                                                               # dlogits
    G = {"W2": d.T @ h, "b2": d.sum(0)}
    dh = d @ P["W2"]
    dpre = (1 - h * h) * dh
    G["gamma"] = (dpre * raw).sum(0)
    G["beta"] = dpre.sum(0)
    dr = dpre * P["gamma"]
    dhpre = inv / n * (n * dr - dr.sum(0) - raw * (dr * raw).sum(0))
    G["W1"] = dhpre.T @ emb
    demb = (dhpre @ P["W1"]).reshape(n, BLOCK, EMB)
    G["C"] = np.zeros_like(P["C"])
    np.add.at(G["C"], X, demb)
    for k, g in G.items():
        P[k] -= lr * g
    return loss


def mlp_steps(compiled=False):
    """(tapegrad step, hand-written NumPy step) of the makemore MLP, same weights and data
    (`compiled`: True, the model through tg.compile, bench/run.py's (e') row; "step", the
    whole training step through tg.compile (forward, loss, backward, SGD), (e''))."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, V, (B, BLOCK))
    Y = rng.integers(0, V, B)
    model = MakemoreMLP(V, BLOCK, EMB, HID)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    Xt, Yt = tg.tensor(X), tg.tensor(Y)
    called = tg.compile(model) if compiled is True else model

    def step(Xt, Yt):
        loss = tg.nn.functional.cross_entropy(called(Xt), Yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    if compiled == "step":
        step = tg.compile(step)

    def tg_step():
        step(Xt, Yt)

    def arr(p):
        return p.detach().numpy().copy()
    P = {"C": arr(model.C.weight), "W1": arr(model.hidden.weight),
         "gamma": arr(model.bn.weight), "beta": arr(model.bn.bias),
         "W2": arr(model.out.weight), "b2": arr(model.out.bias)}
    return tg_step, lambda: numpy_mlp_step(P, X, Y)


def bench_mlp(reps):
    """(tapegrad, numpy) seconds per step, interleaved: 20 rounds of reps // 4 steps."""
    tg_step, np_step = mlp_steps()
    return paired_best(tg_step, np_step, max(1, reps // 4))


# ---- tiny GPT ----------------------------------------------------------------------------
def gpt_steps():
    """{name: step} of the tiny GPT, same weights and data: tapegrad eager, its model
    through tg.compile (as nanoGPT's `model = torch.compile(model)`), the whole step
    through tg.compile, and PyTorch (bench/run.py's (f) rows, timed in one interleaved
    run by `best_of_each`)."""
    from test_char_models import TorchGPT  # the PyTorch twin used by the tests
    T = 16
    rng = np.random.default_rng(0)
    X = rng.integers(0, V, (B, T))
    Y = rng.integers(0, V, (B, T))
    Xt, Yt = tg.tensor(X), tg.tensor(Y.reshape(-1))
    Xp, Yp = torch.tensor(X), torch.tensor(Y.reshape(-1))
    steps = {}
    first = None
    for name in ("tapegrad", "tapegrad, tg.compile(model)", "tapegrad, tg.compile(step)"):
        tg.manual_seed(0)
        model = GPT(V, T, n_layer=2, n_embd=64, n_head=4)
        first = first or model
        opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
        called = tg.compile(model) if name.endswith("(model)") else model

        def step(Xt, Yt, called=called, model=model, opt=opt):
            loss = tg.nn.functional.cross_entropy(called(Xt).reshape(-1, V), Yt)
            opt.zero_grad()
            loss.backward()
            tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss
        if name.endswith("(step)"):
            step = tg.compile(step)
        steps[name] = functools.partial(step, Xt, Yt)
    theirs = TorchGPT(V, T, n_layer=2, n_embd=64, n_head=4)
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy().copy())
                            for k, v in first.state_dict().items()})
    topt = torch.optim.AdamW(theirs.parameters(), lr=1e-3)

    def torch_step():
        loss = torch.nn.functional.cross_entropy(theirs(Xp).reshape(-1, V), Yp)
        topt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        topt.step()
    steps["torch"] = torch_step
    for fn in steps.values():  # capture (and learn the backward), then replays are timed
        fn(), fn()
    return steps


def bench_gpt(reps, compiled=False):
    """(tapegrad, torch) seconds per step; `compiled`: tapegrad's model through tg.compile
    (bench/run.py's (f') row; its first steps capture, paired_best's warm-up included)."""
    from test_char_models import TorchGPT  # the PyTorch twin used by the tests
    T = 16
    rng = np.random.default_rng(0)
    X = rng.integers(0, V, (B, T))
    Y = rng.integers(0, V, (B, T))
    ours = GPT(V, T, n_layer=2, n_embd=64, n_head=4)
    theirs = TorchGPT(V, T, n_layer=2, n_embd=64, n_head=4)
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy().copy())
                            for k, v in ours.state_dict().items()})
    opt = tg.optim.AdamW(ours.parameters(), lr=1e-3)
    topt = torch.optim.AdamW(theirs.parameters(), lr=1e-3)
    Xt, Yt = tg.tensor(X), tg.tensor(Y.reshape(-1))
    Xp, Yp = torch.tensor(X), torch.tensor(Y.reshape(-1))
    if compiled:
        ours = tg.compile(ours)
        for _ in range(2):  # capture (and learn its backward), then the replays are timed
            tg.nn.functional.cross_entropy(ours(Xt).reshape(-1, V), Yt).backward()
        opt.zero_grad()

    def tg_step():
        loss = tg.nn.functional.cross_entropy(ours(Xt).reshape(-1, V), Yt)
        opt.zero_grad()
        loss.backward()
        tg.nn.utils.clip_grad_norm_(ours.parameters(), 1.0)
        opt.step()

    def torch_step():
        loss = torch.nn.functional.cross_entropy(theirs(Xp).reshape(-1, V), Yp)
        topt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        topt.step()

    return paired_best(tg_step, torch_step, max(1, reps // 16))  # 20 rounds, interleaved


def main():
    # only when run as a script: bench/run.py imports this module and keeps its own malloc
    from tapegrad._alloc import keep_freed_memory
    malloc = "default" if ARGS.default_malloc else (
        "tuned" if keep_freed_memory() else "default")
    print(f"threads: {ARGS.threads} (numpy BLAS and torch); malloc: {malloc} (both columns)")
    t_tg, t_np = bench_mlp(ARGS.reps)
    print(f"makemore MLP step: tapegrad {t_tg * 1e6:8.1f} us | hand-written NumPy "
          f"{t_np * 1e6:8.1f} us | ratio {t_tg / t_np:.2f}x (target <= 1.3x)")
    g_tg, g_torch = bench_gpt(ARGS.reps)
    print(f"tiny GPT step:     tapegrad {g_tg * 1e3:8.2f} ms | PyTorch CPU       "
          f"{g_torch * 1e3:8.2f} ms | ratio {g_tg / g_torch:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()

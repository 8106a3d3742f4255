"""The core benchmark: tapegrad vs PyTorch CPU vs hand-written NumPy, ratios from ONE run.

    python bench/run.py [--threads N] [--quick]

  (a) per-op forward+backward overhead on tiny 8x8 float32 tensors (us per op call);
  (b) one training step of a 784-256-128-10 ReLU MLP, batch 128, cross-entropy, SGD;
  (c) a 100,000-op scalar chain, forward + backward (float64 0-d tensors);
  (d) W2: `tanh(a*b+c).sum()` on 8x8 float32, forward+backward, us per recorded op;
  (e) W4: one makemore MLP+BatchNorm training step, batch 32 (bench/bench_char.py's
      model and hand-written NumPy step), us per step.

Timing: each case runs `number` times per round; the reported time is the best round
(min of repeats: the least disturbed by other processes). Every library gets the same
thread count (set below BEFORE NumPy is imported, so that OpenBLAS reads it).
(b) times each implementation in its own process: in one process torch's OpenMP
workers and OpenBLAS's threads spin against each other on 2 cores (measured: 80 ms
instead of 1 ms per step).
The table is printed and saved to bench/RESULTS.md. Targets (issue 2): (a) <= 5 us/op,
(b) <= 1.05x hand-written NumPy, (c) faster than PyTorch.
"""
import argparse
import os
import sys

# ---- configuration -------------------------------------------------------------------
THREADS = 2          # same for NumPy's BLAS and torch (the issue measures with 2 threads)
ROUNDS = 7           # repeats; the min is reported (many short rounds: robust to load)
TINY_CALLS = 1000    # (a) op calls per round
MLP_STEPS = 3        # (b) training steps per round
CHAIN_OPS = 100_000  # (c) length of the scalar chain

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=THREADS)
_p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
_p.add_argument("--no-save", action="store_true", help="do not write bench/RESULTS.md")
_p.add_argument("--cpu-time", action="store_true",
                help="time with this thread's CPU time (time.thread_time) instead of the wall "
                     "clock: on a machine shared with other jobs the wall clock counts their "
                     "time slices too (measured: torch's W2 row 41-55 us on one loaded machine "
                     "within minutes). Only meaningful with --threads 1.")
_p.add_argument("--mlp-worker", help=argparse.SUPPRESS)  # internal: time one MLP, print ms
ARGS = _p.parse_args()
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)  # must precede `import numpy`
if ARGS.quick:
    ROUNDS, TINY_CALLS, MLP_STEPS, CHAIN_OPS = 2, 300, 2, 20_000
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import gc  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import tapegrad as tg  # noqa: E402

torch.set_num_threads(ARGS.threads)


def blas_threads():
    try:
        from threadpoolctl import threadpool_info
        return ", ".join(f"{d['internal_api']}={d['num_threads']}" for d in threadpool_info())
    except ImportError:  # optional: the env vars above are what sets them
        return "threadpoolctl not installed"


def best(fn, number, rounds=None):
    """Seconds per call: min over rounds of (round time / number)."""
    clock = time.thread_time if ARGS.cpu_time else time.perf_counter
    fn()  # warm up
    t = float("inf")
    for _ in range(rounds or ROUNDS):
        gc.collect()
        t0 = clock()
        for _ in range(number):
            fn()
        t = min(t, (clock() - t0) / number)
    return t


# ---- (a) tiny ops -----------------------------------------------------------------------
rng = np.random.default_rng(0)
A = rng.standard_normal((8, 8)).astype(np.float32)
B = rng.uniform(0.5, 1.5, (8, 8)).astype(np.float32)
G = np.ones((8, 8), np.float32)

# name: (tapegrad/torch function of (x, y), numpy forward+backward of (a, b, g))
TINY = {
    "add": (lambda x, y: x + y, lambda a, b, g: (a + b, g, g)),
    "mul": (lambda x, y: x * y, lambda a, b, g: (a * b, g * b, g * a)),
    "div": (lambda x, y: x / y, lambda a, b, g: (a / b, g / b, -g * (a / b) / b)),
    "exp": (lambda x, y: x.exp(), lambda a, b, g: (lambda o: (o, g * o))(np.exp(a))),
    "tanh": (lambda x, y: x.tanh(), lambda a, b, g: (lambda o: (o, g * (1 - o * o)))(np.tanh(a))),
    "relu": (lambda x, y: x.relu(), lambda a, b, g: (np.maximum(a, 0), np.where(a > 0, g, 0))),
    "pow2": (lambda x, y: x ** 2, lambda a, b, g: (a * a, 2 * a * g)),
    "sum": (lambda x, y: x.sum(), lambda a, b, g: (a.sum(), np.ones_like(a))),
    "mean(dim)": (lambda x, y: x.mean(1), lambda a, b, g: (a.mean(1), np.broadcast_to(
        g[:, :1] / 8, a.shape))),
    "matmul": (lambda x, y: x @ y, lambda a, b, g: (a @ b, g @ b.T, a.T @ g)),
    "softmax": (lambda x, y: x.softmax(1), lambda a, b, g: _np_softmax_bwd(a, g)),
}


def _np_softmax_bwd(a, g):
    e = np.exp(a - a.max(1, keepdims=True))
    s = e / e.sum(1, keepdims=True)
    return s, s * (g - (g * s).sum(1, keepdims=True))


def tiny_case(name):
    f, npf = TINY[name]
    res = {}
    for lib, mk in (("tapegrad", tg.tensor), ("torch", torch.tensor)):
        x, y = mk(A, requires_grad=True), mk(B, requires_grad=True)
        out0 = f(x, y)
        g = None if out0.ndim == 0 else mk(np.ones(tuple(out0.shape), np.float32))

        def step(x=x, y=y, g=g):
            out = f(x, y)
            out.backward(g)
            x.grad = None
            y.grad = None
        res[lib] = best(step, TINY_CALLS)
    res["numpy"] = best(lambda: npf(A, B, G), TINY_CALLS)
    return res


# ---- (b) MLP training step -------------------------------------------------------------------
BATCH, SIZES, LR = 128, (784, 256, 128, 10), 0.01
X = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
Y = rng.integers(0, SIZES[-1], BATCH)
ONEHOT = np.eye(SIZES[-1], dtype=np.float32)[Y]
INIT = []
for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
    bound = 1 / np.sqrt(fan_in)
    INIT += [rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
             rng.uniform(-bound, bound, fan_out).astype(np.float32)]


def mlp_numpy():
    """Hand-written forward and backward (the reference a framework is compared with)."""
    P = [p.copy() for p in INIT]

    def step():
        W1, b1, W2, b2, W3, b3 = P
        z1 = X @ W1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ W2 + b2
        h2 = np.maximum(z2, 0)
        z3 = h2 @ W3 + b3
        m = z3.max(1, keepdims=True)
        e = np.exp(z3 - m)
        s = e.sum(1, keepdims=True)
        logp = z3 - m - np.log(s)
        loss = -(logp * ONEHOT).sum() / BATCH
        dz3 = (e / s - ONEHOT) / BATCH                 # softmax - onehot, over n
        dW3, db3 = h2.T @ dz3, dz3.sum(0)
        dz2 = (dz3 @ W3.T) * (z2 > 0)
        dW2, db2 = h1.T @ dz2, dz2.sum(0)
        dz1 = (dz2 @ W2.T) * (z1 > 0)
        dW1, db1 = X.T @ dz1, dz1.sum(0)
        for p, g in zip(P, (dW1, db1, dW2, db2, dW3, db3)):
            p -= LR * g
        return loss
    return step


def mlp_tg(fused):
    P = [tg.tensor(p.copy(), requires_grad=True) for p in INIT]
    x, onehot = tg.tensor(X), tg.tensor(ONEHOT)
    y = tg.tensor(Y)
    F = tg.nn.functional if fused else None

    def step():
        W1, b1, W2, b2, W3, b3 = P
        h = (x @ W1 + b1).relu()
        h = (h @ W2 + b2).relu()
        z = h @ W3 + b3
        if fused:
            loss = F.cross_entropy(z, y)
        else:  # op-by-op: log_softmax, pick the targets (a one-hot product), mean
            loss = -(z.log_softmax(1) * onehot).sum() / BATCH
        loss.backward()
        for p in P:
            p.data -= LR * p.grad.data
            p.grad = None
        return loss
    return step


def mlp_torch():
    P = [torch.tensor(p.copy(), requires_grad=True) for p in INIT]
    x, y = torch.tensor(X), torch.tensor(Y)

    def step():
        W1, b1, W2, b2, W3, b3 = P
        h = (x @ W1 + b1).relu()
        h = (h @ W2 + b2).relu()
        loss = TF.cross_entropy(h @ W3 + b3, y)
        loss.backward()
        with torch.no_grad():
            for p in P:
                p -= LR * p.grad
                p.grad = None
        return loss
    return step


MLP_IMPLS = {"numpy (hand-written fwd/bwd)": mlp_numpy,
             "tapegrad (F.cross_entropy)": lambda: mlp_tg(True),
             "tapegrad (log_softmax * onehot)": lambda: mlp_tg(False),
             "torch": mlp_torch}


def mlp_in_subprocess(name):
    """Best ms per step of one implementation, timed in a fresh process."""
    import subprocess
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--threads", str(ARGS.threads),
                        "--mlp-worker", name] + (["--quick"] if ARGS.quick else [])
                       + (["--cpu-time"] if ARGS.cpu_time else []),
                       capture_output=True, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])


def check_mlp_agree():
    """The three implementations compute the same loss (guards the timing comparison)."""
    a, b, c = mlp_numpy()(), mlp_tg(True)().item(), mlp_torch()().item()
    assert abs(a - b) < 1e-4 and abs(a - c) < 1e-4, (a, b, c)


# ---- (c) the scalar chain ---------------------------------------------------------------------
def chain(lib_tensor, n):
    def run():
        x = lib_tensor(0.5, requires_grad=True)
        y = x
        for i in range(n // 2):
            y = y * 0.999999
            y = y + 1e-6
        y.backward()
        return x.grad
    return run


def chain_numpy(n):
    """Hand-written: forward values, backward multiplies the local derivatives."""
    def run():
        y = np.float64(0.5)
        for i in range(n // 2):
            y = y * 0.999999
            y = y + 1e-6
        g = np.float64(1.0)
        for i in range(n // 2):
            g = g * 0.999999
        return g
    return run


# ---- (d) W2 and (e) W4 ------------------------------------------------------------------------
C8 = rng.standard_normal((8, 8)).astype(np.float32)


def w2_step(lib):
    """tanh(a*b+c).sum(), forward and backward: four recorded ops per call."""
    if lib == "numpy":
        def step():
            t = np.tanh(A * B + C8)
            s = t.sum()
            d = 1 - t * t                      # d tanh, times the seed 1 broadcast back
            return s, d * B, d * A, d
        return step
    mod = tg if lib == "tapegrad" else torch
    a, b, c = (mod.tensor(v, requires_grad=True) for v in (A, B, C8))

    def step():
        (a * b + c).tanh().sum().backward()
        a.grad = b.grad = c.grad = None
    return step


def w4_times():
    """(tapegrad, numpy) seconds per makemore step, bench_char.py's two implementations."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import bench_char
    tg_step, np_step = bench_char.mlp_steps()
    return best(tg_step, TINY_CALLS // 4), best(np_step, TINY_CALLS // 4)


# ---- run and report ------------------------------------------------------------------------------
def main():
    t_start = time.perf_counter()
    lines = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    out(f"# tapegrad benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    out()
    out(f"threads: {ARGS.threads} (torch.get_num_threads()={torch.get_num_threads()}; "
        f"BLAS: {blas_threads()})  ")
    out(f"python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
        f"tapegrad {tg.__version__}; {os.cpu_count()} CPUs; load average before: "
        f"{os.getloadavg()[0]:.1f}  ")
    out(f"timing: best of {ROUNDS} rounds" + (" (--quick)" if ARGS.quick else "")
        + (", thread CPU time (--cpu-time)" if ARGS.cpu_time else ", wall clock"))
    if os.getloadavg()[0] > (os.cpu_count() or 1) - 1 and ARGS.threads > 1:
        out()
        out(f"WARNING: the machine is loaded (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
            "CPUs): multi-threaded BLAS then waits for busy cores and (b) becomes noise "
            "(measured 80 ms instead of 1.5 ms per step); compare with --threads 1.")
    out()
    out("## (a) per-op forward+backward on 8x8 float32 tensors (us per op call)")
    out()
    out("| op | tapegrad | torch | numpy (hand) | tg / torch | tg / numpy |")
    out("|---|---:|---:|---:|---:|---:|")
    tot = {"tapegrad": [], "torch": [], "numpy": []}
    for name in TINY:
        r = tiny_case(name)
        for k in tot:
            tot[k].append(r[k])
        out(f"| {name} | {r['tapegrad']*1e6:.1f} | {r['torch']*1e6:.1f} | {r['numpy']*1e6:.1f} "
            f"| {r['tapegrad']/r['torch']:.2f} | {r['tapegrad']/r['numpy']:.1f} |")
    med = {k: float(np.median(v)) for k, v in tot.items()}  # robust to one odd op
    out(f"| **median** | **{med['tapegrad']*1e6:.1f}** | {med['torch']*1e6:.1f} | "
        f"{med['numpy']*1e6:.1f} | **{med['tapegrad']/med['torch']:.2f}** | "
        f"{med['tapegrad']/med['numpy']:.1f} |")
    out()
    out("Target: <= 5 us per op for tapegrad (and below torch).")
    out()

    out(f"## (b) MLP {'-'.join(map(str, SIZES))} ReLU, batch {BATCH}, cross-entropy, SGD step "
        "(ms per step)")
    out()
    check_mlp_agree()
    times = {name: mlp_in_subprocess(name) / 1e3 for name in MLP_IMPLS}
    ref = times["numpy (hand-written fwd/bwd)"]
    out("| implementation | ms / step | vs numpy | vs torch |")
    out("|---|---:|---:|---:|")
    for name, t in times.items():
        out(f"| {name} | {t*1e3:.2f} | {t/ref:.3f} | {t/times['torch']:.3f} |")
    out()
    out("Target: tapegrad within 1.05x of hand-written NumPy.")
    out()

    out(f"## (c) {CHAIN_OPS:,}-op scalar chain (y = y*c; y = y+d), forward + backward, float64")
    out()
    t_tg = best(chain(lambda v, requires_grad: tg.tensor(v, dtype=tg.float64,
                                                          requires_grad=requires_grad),
                      CHAIN_OPS), 1, rounds=min(ROUNDS, 3))
    t_th = best(chain(lambda v, requires_grad: torch.tensor(v, dtype=torch.float64,
                                                            requires_grad=requires_grad),
                      CHAIN_OPS), 1, rounds=min(ROUNDS, 3))
    t_np = best(chain_numpy(CHAIN_OPS), 1, rounds=min(ROUNDS, 3))
    out("| implementation | ms | us / op | vs torch |")
    out("|---|---:|---:|---:|")
    for name, t in (("tapegrad", t_tg), ("torch", t_th), ("numpy scalars (hand)", t_np)):
        out(f"| {name} | {t*1e3:.0f} | {t/CHAIN_OPS*1e6:.2f} | {t/t_th:.2f} |")
    out()
    out("Target: tapegrad faster than torch (ratio < 1).")
    out()

    out("## (d) W2: tanh(a*b+c).sum() on 8x8 float32, forward+backward (us per op, 4 ops)")
    out()
    w2 = {lib: best(w2_step(lib), TINY_CALLS) / 4 for lib in ("tapegrad", "torch", "numpy")}
    out("| implementation | us / op | vs torch |")
    out("|---|---:|---:|")
    for name, t in w2.items():
        out(f"| {name} | {t*1e6:.2f} | {t/w2['torch']:.2f} |")
    out()
    out("Target (issue 15): tapegrad <= 0.5x torch.")
    out()

    out("## (e) W4: makemore MLP + BatchNorm training step, batch 32 (us per step)")
    out()
    t_tg, t_np = w4_times()
    out("| implementation | us / step | vs numpy |")
    out("|---|---:|---:|")
    out(f"| numpy (hand-written fwd/bwd) | {t_np*1e6:.0f} | 1.00 |")
    out(f"| tapegrad | {t_tg*1e6:.0f} | {t_tg/t_np:.2f} |")
    out()
    out("Target (issue 15): tapegrad <= 1.3x hand-written NumPy.")
    out()
    out(f"Total bench time: {time.perf_counter() - t_start:.0f} s; load average after: "
        f"{os.getloadavg()[0]:.1f}")
    if not ARGS.no_save:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if ARGS.mlp_worker:
        print(best(MLP_IMPLS[ARGS.mlp_worker](), MLP_STEPS) * 1e3)
    else:
        main()

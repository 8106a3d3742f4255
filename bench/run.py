"""The core benchmark: tapegrad vs PyTorch CPU vs hand-written NumPy, ratios from ONE run.

    python bench/run.py [--threads N] [--quick]

  (a) per-op forward+backward overhead on tiny 8x8 float32 tensors (us per op call);
  (b) one training step of a 784-256-128-10 ReLU MLP, batch 128, cross-entropy, SGD;
      (b') hand NumPy, tapegrad eager and the whole step through tg.compile in ONE
      interleaved run in one process (freed memory kept, as (f)); (b'') the same with
      glibc's default malloc;
  (c) a 100,000-op scalar chain, forward + backward (float64 0-d tensors);
  (d) W2: `tanh(a*b+c).sum()` on 8x8 float32, forward+backward, us per recorded op;
  (e) W4: one makemore MLP+BatchNorm training step, batch 32 (bench/bench_char.py's
      model and hand-written NumPy step), us per step; (e') the model through tg.compile;
      (e'') the whole training step through tg.compile (forward, loss, backward, SGD);
  (f) the tiny GPT training step (bench/bench_char.py's bench_gpt: 2 layers, n_embd 64,
      AdamW, 1 thread as issue 15 measures it) vs the same model in PyTorch, both with
      freed memory kept in the heap as bench_char.py runs them (tapegrad/_alloc.py);
      (f') the same step with the model through tg.compile (capture and replay), and
      the whole step through tg.compile (with clip_grad_norm_ and AdamW);
      (f'') the step with glibc's default malloc (information: page faults);
  (g) the microgpt-shaped scalar GPT (bench/bench_microgpt_value.py's train) with tg.Value
      vs its reference LocalValue (microgpt's design): CPU time, and the losses and samples
      must be identical;
  (h) peak RSS growth of W3 training (the (b) MLP) at batch 4096, tapegrad vs hand NumPy.
  The last tables collect issue 15's and issue 30's goals (the compiled rows of (b),
  (d), (e) and (f) are each timed in the same interleaved run as their eager and
  reference rows) with this run's ratios and met / NOT met.

Timing: each case runs `number` times per round; the reported time is the best round
(min of repeats: the least disturbed by other processes). The goal rows time their sides
in turns, so that all sides see the same machine (this one's speed drifts by up to a
third within minutes, even when idle): (d) rounds rotating over the three libraries
(bench_char.best_of_each), (e) and (f) alternating rounds (bench_char.paired_best), (b)
processes launched in turns. Every library gets the same thread count (set below BEFORE NumPy is
imported, so OpenBLAS reads it).
(b) times each implementation in its own process (MLP_LAUNCHES each): in one process
torch's OpenMP workers and OpenBLAS's threads spin against each other on 2 cores
(measured: 80 ms instead of 1 ms per step).
(f) and (h) run in subprocesses too: (f) with 1 thread (timed by bench_char's own
paired_best: best of 20 interleaved rounds, wall clock even with --cpu-time), (h) so that
each measures only its own allocations (the peak is reset through
/proc/self/clear_refs: Linux only).
(g) is the median CPU time (time.process_time) of interleaved rounds, as
bench_microgpt_value.py measures it.
The table is printed and saved to bench/RESULTS.md (not with --quick or --no-save).
Targets: issue 2 for (a) <= 5 us/op and (c) faster than PyTorch; issue 15 for the rest.
"""
import argparse
import os
import sys

# ---- configuration -------------------------------------------------------------------
THREADS = 2          # same for NumPy's BLAS and torch (the issue measures with 2 threads)
ROUNDS = 7           # repeats; the min is reported (many short rounds: robust to load)
TINY_CALLS = 1000    # (a) op calls per round
MLP_STEPS = 3        # (b) training steps per round
MLP_LAUNCHES = 3     # (b) processes per implementation, launched in turns
CHAIN_OPS = 100_000  # (c) length of the scalar chain
GPT_REPS = 100       # (f) bench_char.bench_gpt(reps): 20 rounds of reps // 16 steps per side
VALUE_STEPS = 3      # (g) training steps per round
VALUE_SAMPLES = 5    # (g) names sampled after training (as bench_microgpt_value does)
VALUE_ROUNDS = 3     # (g) interleaved rounds; the median is reported
RSS_BATCH = 4096     # (h) the W3 MLP's batch
RSS_STEPS = 5        # (h) training steps after the peak is reset

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=THREADS)
_p.add_argument("--quick", action="store_true",
                help="fewer repeats (a smoke run; its numbers are noise, so it saves nothing)")
_p.add_argument("--no-save", action="store_true", help="do not write bench/RESULTS.md")
_p.add_argument("--cpu-time", action="store_true",
                help="time with this thread's CPU time (time.thread_time) instead of the wall "
                     "clock: on a machine shared with other jobs the wall clock counts their "
                     "time slices too (measured: torch's W2 row 41-55 us on one loaded machine "
                     "within minutes). Only meaningful with --threads 1.")
_p.add_argument("--mlp-worker", help=argparse.SUPPRESS)  # internal: time one MLP, print ms
_p.add_argument("--worker", choices=("gpt", "gpt-all", "gpt-default-malloc", "rss-numpy",
                                     "rss-tapegrad", "w3-all", "w3-all-default-malloc"),
                help=argparse.SUPPRESS)  # internal: one (f) or (h) measurement, printed
ARGS = _p.parse_args()
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)  # must precede `import numpy`
if ARGS.quick:
    ROUNDS, TINY_CALLS, MLP_STEPS, CHAIN_OPS = 2, 300, 2, 20_000
    GPT_REPS, VALUE_STEPS, VALUE_ROUNDS, VALUE_SAMPLES, RSS_STEPS = 4, 1, 1, 1, 2
    MLP_LAUNCHES = 1
    ARGS.no_save = True
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import gc  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tapegrad as tg  # noqa: E402
from tapegrad import _ckernels  # noqa: E402  (which kernels GELU, layer norm, Adam run)
import w3_mlp  # noqa: E402  (bench/, this script's directory)

# A worker that times or measures NumPy or tapegrad alone does not import torch: its
# OpenMP threads and memory are then not in the measurement, and on a loaded machine the
# import alone costs seconds per worker.
if (ARGS.mlp_worker or "torch") == "torch" and ARGS.worker in (None, "gpt", "gpt-all",
                                                                     "gpt-default-malloc"):
    import torch  # noqa: E402
    import torch.nn.functional as TF  # noqa: E402
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
        if not ARGS.quick:  # a fair start for every round; up to 0.3 s on a loaded machine
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
BATCH, SIZES, LR = 128, w3_mlp.SIZES, 0.01
X = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
Y = rng.integers(0, SIZES[-1], BATCH)
ONEHOT = np.eye(SIZES[-1], dtype=np.float32)[Y]
INIT = w3_mlp.init(rng)


def mlp_data(batch, seed=1):
    """(inputs, targets, one-hot targets) of `batch` rows for the (b) MLP; (h) uses 4096."""
    r = np.random.default_rng(seed)
    y = r.integers(0, SIZES[-1], batch)
    return (r.standard_normal((batch, SIZES[0])).astype(np.float32), y,
            np.eye(SIZES[-1], dtype=np.float32)[y])


def mlp_numpy(data=None):
    """Hand-written forward and backward (the reference a framework is compared with)."""
    P = [p.copy() for p in INIT]
    xs, _, oh = data or (X, Y, ONEHOT)
    return lambda: w3_mlp.numpy_step(P, xs, oh, LR)


def mlp_tg(fused, data=None):
    P = [tg.tensor(p.copy(), requires_grad=True) for p in INIT]
    X_, Y_, ONEHOT_ = data or (X, Y, ONEHOT)
    x, onehot = tg.tensor(X_), tg.tensor(ONEHOT_)
    y = tg.tensor(Y_)
    n = X_.shape[0]
    F = tg.nn.functional if fused else None

    def step():
        W1, b1, W2, b2, W3, b3 = P
        h = (x @ W1 + b1).relu()
        h = (h @ W2 + b2).relu()
        z = h @ W3 + b3
        if fused:
            loss = F.cross_entropy(z, y)
        else:  # op-by-op: log_softmax, pick the targets (a one-hot product), mean
            loss = -(z.log_softmax(1) * onehot).sum() / n
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


def mlp_tg_compiled(data=None):
    """The (b) step as one compiled function: forward, F.cross_entropy, backward and
    plain SGD (`p -= lr * g`, the arithmetic of mlp_numpy's and mlp_tg's update)."""
    P = [tg.tensor(p.copy(), requires_grad=True) for p in INIT]
    X_, Y_, _ = data or (X, Y, ONEHOT)
    x, y = tg.tensor(X_), tg.tensor(Y_)
    train_step = tg.compile(w3_mlp.tg_sgd_step(tg, P, tg.optim.SGD(P, lr=LR)))
    return lambda: train_step(x, y)


MLP_IMPLS = {"numpy (hand-written fwd/bwd)": mlp_numpy,
             "tapegrad (F.cross_entropy)": lambda: mlp_tg(True),
             "tapegrad, tg.compile(step) (F.cross_entropy)": mlp_tg_compiled,
             "tapegrad (log_softmax * onehot)": lambda: mlp_tg(False),
             "torch": mlp_torch}


def in_subprocess(*flags, threads=None):
    """The numbers on the last stdout line of this script run with `flags` in a fresh
    process (same --quick and --cpu-time; the worker's traceback shown if it fails)."""
    import subprocess
    r = subprocess.run([sys.executable, os.path.abspath(__file__),
                        "--threads", str(threads or ARGS.threads), *flags]
                       + (["--quick"] if ARGS.quick else [])
                       + (["--cpu-time"] if ARGS.cpu_time else []),
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"bench worker {' '.join(flags)} failed:\n{r.stderr}")
    return [float(v) for v in r.stdout.strip().splitlines()[-1].split()]


def mlp_in_subprocess(name):
    """Best ms per step of one implementation, timed in a fresh process."""
    return in_subprocess("--mlp-worker", name)[0]


def mlp_all_times():
    """Seconds per (b) step of hand-written NumPy, tapegrad eager (F.cross_entropy) and the
    whole step through tg.compile, timed in ONE interleaved run (bench_char.best_of_each:
    the order rotated every round, the min per row, gc.collect() before each round): issue
    30's W3 row compares these three on the same machine state, as its goal asks."""
    bc = _bench_module("bench_char")
    clock = time.thread_time if ARGS.cpu_time else time.perf_counter
    steps = {"numpy": mlp_numpy(), "eager": mlp_tg(True), "compiled": mlp_tg_compiled()}
    rounds = 4 if ARGS.quick else 30
    return list(bc.best_of_each(steps, 5, rounds=rounds, clock=clock,
                                before_round=gc.collect).values())


def check_mlp_agree():
    """The three implementations compute the same loss (guards the timing comparison)."""
    a, b, c = mlp_numpy()(), mlp_tg(True)().item(), mlp_torch()().item()
    assert abs(a - b) < 1e-4 and abs(a - c) < 1e-4, (a, b, c)
    eager, comp = mlp_tg(True), mlp_tg_compiled()
    for _ in range(3):  # the compiled step replays from its second call: bit for bit
        assert eager().item() == comp().item()


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
    mod = tg if lib.startswith("tapegrad") else torch
    a, b, c = (mod.tensor(v, requires_grad=True) for v in (A, B, C8))
    if lib == "tapegrad, tg.compile(step)":
        @tg.compile
        def fwd_bwd():  # forward and backward captured, replayed as one function
            (a * b + c).tanh().sum().backward()

        def step():
            fwd_bwd()
            a.grad = b.grad = c.grad = None
        return step

    def step():
        (a * b + c).tanh().sum().backward()
        a.grad = b.grad = c.grad = None
    return step


W4_ROWS = {"tapegrad": False, "tapegrad, tg.compile(model)": True,
           "tapegrad, tg.compile(step)": "step"}


def w4_times():
    """{row: seconds per makemore step}: bench_char.py's implementations (eager, the model
    compiled, the whole step compiled, hand-written NumPy), timed in ONE interleaved run
    (bench_char.best_of_each): 4 x ROUNDS rounds of TINY_CALLS // 16 steps each, the
    order rotated every round, the min per row."""
    bench_char = _bench_module("bench_char")
    steps = {}
    for name, compiled in W4_ROWS.items():
        steps[name], np_step = bench_char.mlp_steps(compiled)
        for _ in range(3 if compiled else 0):  # capture, learn the backward, first replay
            steps[name]()
    steps["numpy"] = np_step
    clock = time.thread_time if ARGS.cpu_time else time.perf_counter
    return bench_char.best_of_each(steps, max(1, TINY_CALLS // 16), rounds=4 * ROUNDS,
                                   clock=clock)


def _bench_module(name):
    """Import a sibling bench script as a module. bench_char sets torch's thread count to
    its own default (1) when imported: this run's count is restored."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import importlib
    mod = importlib.import_module(name)
    sys.modules["torch"].set_num_threads(ARGS.threads)  # (imported by bench_char itself)
    return mod


# ---- (f) tiny GPT, (g) microgpt-shaped Value, (h) peak RSS -----------------------------------
def gpt_times(compiled=False):
    """(tapegrad, torch) seconds per tiny-GPT step: bench_char.bench_gpt, run by the worker
    (`compiled`: tapegrad's model through tg.compile)."""
    return _bench_module("bench_char").bench_gpt(GPT_REPS, compiled)


def gpt_all_times():
    """Seconds per tiny-GPT step of bench_char.gpt_steps' rows (eager, tg.compile(model),
    tg.compile(step), torch), timed in ONE interleaved run (bench_char.best_of_each: 20
    rounds of GPT_REPS // 16 steps, the order rotated), in the order of those rows."""
    bc = _bench_module("bench_char")
    clock = time.thread_time if ARGS.cpu_time else time.perf_counter
    return list(bc.best_of_each(bc.gpt_steps(), max(1, GPT_REPS // 16), rounds=20,
                                clock=clock).values())


def value_times():
    """Median CPU seconds of bench_microgpt_value.train (VALUE_STEPS steps, then samples) per
    engine over interleaved rounds, and whether the losses and samples are identical."""
    import random
    mv = _bench_module("bench_microgpt_value")
    docs = mv.words()
    random.Random(42).shuffle(docs)     # as bench_microgpt_value.main does
    engines = {"tg.Value": mv.TGValue, "LocalValue": mv.LocalValue}
    times, results = {k: [] for k in engines}, {}
    for _ in range(VALUE_ROUNDS):
        for name, V in engines.items():
            gc.collect()
            t0 = time.process_time()
            results[name] = mv.train(V, docs, VALUE_STEPS, n_samples=VALUE_SAMPLES)
            times[name].append(time.process_time() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    return med["tg.Value"], med["LocalValue"], results["tg.Value"] == results["LocalValue"]


def _proc_status_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def rss_growth_mib(lib):
    """MiB by which the peak RSS rises over RSS_STEPS training steps of the (b) MLP at batch
    RSS_BATCH (weights and data allocated before the peak is reset). Linux only: the peak
    (VmHWM) is reset by writing 5 to /proc/self/clear_refs. No warm-up step: after one step
    glibc keeps the freed blocks mapped, so a warm process shows ~0 growth (measured); the
    growth is the same for 1, 5 or 20 steps (33.6 MiB, 2 threads)."""
    data = mlp_data(RSS_BATCH)
    step = mlp_numpy(data) if lib == "numpy" else mlp_tg(True, data)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = _proc_status_kib("VmRSS")
    for _ in range(RSS_STEPS):
        step()
    return (_proc_status_kib("VmHWM") - base) / 1024


def met(ok):
    return "met" if ok else "NOT met"


GOAL_ROWS = ("W2", "W3", "W4", "GPT", "Value", "RSS")  # issue 15's table, in its order


# ---- run and report ------------------------------------------------------------------------------
def main():
    t_start = time.perf_counter()
    lines = []
    goals = {}  # issue-15 row -> (workload, setting, tapegrad, reference, ratio, goal, met)
    goals30 = {}  # issue 30's compiled rows, the same fields
    starts = {}  # section letter -> start time (the run should stay under ~3 minutes)

    def section(letter, title):
        starts[letter] = time.perf_counter()
        out(f"## ({letter}) {title}")
        out()

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
    out("C kernels: " + ("loaded (tapegrad/_ckernels)" if _ckernels.LIB is not None else
                         "off (not built, or TAPEGRAD_NATIVE=0): the NumPy kernels") + "  ")
    out(f"timing: best of {ROUNDS} rounds" + (" (--quick)" if ARGS.quick else "")
        + (", thread CPU time (--cpu-time)" if ARGS.cpu_time else ", wall clock"))
    if os.getloadavg()[0] > (os.cpu_count() or 1) - 1 and ARGS.threads > 1:
        out()
        out(f"WARNING: the machine is loaded (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
            "CPUs): multi-threaded BLAS then waits for busy cores and (b) becomes noise "
            "(measured 80 ms instead of 1.5 ms per step); compare with --threads 1.")
    out()
    section("a", "per-op forward+backward on 8x8 float32 tensors (us per op call)")
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
    out(f"Target (issue 2): <= 5 us per op for tapegrad (and below torch): median "
        f"{med['tapegrad']*1e6:.1f} us, {med['tapegrad']/med['torch']:.2f}x torch: "
        f"{met(med['tapegrad'] <= 5e-6 and med['tapegrad'] < med['torch'])}.")
    out()

    section("b", f"MLP {'-'.join(map(str, SIZES))} ReLU, batch {BATCH}, cross-entropy, SGD step "
            "(ms per step)")
    check_mlp_agree()
    # each implementation in its own process, launched in turns MLP_LAUNCHES times (the
    # order rotated): the best per implementation
    times = dict.fromkeys(MLP_IMPLS, float("inf"))
    names = list(MLP_IMPLS)
    for k in range(MLP_LAUNCHES):
        for name in names[k % len(names):] + names[:k % len(names)]:
            times[name] = min(times[name], mlp_in_subprocess(name) / 1e3)
    ref = times["numpy (hand-written fwd/bwd)"]
    out("| implementation | ms / step | vs numpy | vs torch |")
    out("|---|---:|---:|---:|")
    for name, t in times.items():
        out(f"| {name} | {t*1e3:.2f} | {t/ref:.3f} | {t/times['torch']:.3f} |")
    out()
    w3 = times["tapegrad (F.cross_entropy)"] / ref
    goals["W3"] = ("W3 MLP 784-256-128-10 step, batch 128", f"{ARGS.threads} threads",
                   f"{times['tapegrad (F.cross_entropy)']*1e3:.2f} ms", f"NumPy {ref*1e3:.2f} ms",
                   f"{w3:.2f}x NumPy", "<= 1.05x", w3 <= 1.05)
    out(f"Target (issue 15): tapegrad (F.cross_entropy) <= 1.05x hand-written NumPy: "
        f"{w3:.2f}x, {met(w3 <= 1.05)}.")
    out()
    # (b') issue 30's row: the three in one process, one interleaved run (torch imported
    # by bench_char, never run), freed memory kept in the heap as in (f) (all three rows
    # alike); (b'') the same with glibc's default malloc
    kept = in_subprocess("--worker", "w3-all")
    default = in_subprocess("--worker", "w3-all-default-malloc")
    for label, how, (n, e, c) in (
            ("(b')", "freed memory kept: tapegrad._alloc.keep_freed_memory", kept),
            ("(b'')", "glibc's default malloc", default)):
        out(f"{label} one interleaved run in one process (the order rotated every round, "
            f"{how}): hand NumPy {n*1e3:.2f} ms, tapegrad eager {e*1e3:.2f} ms "
            f"({e/n:.3f}x), tg.compile(step) {c*1e3:.2f} ms ({c/n:.3f}x).")
        out()
    n3, _, c3t = kept
    goals30["W3"] = ("W3 MLP step, whole step compiled (b')", f"{ARGS.threads} threads",
                     f"{c3t*1e3:.2f} ms", f"NumPy {n3*1e3:.2f} ms", f"{c3t/n3:.2f}x NumPy",
                     "<= 1.05x", c3t / n3 <= 1.05)
    out()

    section("c", f"{CHAIN_OPS:,}-op scalar chain (y = y*c; y = y+d), forward + backward, float64")
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
    out(f"Target (issue 2): tapegrad faster than torch (ratio < 1): {t_tg/t_th:.2f}, "
        f"{met(t_tg < t_th)}.")
    out()

    section("d", "W2: tanh(a*b+c).sum() on 8x8 float32, forward+backward (us per op, 4 ops)")
    w2 = {lib: t / 4 for lib, t in _bench_module("bench_char").best_of_each(
        {lib: w2_step(lib) for lib in ("tapegrad", "tapegrad, tg.compile(step)", "torch",
                                       "numpy")}, TINY_CALLS // 4,
        rounds=4 * ROUNDS, clock=time.thread_time if ARGS.cpu_time else time.perf_counter,
        before_round=None if ARGS.quick else gc.collect).items()}
    out("| implementation | us / op | vs torch |")
    out("|---|---:|---:|")
    for name, t in w2.items():
        out(f"| {name} | {t*1e6:.2f} | {t/w2['torch']:.2f} |")
    out()
    r2 = w2["tapegrad"] / w2["torch"]
    goals["W2"] = ("W2 tanh(a*b+c).sum() 8x8 f32, fwd+bwd per op", f"{ARGS.threads} threads",
                   f"{w2['tapegrad']*1e6:.2f} us/op", f"torch {w2['torch']*1e6:.2f}",
                   f"{r2:.2f}x torch", "<= 0.5x", r2 <= 0.5)
    out(f"Target (issue 15): tapegrad <= 0.5x torch: {r2:.2f}x, {met(r2 <= 0.5)}.")
    c2 = w2["tapegrad, tg.compile(step)"] / w2["torch"]
    goals30["W2"] = ("W2 fwd+bwd compiled, per op", f"{ARGS.threads} threads",
                     f"{w2['tapegrad, tg.compile(step)']*1e6:.2f} us/op",
                     f"torch {w2['torch']*1e6:.2f}", f"{c2:.2f}x torch", "<= 0.25x", c2 <= 0.25)
    out()

    section("e", "W4: makemore MLP + BatchNorm training step, batch 32 (us per step; the "
            "four rows timed in one interleaved run)")
    w4 = w4_times()
    t_np, t_tg = w4["numpy"], w4["tapegrad"]
    out("| implementation | us / step | vs numpy |")
    out("|---|---:|---:|")
    out(f"| numpy (hand-written fwd/bwd) | {t_np*1e6:.0f} | 1.00 |")
    for name in W4_ROWS:  # (e') the model compiled, as nanoGPT's `model = torch.compile(
        # model)` (loss and optimizer eager); (e'') the whole step compiled
        out(f"| {name} | {w4[name]*1e6:.0f} | {w4[name]/t_np:.2f} |")
    out()
    c4 = w4["tapegrad, tg.compile(step)"] / t_np
    goals30["W4"] = ("W4 makemore step, whole step compiled", f"{ARGS.threads} threads",
                     f"{w4['tapegrad, tg.compile(step)']*1e6:.0f} us",
                     f"NumPy {t_np*1e6:.0f} us", f"{c4:.2f}x NumPy", "<= 1.15x", c4 <= 1.15)
    r4 = t_tg / t_np
    goals["W4"] = ("W4 makemore MLP+BatchNorm step, batch 32", f"{ARGS.threads} threads",
                   f"{t_tg*1e6:.0f} us", f"NumPy {t_np*1e6:.0f} us", f"{r4:.2f}x NumPy",
                   "<= 1.3x", r4 <= 1.3)
    out(f"Target (issue 15): tapegrad <= 1.3x hand-written NumPy: {r4:.2f}x, {met(r4 <= 1.3)}.")
    out()

    section("f", "tiny GPT training step (bench/bench_char.py: 2 layers, n_embd 64, 4 heads, "
            "T 16, batch 32, AdamW; 1 thread, own process; ms per step; freed memory kept "
            "in the heap for both columns, as bench_char.py and `tapegrad train` run)")
    # eager, (f') the model through tg.compile, the whole step through tg.compile, and
    # torch: one process, one interleaved run
    g_tg, cm_tg, cs_tg, g_th = in_subprocess("--worker", "gpt-all", threads=1)
    rg = g_tg / g_th
    out("| implementation | ms / step | vs torch |")
    out("|---|---:|---:|")
    out(f"| torch | {g_th*1e3:.2f} | 1.00 |")
    out(f"| tapegrad | {g_tg*1e3:.2f} | {rg:.2f} |")
    out(f"| (f') tapegrad, tg.compile(model) | {cm_tg*1e3:.2f} | {cm_tg / g_th:.2f} |")
    out(f"| tapegrad, tg.compile(step) | {cs_tg*1e3:.2f} | {cs_tg / g_th:.2f} |")
    goals30["GPT"] = ("tiny GPT step, whole step compiled", "1 thread", f"{cs_tg*1e3:.2f} ms",
                      f"torch {g_th*1e3:.2f} ms", f"{cs_tg / g_th:.2f}x torch", "<= 0.8x",
                      cs_tg / g_th <= 0.8)
    # (f'') glibc's default malloc thresholds (a script that never calls
    # keep_freed_memory): arrays above ~128 KiB are fresh pages on every step
    d_tg, d_th = in_subprocess("--worker", "gpt-default-malloc", threads=1)
    out(f"| (f'') tapegrad, glibc's default malloc (torch in that process: {d_th*1e3:.2f}) | "
        f"{d_tg*1e3:.2f} | {d_tg / d_th:.2f} |")
    out()
    goals["GPT"] = ("tiny GPT step (bench_char.py)", "1 thread", f"{g_tg*1e3:.2f} ms",
                    f"torch {g_th*1e3:.2f} ms", f"{rg:.2f}x torch", "<= 1.0x", rg <= 1.0)
    out(f"Target (issue 15): tapegrad <= 1.0x torch: {rg:.2f}x, {met(rg <= 1.0)}.")
    out()

    section("g", f"microgpt-shaped scalar GPT (bench/bench_microgpt_value.py): {VALUE_STEPS} "
            f"training step(s) + {VALUE_SAMPLES} sample(s), median CPU s of {VALUE_ROUNDS} "
            "interleaved round(s)")
    v_tg, v_ref, same = value_times()
    rv = v_tg / v_ref
    out("| engine | CPU s | vs LocalValue |")
    out("|---|---:|---:|")
    out(f"| LocalValue (microgpt's design) | {v_ref:.2f} | 1.00 |")
    out(f"| tg.Value | {v_tg:.2f} | {rv:.2f} |")
    out()
    out(f"Losses and samples identical (==): {same}.")
    goals["Value"] = ("microgpt-shaped Value GPT, tg.Value vs LocalValue", f"{VALUE_STEPS} step(s)",
                      f"{v_tg:.2f} s", f"LocalValue {v_ref:.2f} s",
                      f"{rv:.2f}x" + ("" if same else " (results differ)"),
                      "<= 0.7x, same losses", rv <= 0.7 and same)
    out(f"Target (issue 15): tg.Value <= 0.7x the reference, identical losses: {rv:.2f}x, "
        f"{'identical' if same else 'DIFFERENT'}, {met(rv <= 0.7 and same)}.")
    out()

    section("h", f"peak RSS growth over {RSS_STEPS} W3 training steps (the (b) MLP), batch "
            f"{RSS_BATCH} (MiB; each in its own process)")
    m_np, m_tg = (in_subprocess("--worker", f"rss-{lib}")[0] for lib in ("numpy", "tapegrad"))
    rm = m_tg / m_np
    out("| implementation | peak RSS growth MiB | vs numpy |")
    out("|---|---:|---:|")
    out(f"| numpy (hand-written fwd/bwd) | {m_np:.1f} | 1.00 |")
    out(f"| tapegrad (F.cross_entropy) | {m_tg:.1f} | {rm:.2f} |")
    out()
    goals["RSS"] = (f"peak RSS growth, W3 training, batch {RSS_BATCH}", f"{RSS_STEPS} steps",
                    f"+{m_tg:.1f} MiB", f"NumPy +{m_np:.1f}", f"{rm:.2f}x", "<= 1.2x",
                    rm <= 1.2)
    out(f"Target (issue 15): tapegrad <= 1.2x NumPy: {rm:.2f}x, {met(rm <= 1.2)}.")
    out()

    summary_start = time.perf_counter()
    out("## Issue 15's goals, this run")
    out()
    out("| workload | setting | tapegrad | reference | ratio | goal | |")
    out("|---|---|---:|---:|---:|---|---|")
    for name, setting, ours, ref_s, ratio, goal, ok in (goals[k] for k in GOAL_ROWS):
        out(f"| {name} | {setting} | {ours} | {ref_s} | {ratio} | {goal} | {met(ok)} |")
    out()
    out(f"{sum(g[-1] for g in goals.values())} of {len(goals)} goals met"
        + (" (--quick: the numbers are a smoke test, not a measurement)." if ARGS.quick
           else "."))
    out()
    out("## Issue 30's goals (tg.compile of the whole training step), this run")
    out()
    out("| workload | setting | tg.compile(step) | reference | ratio | goal | |")
    out("|---|---|---:|---:|---:|---|---|")
    for name, setting, ours, ref_s, ratio, goal, ok in (goals30[k] for k in
                                                        ("W2", "W3", "W4", "GPT")):
        out(f"| {name} | {setting} | {ours} | {ref_s} | {ratio} | {goal} | {met(ok)} |")
    out()
    ends = list(starts.values())[1:] + [summary_start]
    out(f"Total bench time: {time.perf_counter() - t_start:.0f} s ("
        + ", ".join(f"{k} {e - t:.0f} s" for (k, t), e in zip(starts.items(), ends))
        + f"); load average after: {os.getloadavg()[0]:.1f}")
    if not ARGS.no_save:  # atomically: an interrupted run leaves the old file
        path = os.path.join(ROOT, "bench", "RESULTS.md")
        with open(path + ".tmp", "w") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    if ARGS.mlp_worker:
        print(best(MLP_IMPLS[ARGS.mlp_worker](), MLP_STEPS) * 1e3)
    elif ARGS.worker in ("gpt", "gpt-all", "gpt-default-malloc"):
        if ARGS.worker != "gpt-default-malloc":  # as bench_char.py and `tapegrad train` run
            from tapegrad._alloc import keep_freed_memory
            keep_freed_memory()
        print(*(gpt_all_times() if ARGS.worker == "gpt-all" else gpt_times()))
    elif ARGS.worker in ("w3-all", "w3-all-default-malloc"):
        if ARGS.worker == "w3-all":
            from tapegrad._alloc import keep_freed_memory
            keep_freed_memory()
        print(*mlp_all_times())
    elif ARGS.worker:
        print(rss_growth_mib(ARGS.worker.split("-")[1]))
    else:
        main()

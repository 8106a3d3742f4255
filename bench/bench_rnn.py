"""Benchmark: a 2-layer LSTM forward + backward step, tapegrad vs PyTorch CPU, one run.

  word_language_model's defaults: seq 35, batch 20, emsize = nhid = 200, 2 layers,
  float32, the hidden state carried in (detached) as in truncated BPTT. One step is
  lstm(x, hidden) -> (output * w).sum() -> backward; also reported for GRU and a packed
  batch of varied lengths. Ratio = tapegrad / torch (lower is better).

Timing: best round of `--rounds` (min: the least disturbed by other processes), each
round `--reps` steps, tapegrad's and torch's rounds alternating; both libraries at the
same thread count (default 1, set before
NumPy is imported so OpenBLAS reads it). The outputs are checked to agree first.
Usage: python bench/bench_rnn.py [--threads 1] [--reps 3] [--rounds 9]
"""
import argparse
import os
import sys

_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=1)
_p.add_argument("--reps", type=int, default=3)
_p.add_argument("--rounds", type=int, default=9)
ARGS = _p.parse_args()
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)  # must precede `import numpy`
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import tapegrad as tg  # noqa: E402

torch.set_num_threads(ARGS.threads)
SEQ, BATCH, EMB, HID, LAYERS = 35, 20, 200, 200, 2


def best_pair(fa, fb):
    """Seconds per step of fa and fb: rounds alternate between the two (so both see the
    same background load on a shared machine); each keeps its least disturbed round."""
    fa(), fb()  # warm up
    ta = tb = float("inf")
    for _ in range(ARGS.rounds):
        for f, which in ((fa, 0), (fb, 1)):
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(ARGS.reps):
                f()
            t = (time.perf_counter() - t0) / ARGS.reps
            ta, tb = (min(ta, t), tb) if which == 0 else (ta, min(tb, t))
    return ta, tb


def twins(kind):
    th = getattr(torch.nn, kind)(EMB, HID, LAYERS)
    ours = getattr(tg.nn, kind)(EMB, HID, LAYERS)
    ours.load_state_dict({k: tg.tensor(v.numpy().copy()) for k, v in th.state_dict().items()})
    return ours, th


def case(kind, packed=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SEQ, BATCH, EMB)).astype(np.float32)
    w = rng.standard_normal((SEQ, BATCH, HID)).astype(np.float32)
    lengths = sorted(rng.integers(SEQ // 2, SEQ + 1, BATCH).tolist(), reverse=True)
    lengths[0] = SEQ
    ours, th = twins(kind)

    def make(lib, mod):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w)
        zeros = lib.zeros(LAYERS, BATCH, HID)
        hidden = (zeros, zeros) if kind == "LSTM" else zeros
        pack = lib.nn.utils.rnn.pack_padded_sequence
        unpack = lib.nn.utils.rnn.pad_packed_sequence

        def step():
            inp = pack(xs, lengths) if packed else xs
            out, _ = mod(inp, hidden)
            if packed:
                out, _ = unpack(out, total_length=SEQ)
            loss = (out * ws).sum()
            loss.backward()
            mod.zero_grad()
            xs.grad = None
            return loss.item()
        return step

    step_tg, step_th = make(tg, ours), make(torch, th)
    a, b = step_tg(), step_th()
    assert abs(a - b) <= 1e-3 * max(1.0, abs(b)), (kind, a, b)  # same computation
    return best_pair(step_tg, step_th)


def main():
    print(f"2-layer recurrent step, seq {SEQ}, batch {BATCH}, emb {EMB}, hidden {HID}, "
          f"float32, {ARGS.threads} thread(s); best of {ARGS.rounds} rounds x {ARGS.reps} "
          f"steps; load average {os.getloadavg()[0]:.1f}")
    print(f"{'case':<26} {'tapegrad ms':>12} {'torch ms':>10} {'tg / torch':>11}")
    for name, kind, packed in (("LSTM fwd+bwd", "LSTM", False), ("GRU fwd+bwd", "GRU", False),
                               ("LSTM packed fwd+bwd", "LSTM", True)):
        t_tg, t_th = case(kind, packed)
        print(f"{name:<26} {t_tg * 1e3:12.1f} {t_th * 1e3:10.1f} {t_tg / t_th:10.2f}x",
              flush=True)


if __name__ == "__main__":
    main()

"""Lesson 8 (docs/lessons/08-data-parallel.md): data parallel is gradient accumulation
across processes.

Lesson 7's batch of 32 (linear model, 3 parameters, mean squared error, float64), now
split between 2 processes of 16 rows each. Each rank computes the gradient of its own
mean loss; DistributedDataParallel all-reduces (sums) the gradients and divides by the
number of ranks, which is exactly `(loss_i / 2).backward()` accumulated over 2
micro-batches: the full-batch gradient, on every rank.

    python examples/lesson_08_data_parallel.py      (starts `tapegrad launch --nproc 2`)
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tapegrad as tg  # noqa: E402
import tapegrad.nn.functional as F  # noqa: E402

BATCH = 32
RANKS = 2
SEED = 0


def problem():
    """Lesson 7's data and model, in float64 (the same on every rank: same seed)."""
    tg.manual_seed(SEED)
    model = tg.nn.Linear(2, 1).to(tg.float64)
    X = tg.randn(BATCH, 2).to(tg.float64)
    y = X @ tg.tensor([[1.5], [-2.0]]).to(tg.float64) + 0.3 + 0.1 * tg.randn(BATCH, 1).to(
        tg.float64)
    return model, X, y


def grads(model):
    return [float(g) for p in model.parameters() for g in p.grad.numpy().reshape(-1)]


def picture():
    """Rank 0's graph: the loss of its 16 rows, after backward (retain_graph=True). The
    all-reduce is not in it: it runs in hooks on the leaves, inside backward.
    docs/images/lesson_08_rank0.svg."""
    model, X, y = problem()
    model.weight.name, model.bias.name = "weight", "bias"
    rows = slice(0, BATCH // 2)
    loss = F.mse_loss(model(X[rows]), y[rows])
    loss.name = "rank 0's loss"
    loss.backward(retain_graph=True)
    return loss


def rank_main():
    """One rank: its local gradient (no_sync: no communication), then the all-reduced one."""
    import tapegrad.distributed as dist
    from tapegrad.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")           # "gloo" works too: both run on MPI
    rank, world = dist.get_rank(), dist.get_world_size()
    model, X, y = problem()                  # the same model and data on every rank
    ddp = DDP(model)                         # broadcasts rank 0's weights to everyone
    rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    F.mse_loss(ddp(X[rows]), y[rows]).backward()   # the all-reduce runs inside backward
    # model's .grad is now the gradient of F.mse_loss(model(X), y), on every rank
    reduced = grads(model)
    model.zero_grad()
    with ddp.no_sync():                      # no communication: this rank's own gradient
        F.mse_loss(ddp(X[rows]), y[rows]).backward()
    local = grads(model)
    everyone = [None] * world
    dist.all_gather_object(everyone, {"local": local, "reduced": reduced})
    if rank == 0:
        print("RESULT " + json.dumps(everyone), flush=True)
    dist.destroy_process_group()


def one_process():
    model, X, y = problem()
    tg.nn.functional.mse_loss(model(X), y).backward()
    full = grads(model)
    model.zero_grad()
    half = BATCH // RANKS
    for i in range(RANKS):
        (tg.nn.functional.mse_loss(model(X[i * half:(i + 1) * half]),
                                   y[i * half:(i + 1) * half]) / RANKS).backward()
    return full, grads(model)


def line(label, g):
    print(f"{label:<30}" + "  ".join(f"{v:+.6f}" for v in g))


def main():
    full, accum = one_process()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "tapegrad", "launch", "--nproc", str(RANKS),
                          str(Path(__file__).resolve()), "--rank"], env=env,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    ranks = json.loads(next(ln for ln in out.splitlines() if ln.startswith("RESULT "))[7:])
    print(f"== one process: batch {BATCH} ==")
    line("full batch grads:", full)
    line(f"{RANKS} x {BATCH // RANKS} accumulated grads:", accum)
    print(f"== {RANKS} processes (tapegrad launch --nproc {RANKS}): {BATCH // RANKS} rows each ==")
    for r, res in enumerate(ranks):
        line(f"rank {r} local grads:", res["local"])
    mean_local = np.mean([res["local"] for res in ranks], axis=0)
    line("mean of the local grads:", mean_local)
    for r, res in enumerate(ranks):
        line(f"rank {r} after all-reduce:", res["reduced"])
    diff = max(float(np.max(np.abs(np.array(res["reduced"]) - full))) for res in ranks)
    print(f"max |all-reduced - full batch| below 1e-14: {diff < 1e-14}")
    return {"full": full, "accum": accum, "ranks": ranks, "diff": diff}


if __name__ == "__main__":
    rank_main() if "--rank" in sys.argv else main()

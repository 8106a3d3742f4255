"""Benchmark: one MNIST-MLP training epoch data-parallel on 2 ranks vs 1 rank, one BLAS
thread per rank (DistributedDataParallel over MPI, `tapegrad launch`).

Model and loop as bench_mnist_epoch.py (784-256-10 ReLU, Adam 1e-3, cross-entropy),
60,000 synthetic 28x28 images (speed does not depend on pixel values), sharded by
DistributedSampler. Two settings:
  same per-rank batch   each rank batch B: the global batch is B x ranks, half the steps
  same global batch     each rank B / ranks: the same optimisation as one process
  no averaging          as "same per-rank batch" without DDP (each rank trains alone on
                        its shard): the machine's ceiling for the speed-up, what the ranks
                        reach when the gradient averaging costs nothing
The epoch time is the slowest rank's (after a barrier), best of --reps epochs. Each rank
keeps freed memory in its heap (tapegrad._alloc.keep_freed_memory), as `tapegrad train
mnist` does. "wait/step" is rank 0's time in the reduction's wait per step: the
all-reduce itself plus waiting for the slower rank.

--reduce mpi makes DDP use MPI's Iallreduce even on one machine (the default, auto,
sums the buckets through shared memory when every rank is on this machine:
tapegrad/distributed/node_reduce.py).

Usage: python bench/bench_ddp.py [--n 60000] [--batch 64] [--reps 3] [--nproc 2]
                                 [--rounds 3] [--reduce auto|mpi]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def worker(args):
    import numpy as np

    sys.path.insert(0, ROOT)
    import tapegrad as tg
    import tapegrad.distributed as dist
    from tapegrad.nn.parallel import DistributedDataParallel as DDP
    from tapegrad.utils.data import DataLoader, TensorDataset
    from tapegrad.utils.data.distributed import DistributedSampler

    import tapegrad._alloc
    from tapegrad.distributed import process_group as pg

    tapegrad._alloc.keep_freed_memory()           # as `tapegrad train mnist` does
    if args.reduce == "mpi":
        from tapegrad.distributed import node_reduce
        node_reduce.MAX_BYTES = 0                 # the slots never fit: MPI's Iallreduce
    waited = [0.0]
    plain_wait = pg.wait_all

    def timed_wait(*a, **k):                      # the reduction's wait, timed
        t = time.perf_counter()
        try:
            return plain_wait(*a, **k)
        finally:
            waited[0] += time.perf_counter() - t

    pg.wait_all = timed_wait
    dist.init_process_group("mpi")
    world = dist.get_world_size()
    rng = np.random.default_rng(0)
    x = ((rng.integers(0, 256, (args.n, 1, 28, 28)).astype(np.float32) / 255 - 0.1307)
         / 0.3081)
    y = rng.integers(0, 10, args.n).astype(np.int64)
    ds = TensorDataset(tg.tensor(x), tg.tensor(y))
    results = {}
    for setting, batch in (("same per-rank batch", args.batch),
                           ("same global batch", args.batch // world),
                           ("no averaging", args.batch)):
        tg.manual_seed(0)
        model = tg.nn.Sequential(tg.nn.Flatten(), tg.nn.Linear(784, 256), tg.nn.ReLU(),
                                 tg.nn.Linear(256, 10))
        ddp = model if setting == "no averaging" else DDP(model)
        opt = tg.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = tg.nn.CrossEntropyLoss()
        sampler = DistributedSampler(ds, seed=0)
        loader = DataLoader(ds, batch_size=batch, sampler=sampler)
        best, best_wait = float("inf"), 0.0
        for epoch in range(args.reps):
            sampler.set_epoch(epoch)
            dist.barrier()
            waited[0] = 0.0
            t = time.perf_counter()
            for xb, yb in loader:
                opt.zero_grad()
                loss_fn(ddp(xb), yb).backward()
                opt.step()
            wait = waited[0]
            dist.barrier()                         # the slowest rank's time
            if time.perf_counter() - t < best:
                best, best_wait = time.perf_counter() - t, wait
        results[setting] = {"seconds": best, "per_rank_batch": batch,
                            "wait_ms_per_step": 1e3 * best_wait / len(loader),
                            "global_batch": batch * world, "steps": len(loader),
                            "final_loss": float(loss_fn(model(xb), yb).item())}
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps({"world_size": world, "results": results}), flush=True)
    dist.destroy_process_group()


def run(nproc, args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "tapegrad", "launch", "--nproc", str(nproc),
           os.path.abspath(__file__), "--worker", "--n", str(args.n), "--batch",
           str(args.batch), "--reps", str(args.reps), "--reduce", args.reduce]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=60000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reduce", choices=("auto", "mpi"), default="auto")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    load = os.getloadavg()[0]
    # interleaved rounds (1 rank, N ranks, 1 rank, ...), best epoch of each over all rounds:
    # a launch's epoch time drifts with the machine's other load (seen: 1.31-1.71 s for
    # the same 1-rank run within minutes), which one pair of launches cannot average out
    rounds = [(run(1, args), run(args.nproc, args)) for _ in range(args.rounds)]
    one, many = (_best([r[k] for r in rounds]) for k in (0, 1))
    print(f"# DDP epoch time, {args.n:,} images, reduce={args.reduce}, 1 BLAS thread per rank, "
          f"{os.cpu_count()} CPUs, load average before: {load:.1f}, best of {args.rounds} "
          f"interleaved round(s) x {args.reps} epochs\n")
    print(f"| setting | ranks | per-rank batch | global batch | steps/rank | epoch s | "
          f"wait/step ms | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for setting in one["results"]:
        a, b = one["results"][setting], many["results"][setting]
        print(f"| {setting} | 1 | {a['per_rank_batch']} | {a['global_batch']} | "
              f"{a['steps']} | {a['seconds']:.2f} | {a['wait_ms_per_step']:.2f} | 1.00x |")
        print(f"| {setting} | {args.nproc} | {b['per_rank_batch']} | {b['global_batch']} | "
              f"{b['steps']} | {b['seconds']:.2f} | {b['wait_ms_per_step']:.2f} | "
              f"{a['seconds'] / b['seconds']:.2f}x |")
    for setting in one["results"]:
        each = ", ".join(f"{_secs(a, setting) / _secs(b, setting):.2f}x" for a, b in rounds)
        print(f"\n{setting}: speed-up of each round's own pair: {each}")
    print(f"\ngoal: >= 1.6x with {args.nproc} ranks on this 2-core machine")


def _secs(run_result, setting):
    return run_result["results"][setting]["seconds"]


def _best(runs):
    """Per setting, the run with the shortest epoch (its other numbers with it)."""
    out = dict(runs[0], results={})
    for setting in runs[0]["results"]:
        out["results"][setting] = min((r["results"][setting] for r in runs),
                                      key=lambda res: res["seconds"])
    return out


if __name__ == "__main__":
    main()

"""Data-parallel training for the `tapegrad train TASK --nproc N` jobs.

`--nproc N` (N > 1) re-runs the same command as N MPI ranks (`tapegrad launch`); inside
the job every rank builds the same model, wraps it in DistributedDataParallel and
trains on its own shard, so the global batch is the per-rank batch x N. Rank 0 alone
prints, shows the progress bar and writes metrics.json, pictures and checkpoints.
"""
import os
import sys

from . import flags
from .common import CLIError

MAX_RANKS = 1024  # more MPI processes than this on one job is a typo, not a plan

__all__ = ["add_arguments", "maybe_relaunch", "Context", "setup"]


def add_arguments(p):
    p.add_argument("--nproc", type=flags.integer(1, MAX_RANKS), default=1, metavar="N",
                   help="data-parallel ranks (MPI processes, one BLAS thread each); the "
                        "global batch is --batch-size x N (default: 1; needs "
                        "pip install 'tapegrad[distributed]')")


def _in_job():
    return os.environ.get("TAPEGRAD_LAUNCHED") == "1" and "WORLD_SIZE" in os.environ


def maybe_relaunch(args):
    """If --nproc > 1 and we are not a rank yet: run this command on N ranks and return
    the job's exit code; else None (train here)."""
    n = getattr(args, "nproc", 1)
    if n < 1:
        raise CLIError(f"--nproc must be >= 1, got {n}")
    if n == 1 or _in_job():
        return None
    from ..distributed.launch import LaunchError, launch
    argv = getattr(args, "_argv", None)
    if argv is None:
        argv = sys.argv[1:]
    try:
        return launch(n, ["tapegrad"] + list(argv), module=True)
    except LaunchError as e:
        raise CLIError(str(e)) from None


class Context:
    """rank, world_size, is_main; `wrap(model)`, `sampler(dataset, seed)`,
    `mean(values)` (average of floats over ranks)."""

    def __init__(self, rank=0, world_size=1):
        self.rank, self.world_size = rank, world_size
        self.is_main = rank == 0

    def wrap(self, model):
        if self.world_size == 1:
            return model
        from ..nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model)

    def sampler(self, dataset, seed):
        if self.world_size == 1:
            return None
        from ..utils.data.distributed import DistributedSampler
        return DistributedSampler(dataset, seed=seed, shuffle=True)

    def mean(self, values):
        if self.world_size == 1:
            return list(values)
        import numpy as np

        import tapegrad as tg
        from .. import distributed as dist
        t = tg.tensor(np.asarray(values, dtype=np.float64))
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        return [float(v) for v in t._data]

    def from_main(self, obj):
        """Rank 0's `obj` on every rank (after rank 0 is done with it: a barrier too)."""
        if self.world_size == 1:
            return obj
        from .. import distributed as dist
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def print(self, *a, **k):
        if self.is_main:
            print(*a, **k)


def setup():
    """Join the job if this process is one of its ranks; a one-process Context if not."""
    if not _in_job() or int(os.environ["WORLD_SIZE"]) == 1:
        return Context()
    from .. import distributed as dist
    if not dist.is_initialized():
        dist.init_process_group("mpi")
    return Context(dist.get_rank(), dist.get_world_size())

"""Rank script: collectives called with tensors that differ between ranks (shape, dtype,
op, root) must raise a RuntimeError on every rank naming each rank's call, before any
data moves, so the group stays usable. argv[1]:
  caught     every case is caught; prints `raised <rank> <case>: <message>` per case, then
             a correct all_reduce, then `OK <rank>`
  uncaught   rank 0 all_reduces 4 elements, rank 1 two: the job must fail (exit non-zero)
"""
import sys

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist

dist.init_process_group("gloo")
r, W = dist.get_rank(), dist.get_world_size()
if sys.argv[1] == "uncaught":
    t = tg.ones(4 if r == 0 else 2)
    dist.all_reduce(t)
    print(f"finished {r} {t.tolist()}", flush=True)
    sys.exit(0)

cases = {
    "shape": lambda: dist.all_reduce(tg.ones(4 if r == 0 else 2)),
    "dtype": lambda: dist.all_reduce(tg.ones(3, dtype=tg.float32 if r == 0 else tg.float64)),
    "op": lambda: dist.all_reduce(tg.ones(3), op=dist.ReduceOp.SUM if r else dist.ReduceOp.MAX),
    "broadcast": lambda: dist.broadcast(tg.ones(2, 2 + r), src=0),
    "all_gather": lambda: dist.all_gather([tg.ones(1 + r) for _ in range(W)], tg.ones(1 + r)),
    "reduce": lambda: dist.reduce(tg.ones(3, dtype=tg.int64 if r else tg.int32), dst=0),
    # each rank names itself as the destination
    "gather_dst": lambda: dist.gather(tg.ones(2), [tg.ones(2) for _ in range(W)], dst=r),
    "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(
        tg.ones(2, dtype=tg.float64), tg.ones(2 * W, dtype=tg.float64 if r else tg.float32)),
    "all_to_all_single": lambda: dist.all_to_all_single(
        tg.ones(W, dtype=tg.float64 if r else tg.float32),
        tg.ones(W, dtype=tg.float64 if r else tg.float32)),
}
for name, run in cases.items():
    try:
        run()
    except RuntimeError as e:
        print(f"raised {r} {name}: {e}", flush=True)
    else:
        print(f"silent {r} {name}", flush=True)
t = tg.tensor(np.arange(3.0) * (r + 1))
dist.all_reduce(t)
assert t.tolist() == (np.arange(3.0) * sum(range(1, W + 1))).tolist(), t
print(f"OK {r}", flush=True)

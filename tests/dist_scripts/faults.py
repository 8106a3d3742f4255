"""Rank script for the fault tests. argv[1]:
  raise R      rank R raises in the middle of training (the others are inside backward's
               allreduce, waiting for it)
  exit R       rank R calls sys.exit(3) in the middle of training
  shapes       rank 1 builds a differently shaped model: DDP construction must fail on
               every rank with a clear error
  monitored    the last rank comes 6 s late to a monitored_barrier with a 2 s timeout:
               rank 0 must name it
"""
import datetime
import sys
import time

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank = dist.get_rank()
mode = sys.argv[1]
if mode == "monitored":
    if rank == dist.get_world_size() - 1:
        time.sleep(6)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=2), wait_all_ranks=True)
    print(f"passed {rank}", flush=True)
    sys.exit(0)
width = 7 if (mode == "shapes" and rank == 1) else 6
tg.manual_seed(0)
model = tg.nn.Sequential(tg.nn.Linear(4, width), tg.nn.ReLU(), tg.nn.Linear(width, 2))
ddp = DDP(model)
opt = tg.optim.SGD(ddp.parameters(), lr=0.1)
bad = int(sys.argv[2]) if len(sys.argv) > 2 else -1
for step in range(50):
    if step == 2 and rank == bad:
        if mode == "raise":
            raise ValueError(f"injected failure on rank {rank} at step {step}")
        sys.exit(3)
    x = tg.tensor(np.random.default_rng(step).standard_normal((8, 4)).astype(np.float32))
    opt.zero_grad()
    ddp(x).pow(2).mean().backward()
    opt.step()
print(f"finished {rank}", flush=True)

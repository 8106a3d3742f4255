"""Rank script: DDP gradients on shards == torch's full-batch gradient (float64); no_sync
and require_backward_grad_sync accumulation == one big batch; k SGD steps == torch's;
buckets start during backward. argv[1]: "shm" (the buckets through shared memory, as
DDP does when every rank is on this machine) or "mpi" (MPI's Iallreduce, the path of
ranks on several machines). Prints `OK <rank>` when every check passed."""
import os
import sys

import numpy as np
import torch

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.distributed import node_reduce
from tapegrad.nn.parallel import DistributedDataParallel as DDP
from tapegrad.utils.data import DataLoader, TensorDataset
from tapegrad.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import check_grads, check_params, data, tg_mlp, torch_mlp_like  # noqa: E402

PATH = sys.argv[1]
if PATH == "mpi":
    node_reduce.MAX_BYTES = 0                 # the slots never fit: Iallreduce
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
assert int(os.environ["RANK"]) == rank and int(os.environ["WORLD_SIZE"]) == world
N = 12 * world                       # global batch; each rank's shard has 12 rows
X, Y = data(N)
lossf = torch.nn.functional.cross_entropy

# 1. one backward on the shards: rank-dependent init, so DDP's broadcast must run.
model = tg_mlp(seed=100 + rank)
ddp = DDP(model, bucket_cap_mb=1e-4)          # tiny buckets: several, launched in order
ref = torch_mlp_like(model)                   # rank 0's weights after the broadcast
assert len(ddp._buckets) > 1
assert (ddp._node is not None) == (PATH == "shm"), (PATH, ddp._node)
sampler = DistributedSampler(TensorDataset(tg.tensor(X), tg.tensor(Y)), shuffle=False)
idx = np.array(list(sampler))
out = ddp(tg.tensor(X[idx]))
tg.nn.functional.cross_entropy(out, tg.tensor(Y[idx])).backward()
lossf(ref(torch.tensor(X)), torch.tensor(Y)).backward()
check_grads(model, ref, "full batch")
# the first bucket started before the last parameter's gradient was ready
first_bucket, ready_then = ddp.launch_log[0]
assert first_bucket == 0 and ready_then < len(list(model.parameters())), ddp.launch_log

# 2. no_sync accumulation over 3 micro-batches == one big batch
model.zero_grad()
ref.zero_grad()
micro = np.array_split(idx, 3)
for k, mb in enumerate(micro):
    if k < 2:
        with ddp.no_sync():
            loss = tg.nn.functional.cross_entropy(ddp(tg.tensor(X[mb])), tg.tensor(Y[mb])) / 3
            loss.backward()
    else:
        loss = tg.nn.functional.cross_entropy(ddp(tg.tensor(X[mb])), tg.tensor(Y[mb])) / 3
        loss.backward()
lossf(ref(torch.tensor(X)), torch.tensor(Y)).backward()
check_grads(model, ref, "no_sync accumulation")

# 3. nanoGPT's way: toggle require_backward_grad_sync before each micro-step's forward
model.zero_grad()
for k, mb in enumerate(micro):
    ddp.require_backward_grad_sync = (k == len(micro) - 1)
    loss = tg.nn.functional.cross_entropy(ddp(tg.tensor(X[mb])), tg.tensor(Y[mb])) / 3
    loss.backward()
check_grads(model, ref, "require_backward_grad_sync toggling")

# 4. k optimizer steps with a shuffled DistributedSampler == torch on the full batches
model = tg_mlp(seed=7 + rank)
ddp = DDP(model)
ref = torch_mlp_like(model)
opt = tg.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
topt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
ds = TensorDataset(tg.tensor(X), tg.tensor(Y))
sampler = DistributedSampler(ds, shuffle=True, seed=3)
loader = DataLoader(ds, batch_size=4, sampler=sampler)
for epoch in range(2):
    sampler.set_epoch(epoch)
    shards = [None] * world
    dist.all_gather_object(shards, list(sampler))     # every rank's order, for torch
    for b, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        tg.nn.functional.cross_entropy(ddp(xb), yb).backward()
        opt.step()
        rows = np.concatenate([np.array(s[4 * b:4 * b + 4]) for s in shards])
        topt.zero_grad()
        # mean over ranks of per-rank means (equal shard sizes) = mean over the rows
        lossf(ref(torch.tensor(X[rows])), torch.tensor(Y[rows])).backward()
        topt.step()
check_params(model, ref, "after SGD steps", rtol=1e-9)
assert list(ddp.state_dict())[0].startswith("module."), list(ddp.state_dict())
assert list(ddp.module.state_dict()) == list(model.state_dict())
dist.barrier()
dist.destroy_process_group()
print(f"OK {rank}", flush=True)

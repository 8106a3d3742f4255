"""Rank script: tapegrad's DDP against torch's own DDP (gloo, file store in argv[1])
on the same ranks: BatchNorm running statistics per rank (broadcast_buffers), gradients
and parameters over SGD steps, and find_unused_parameters with a parameter unused on
some ranks and one unused everywhere. Prints `OK <rank>`."""
import os
import sys

import numpy as np
import torch
import torch.distributed as tdist
import warnings

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (check_grads, check_params, data, tg_mlp,  # noqa: E402
                     torch_copy, torch_mlp_like)

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
tdist.init_process_group("gloo", init_method=f"file://{sys.argv[1]}", rank=rank,
                         world_size=world)
torch.manual_seed(0)
warnings.filterwarnings("ignore", message=".*broadcast_buffers.*deprecated")


def bn_models():
    tg.manual_seed(50 + rank)
    a = tg.nn.Sequential(tg.nn.Linear(5, 6), tg.nn.BatchNorm1d(6), tg.nn.Tanh(),
                         tg.nn.Linear(6, 3)).double()
    b = torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.BatchNorm1d(6), torch.nn.Tanh(),
                            torch.nn.Linear(6, 3)).double()
    with tg.no_grad():        # rank-local statistics: does DDP's construction sync them?
        a[1].running_mean.copy_(tg.tensor(np.full(6, 0.1 * rank)))
    return a, torch_copy(a, b)


def check_buffers(a, b, what):
    ours = dict(a.named_buffers())
    for name, buf in b.named_buffers():
        np.testing.assert_allclose(np.asarray(ours[name].data), buf.numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=f"{what}: buffer {name} (rank {rank})")


# 1. BatchNorm: statistics stay per rank (apart from broadcast_buffers), as torch's DDP
for broadcast_buffers in (True, False):
    a, b = bn_models()
    da, db = DDP(a, broadcast_buffers=broadcast_buffers), \
        torch.nn.parallel.DistributedDataParallel(b, broadcast_buffers=broadcast_buffers)
    oa = tg.optim.SGD(da.parameters(), lr=0.2, momentum=0.5)
    ob = torch.optim.SGD(db.parameters(), lr=0.2, momentum=0.5)
    for step in range(3):
        X, Y = data(8, seed=1000 * step + rank)          # each rank its own batch
        oa.zero_grad()
        ob.zero_grad()
        tg.nn.functional.cross_entropy(da(tg.tensor(X)), tg.tensor(Y)).backward()
        torch.nn.functional.cross_entropy(db(torch.tensor(X)), torch.tensor(Y)).backward()
        check_grads(a, b, f"bn step {step} broadcast_buffers={broadcast_buffers}")
        oa.step()
        ob.step()
    check_params(a, b, "bn params")
    check_buffers(a, b, f"bn broadcast_buffers={broadcast_buffers}")
    # eval-mode forward under no_grad: no sync, same outputs as torch
    da.eval()
    db.eval()
    X, _ = data(4, seed=99)
    with tg.no_grad(), torch.no_grad():
        np.testing.assert_allclose(np.asarray(da(tg.tensor(X)).data), db(torch.tensor(X)).numpy(),
                                   rtol=1e-10)


# 2. find_unused_parameters: `b` is used on rank 0 only, `c` on no rank
class Branchy(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = tg.nn.Linear(5, 3)
        self.b = tg.nn.Linear(5, 3)
        self.c = tg.nn.Linear(5, 3)

    def forward(self, x, use_b):
        y = self.a(x)
        return y + self.b(x) if use_b else y


class TBranchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(5, 3)
        self.b = torch.nn.Linear(5, 3)
        self.c = torch.nn.Linear(5, 3)

    def forward(self, x, use_b):
        y = self.a(x)
        return y + self.b(x) if use_b else y


tg.manual_seed(rank)
a = Branchy().double()
b = torch_copy(a, TBranchy().double())
da = DDP(a, find_unused_parameters=True)
db = torch.nn.parallel.DistributedDataParallel(b, find_unused_parameters=True)
for step in range(2):
    X, Y = data(6, seed=10 * step + rank)
    a.zero_grad()
    b.zero_grad()
    (da(tg.tensor(X), rank == 0) ** 2).mean().backward()
    (db(torch.tensor(X), rank == 0) ** 2).mean().backward()
    check_grads(a, b, f"find_unused_parameters step {step}")

# 3. without find_unused_parameters an unused parameter stops the next iteration, as torch
tg.manual_seed(0)
da = DDP(Branchy().double())
X, _ = data(6)
(da(tg.tensor(X), False) ** 2).mean().backward()
try:
    da(tg.tensor(X), False)
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e), e
    assert "b.weight" in str(e) and "c.bias" in str(e), e
else:
    raise AssertionError("DDP did not detect the unfinished reduction")


# 4. what `.grad` is after a synchronised backward, as torch's Reducer leaves it: the
#    averaged values copied INTO the gradient backward made (a grad held from the step
#    before keeps its values; with set_to_none=False it stays the same tensor object);
#    gradient_as_bucket_view=True gives the same values.
for as_view in (False, True):
    a = tg_mlp(7)
    b = torch_mlp_like(a)
    da = DDP(a, gradient_as_bucket_view=as_view)
    db = torch.nn.parallel.DistributedDataParallel(b, gradient_as_bucket_view=as_view)
    held, same_object = {}, {"tg": [], "torch": []}
    for step in range(3):
        X, Y = data(5, seed=500 + 10 * step + rank)
        before = {"tg": [q.grad for q in a.parameters()],
                  "torch": [q.grad for q in b.parameters()]}
        tg.nn.functional.cross_entropy(da(tg.tensor(X)), tg.tensor(Y)).backward()
        torch.nn.functional.cross_entropy(db(torch.tensor(X)), torch.tensor(Y)).backward()
        check_grads(a, b, f"grad after step {step} (gradient_as_bucket_view={as_view})")
        same_object["tg"].append([g is q.grad for g, q in zip(before["tg"], a.parameters())])
        same_object["torch"].append([g is q.grad for g, q in zip(before["torch"],
                                                                b.parameters())])
        if step == 0:              # keep step 0's gradients, then drop them (set_to_none)
            held = {"tg": [q.grad for q in a.parameters()],
                    "torch": [q.grad.clone() for q in b.parameters()],
                    "torch_ref": [q.grad for q in b.parameters()]}
            a.zero_grad()
            b.zero_grad()
        else:                      # accumulate into the same tensors
            a.zero_grad(set_to_none=False)
            b.zero_grad(set_to_none=False)
    if not as_view:               # torch's held step-0 grads are untouched: ours too
        for g, ref, tref in zip(held["tg"], held["torch"], held["torch_ref"]):
            np.testing.assert_allclose(np.asarray(g.data), tref.numpy(), rtol=1e-10)
            np.testing.assert_allclose(np.asarray(g.data), ref.numpy(), rtol=1e-10)
    assert same_object["tg"] == same_object["torch"], (as_view, same_object)

tdist.destroy_process_group()
dist.destroy_process_group()
print(f"OK {rank}", flush=True)

"""Rank script: SyncBatchNorm on N ranks == torch's BatchNorm on the concatenated batch
(float64, 1e-10): outputs, input gradients, the weight/bias gradients summed over ranks,
running statistics over steps (momentum 0.1 and None), eval mode, shards of unequal
size; then convert_sync_batchnorm + DDP on a conv net against torch's full-batch
gradients and an SGD step. Prints `OK <rank>`."""
import numpy as np
import torch

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
r, W = dist.get_rank(), dist.get_world_size()
TOL = dict(rtol=1e-10, atol=1e-12)
rng = np.random.default_rng(7)


def summed(t):
    t = t.clone()
    dist.all_reduce(t)
    return t.numpy()


# ---- the differentiable all_reduce SyncBatchNorm's statistics go through ----------------
from tapegrad.distributed.nn.functional import all_reduce as diff_all_reduce  # noqa: E402
x = tg.tensor([1.0, -2.0], requires_grad=True)
with tg.no_grad():
    x.mul_(r + 1)
y = diff_all_reduce(x)
np.testing.assert_array_equal(x.detach().numpy(), [r + 1.0, -2.0 * (r + 1)])   # untouched
np.testing.assert_array_equal(y.detach().numpy(), np.array([1.0, -2.0]) * W * (W + 1) / 2)
(y * (r + 1.0)).sum().backward()        # d(sum of the ranks' losses)/dx_r = sum of (q + 1)
np.testing.assert_array_equal(x.grad.numpy(), [W * (W + 1) / 2] * 2)
x.grad = None
(diff_all_reduce(x, op=dist.ReduceOp.AVG) * (r + 1.0)).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), [(W + 1) / 2] * 2, rtol=1e-15)
try:
    diff_all_reduce(x, op=dist.ReduceOp.MAX)
except NotImplementedError as e:
    assert "has no all-reduce gradient" in str(e)
else:
    raise AssertionError("MAX accepted")

# ---- the layer alone: unequal shards, 3-d input, two momenta -----------------------------
for momentum, shape in [(0.1, (11, 3, 4)), (None, (9, 2))]:
    C = shape[1]
    X = rng.standard_normal(shape) * 3 + 1.5
    G = rng.standard_normal(shape)
    w0, b0 = rng.standard_normal(C), rng.standard_normal(C)
    part = np.array_split(np.arange(shape[0]), W)[r]            # e.g. 4, 4, 3 rows
    ours = tg.nn.SyncBatchNorm(C, momentum=momentum).double()
    theirs = torch.nn.BatchNorm1d(C, momentum=momentum).double()
    with tg.no_grad():
        ours.weight.copy_(tg.tensor(w0))
        ours.bias.copy_(tg.tensor(b0))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w0))
        theirs.bias.copy_(torch.tensor(b0))
    for step in range(3):
        Xs = X * (step + 1) - step
        x = tg.tensor(Xs[part], requires_grad=True)
        out = ours(x)
        (out * tg.tensor(G[part])).sum().backward()
        xt = torch.tensor(Xs, requires_grad=True)
        ot = theirs(xt)
        (ot * torch.tensor(G)).sum().backward()
        what = f"momentum={momentum} step {step}"
        np.testing.assert_allclose(out.detach().numpy(), ot.detach().numpy()[part], **TOL,
                                   err_msg=f"{what}: output")
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy()[part], **TOL,
                                   err_msg=f"{what}: input grad")
        # weight/bias gradients are local (DDP averages them): their sum is torch's
        np.testing.assert_allclose(summed(ours.weight.grad), theirs.weight.grad.numpy(), **TOL)
        np.testing.assert_allclose(summed(ours.bias.grad), theirs.bias.grad.numpy(), **TOL)
        np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(), **TOL)
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), **TOL)
        assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == step + 1
        ours.zero_grad()
        theirs.zero_grad()
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(tg.tensor(X[part])).detach().numpy(),
                               theirs(torch.tensor(X)).detach().numpy()[part], **TOL)

# ---- convert_sync_batchnorm + DDP: the full-batch gradient of a conv net -------------------
def net(nn):
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Flatten(), nn.Linear(4 * 5 * 5, 3), nn.BatchNorm1d(3))


tg.manual_seed(3)
plain = net(tg.nn).double()
sync = tg.nn.SyncBatchNorm.convert_sync_batchnorm(plain)
assert isinstance(sync[1], tg.nn.SyncBatchNorm) and isinstance(sync[5], tg.nn.SyncBatchNorm)
assert sync[1].weight is plain[1].weight and sync[1].running_var is plain[1].running_var
theirs = net(torch.nn).double()
theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in sync.state_dict().items()})
model = DDP(sync)
opt = tg.optim.SGD(model.parameters(), lr=0.1)
topt = torch.optim.SGD(theirs.parameters(), lr=0.1)
n = 2 * 3 * W                                      # equal shards: DDP's mean == full mean
for step in range(2):
    X = rng.standard_normal((n, 2, 5, 5))
    Y = rng.integers(0, 3, n)
    part = slice(r * n // W, (r + 1) * n // W)
    loss = tg.nn.functional.cross_entropy(model(tg.tensor(X[part])), tg.tensor(Y[part]))
    loss.backward()
    tl = torch.nn.functional.cross_entropy(theirs(torch.tensor(X)), torch.tensor(Y))
    tl.backward()
    ours_p = dict(model.module.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours_p[name].grad.numpy(), p.grad.numpy(), **TOL,
                                   err_msg=f"step {step}: DDP grad of {name}")
    for name, b in theirs.named_buffers():
        np.testing.assert_allclose(model.module.state_dict()[name].numpy(), b.numpy(), **TOL,
                                   err_msg=f"step {step}: buffer {name}")
    opt.step()
    topt.step()
    opt.zero_grad()
    topt.zero_grad()

# clear errors, as torch's
for call, msg in [(lambda: tg.nn.SyncBatchNorm(3)(tg.ones(3)), "expected at least 2D input "
                   "(got 1D input)"),
                  (lambda: tg.nn.SyncBatchNorm(0)(tg.ones(2, 0)), "number of input channels "
                   "should be non-zero")]:
    try:
        call()
    except ValueError as e:
        assert msg in str(e), (msg, str(e))
    else:
        raise AssertionError(msg)
dist.destroy_process_group()
print(f"OK {r}", flush=True)

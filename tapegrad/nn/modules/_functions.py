"""torch.nn.modules._functions: the cross-rank statistics of `SyncBatchNorm`
(nn/modules/batchnorm.py), a batch norm whose training statistics are
those of the GLOBAL batch, all ranks of the process group together.

With N ranks each holding a shard, the output on every rank equals BatchNorm on the
concatenated batch, and so do the running statistics (the unbiased variance uses the
global count). The statistics go through the differentiable all-reduce
(tapegrad.distributed.nn.functional): per channel the sums of x and of (x - mean)^2,
plus the element count, are summed across ranks. So backward all-reduces the two
matching gradient sums, and a rank's input gradient is that of the sum of all ranks'
losses, as torch's. weight/bias gradients stay local (DDP averages them), as torch's.

Synchronisation happens only in training mode with an initialised process group of
more than one rank; otherwise this is BatchNorm (torch's rule). Unlike torch, which
refuses CPU tensors here, tapegrad runs it on the CPU: that is where it runs.
`convert_sync_batchnorm` swaps every BatchNorm*d of a model for one, sharing its
parameters and buffers.
"""
import numpy as np

from ...autograd import no_grad
from ...distributed.nn.functional import all_reduce
from ..._tensor import Tensor
from .._public_ops import cat



def _sync_batch_norm(x, weight, bias, running_mean, running_var, eps, momentum, group):
    C = x.shape[1]
    axes = (0,) + tuple(range(2, x.dim()))
    shape = (1, C) + (1,) * (x.dim() - 2)
    n_local = x.numel() // C
    # one collective for the sums and the count (a constant: no gradient flows to it)
    sums = x.sum(axes)
    count = Tensor._of(np.array([float(n_local)])).to(sums.dtype)
    packed = all_reduce(cat([sums, count]), group=group)
    n = int(round(packed[C].item()))
    if n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {n}")
    mean = packed[:C] / n
    xc = x - mean.reshape(shape)
    var = all_reduce((xc * xc).sum(axes), group=group) / n
    out = xc * (var + eps).rsqrt().reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    return out

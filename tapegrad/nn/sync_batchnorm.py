"""`SyncBatchNorm` (torch.nn.SyncBatchNorm): batch norm whose training statistics are
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

from .. import distributed as dist
from ..autograd import no_grad
from ..distributed.nn.functional import all_reduce
from .._tensor import Tensor
from . import functional as F
from ._public_ops import cat
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch norm over (N, C, *) input with statistics over every rank of
    `process_group` (default: the world)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / self.num_batches_tracked.item()
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_stats else None
        running_var = self.running_var if use_stats else None
        need_sync = (bn_training and self.training and dist.is_available()
                     and dist.is_initialized()
                     and dist.get_world_size(self.process_group) > 1)
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, factor, self.eps)
        return _sync_batch_norm(input, self.weight, self.bias, running_mean, running_var,
                                self.eps, factor, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every BatchNorm*d replaced by a SyncBatchNorm sharing its
        weight, bias and running statistics (a BatchNorm given directly: a new one)."""
        out = module
        if isinstance(module, _BatchNorm):
            if getattr(module, "correction", 0):
                raise ValueError("convert_sync_batchnorm: a BatchNorm with correction="
                                 f"{module.correction} has no SyncBatchNorm equivalent")
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group,
                                bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


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


"""torch.nn.modules.batchnorm: `_NormBase`, `_BatchNorm`, `BatchNorm1d/2d/3d` (the fused
`batch_norm` table entry), `SyncBatchNorm`, and `_LazyNormBase` with `LazyBatchNorm1d/2d/3d`
(num_features from the first input, modules/lazy.py).

BatchNorm, PyTorch's convention (worked example 9): in training mode normalize with
the batch mean and the BIASED batch variance (divide by n), and update
    running_mean = (1 - momentum) * running_mean + momentum * batch_mean
    running_var  = (1 - momentum) * running_var  + momentum * batch_var_unbiased (n - 1)
`momentum=None` gives a cumulative average (momentum = 1 / num_batches_tracked).
In eval mode the running statistics are used. `correction=1` (a tapegrad extension,
default 0) normalizes with Bessel's correction as the makemore-style model does.
`_BatchNorm` is the shared base: BatchNorm2d only changes `_check_input_dim`.
SyncBatchNorm's cross-rank statistics are in `_functions.py` (as torch's).
"""
import numpy as np

from ... import distributed as dist
from ... import dtypes as _dt
from ...autograd import no_grad
from ...core import tape as _tape
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ._functions import _sync_batch_norm
from .lazy import LazyModuleMixin
from .module import Module
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


def _dtype(dtype):
    return _dt.as_dtype(dtype) or _dt.get_default_dtype()


class _NormBase(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True,
                 correction=0):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.correction = correction
        dt = _dtype(dtype)
        if affine:
            self.weight = Parameter(np.empty((num_features,), dtype=dt))
            if bias:
                self.bias = Parameter(np.empty((num_features,), dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._of(np.zeros((num_features,), dtype=dt)))
            self.register_buffer("running_var", Tensor._of(np.ones((num_features,), dtype=dt)))
            self.register_buffer("num_batches_tracked", Tensor._of(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        s = (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
             f"affine={self.affine}, bias={self.bias is not None}, "
             f"track_running_stats={self.track_running_stats}")
        if self.correction:
            s += f", correction={self.correction}"
        return s


def _count_batch(nbt):
    nbt += 1  # in place on the 0-d array (one ufunc call, not [...] +=)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        # each registered tensor read once, from the registries when the class is one of
        # ours (a registered name read as an attribute is a failed lookup, an
        # AttributeError and Module.__getattr__: ~0.85 us each, measured); the same values
        d = self.__dict__
        p, b = d["_parameters"], d["_buffers"]
        if ("_reads_registry" in type(self).__dict__ and _NAMES_P <= p.keys()
                and _NAMES_B <= b.keys()):
            w, bias = p["weight"], p["bias"]
            rm, rv, nbt = b["running_mean"], b["running_var"], b["num_batches_tracked"]
        else:
            w, bias = self.weight, self.bias
            rm, rv, nbt = self.running_mean, self.running_var, self.num_batches_tracked
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and nbt is not None:
            _tape.host(_count_batch, nbt._data)  # a tg.compile replay counts too
            if self.momentum is None:  # cumulative moving average
                _tape.data_read("num_batches_tracked")  # a Python number from a buffer
                factor = 1.0 / float(nbt._data)
        bn_training = self.training or (rm is None and rv is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, rm if use_stats else None, rv if use_stats else None,
                            w, bias, bn_training, factor, self.eps,
                            correction=self.correction)


_NAMES_P = frozenset(("weight", "bias"))
_NAMES_B = frozenset(("running_mean", "running_var", "num_batches_tracked"))


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input; statistics per channel C."""

    # forward may read weight and the buffers from the registries (the class's OWN
    # attribute: a subclass, which may define them otherwise, takes the general path)
    _reads_registry = True

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c, statistics over (N, H, W).

    Input (N, C, H, W). Training: batch statistics (biased variance), running statistics
    updated with momentum (unbiased variance); eval: running statistics.
    """

    _reads_registry = True  # see BatchNorm1d

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) input; statistics per channel C."""

    _reads_registry = True  # see BatchNorm1d

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """The lazy norm layers (torch's `_LazyNormBase`): weight, bias and the running
    statistics are placeholders until the first input gives num_features."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = Tensor._of(np.array(0, dtype=np.int64))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            # dim 1 even for an unbatched instance norm input, as torch (whose forward
            # then refuses it, affine: the sizes differ)
            self.num_features = input.shape[1]
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None:
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features comes from the first input."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features comes from the first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features comes from the first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


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

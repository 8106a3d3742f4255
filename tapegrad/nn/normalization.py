"""`BatchNorm1d` and `LayerNorm` (fused table entries `batch_norm`, `layer_norm`).

BatchNorm, PyTorch's convention (worked example 9): in training mode normalize with
the batch mean and the BIASED batch variance (divide by n), and update
    running_mean = (1 - momentum) * running_mean + momentum * batch_mean
    running_var  = (1 - momentum) * running_var  + momentum * batch_var_unbiased (n - 1)
`momentum=None` gives a cumulative average (momentum = 1 / num_batches_tracked).
In eval mode the running statistics are used. `correction=1` (a tapegrad extension,
default 0) normalizes with Bessel's correction as the makemore-style model does.
`_BatchNorm` is the shared base: BatchNorm2d only changes `_check_input_dim`.
"""
import numpy as np

from .. import dtypes as _dt
from ..core import tape as _tape
from .._tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


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


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims (biased variance), then an
    elementwise affine map (weight ones, bias zeros at init)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dt = _dtype(dtype)
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dt))
            if bias:
                self.bias = Parameter(np.zeros(self.normalized_shape, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        # the parameters read from the registry, as Linear.forward does (the same values)
        p = self._parameters
        if type(self) is LayerNorm and "weight" in p and "bias" in p:
            return F.layer_norm(input, self.normalized_shape, p["weight"], p["bias"], self.eps)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")

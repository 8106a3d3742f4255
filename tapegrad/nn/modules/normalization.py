"""torch.nn.modules.normalization: `GroupNorm`, `LayerNorm` (the fused `layer_norm` table
entry), `LocalResponseNorm` (across channels) and `RMSNorm` (divide by the root mean
square over the trailing `normalized_shape` dims, then an elementwise scale, as
LLaMA-style blocks use it). Initialisation and
argument names are torch's: weight ones, bias zeros.
"""
import numpy as np

from ... import dtypes as _dt
from .. import functional as F
from .. import init
from ..functional.normalization import group_norm, rms_norm
from .batchnorm import _dtype
from .module import Module
from ..parameter import Parameter

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]

class GroupNorm(Module):
    """Group normalization over (N, C, *) input; statistics per sample and channel group."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        dt = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        if affine:
            self.weight = Parameter(np.empty((num_channels,), dtype=dt))
            if bias:
                self.bias = Parameter(np.empty((num_channels,), dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


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


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            dt = _dt.as_dtype(dtype) or _dt.get_default_dtype()
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dt))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalize each channel by its `size` neighbouring channels' squares:
    x / (k + alpha / size * sum x^2)^beta (AlexNet's local response normalization)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

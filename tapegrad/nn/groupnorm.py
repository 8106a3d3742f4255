"""`nn.GroupNorm(num_groups, num_channels, eps, affine, bias=)`: weight ones, bias zeros
(torch's init and argument names)."""
import numpy as np

from .. import dtypes as _dt
from . import init
from .functional_group_norm import group_norm
from .module import Module
from .parameter import Parameter

__all__ = ["GroupNorm"]


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

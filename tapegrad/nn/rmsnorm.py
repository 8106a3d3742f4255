"""`RMSNorm` (torch.nn.RMSNorm): divide by the root mean square over the trailing
`normalized_shape` dims, then an elementwise scale (weight ones at init, no bias), as
LLaMA-style transformer blocks use it. The arithmetic is `F.rms_norm`'s."""
import numpy as np

from .. import dtypes as _dt
from . import init
from .functional_normalize import rms_norm
from .module import Module
from .parameter import Parameter

__all__ = ["RMSNorm"]


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

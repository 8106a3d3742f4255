"""More activation modules (GLU, Mish, Hardswish, SELU, CELU, PReLU, RReLU, the shrinks,
...): thin wrappers over `functional_activations2`, with torch's attribute names and
reprs (extra_repr) so that printed models and state_dicts read the same."""
import numpy as np

from .. import dtypes as _dt
from . import functional_activations2 as A
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["GLU", "Mish", "Hardswish", "Hardsigmoid", "SELU", "CELU", "Softsign", "Softshrink",
           "Hardshrink", "Tanhshrink", "LogSigmoid", "Softmin", "Threshold", "PReLU",
           "Softmax2d", "RReLU"]


def _inplace_repr(inplace, sep=", "):
    return f"{sep}inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only argument is `inplace` (its function in `_fn`)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return A.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Mish(_Inplace):
    _fn = staticmethod(A.mish)

    def extra_repr(self):
        return _inplace_repr(self.inplace, "")


class Hardswish(_Inplace):
    _fn = staticmethod(A.hardswish)  # torch's repr shows no inplace


class Hardsigmoid(_Inplace):
    _fn = staticmethod(A.hardsigmoid)


class SELU(_Inplace):
    _fn = staticmethod(A.selu)

    def extra_repr(self):
        return _inplace_repr(self.inplace, "")


class CELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return A.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace)


class Softsign(Module):
    def forward(self, input):
        return A.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return A.tanhshrink(input)


class LogSigmoid(Module):
    def forward(self, input):
        return A.logsigmoid(input)


class Softshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return A.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input):
        return A.hardshrink(input, self.lambd)


class Softmin(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return A.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channel dim of (C, H, W) or (N, C, H, W)."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return input.softmax(-3)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return A.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + _inplace_repr(self.inplace)


class PReLU(Module):
    """leaky ReLU with a learned slope: one (num_parameters=1) or one per channel."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        dt = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        self.weight = Parameter(np.full((num_parameters,), init, dtype=dt))

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return A.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Random slopes in [lower, upper] in training mode, their mean in eval mode."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return A.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace_repr(self.inplace)

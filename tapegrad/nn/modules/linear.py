"""torch.nn.modules.linear: `Identity` and `Linear` (y = x W^T + b), with PyTorch's default
initialisation, and `NonDynamicallyQuantizableLinear`, MultiheadAttention's out_proj class,
which torch defines here but leaves out of `__all__` (word_language_model names it as a
safe global)."""
import numpy as np

from ... import dtypes as _dt
from .. import functional as F
from .. import init
from .lazy import LazyModuleMixin
from .module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


def _empty(shape, dtype):
    return np.empty(shape, dtype=_dt.as_dtype(dtype) or _dt.get_default_dtype())


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b.   x: (*, in_features) -> y: (*, out_features).

    weight (out_features, in_features) ~ kaiming_uniform_(a=sqrt(5)), i.e.
    U(-1/sqrt(in_features), 1/sqrt(in_features)); bias ~ the same bound. The table
    entry `linear` has the rules dX = dY W, dW = dY^T X, db = dY.sum(0).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._default_layer_init_(self.weight, self.bias, fill_bias_without_fan_in=True)

    def forward(self, input):
        # the parameters read from the registry: `self.weight` is a failed attribute
        # lookup, an AttributeError and then Module.__getattr__ (~0.85 us each, measured).
        # The same values: a name registered as a parameter cannot also be an instance
        # attribute; a subclass (which may define `weight` otherwise) takes the general path.
        p = self._parameters
        if type(self) is Linear and "weight" in p and "bias" in p:
            return F.linear(input, p["weight"], p["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T W x2 + b per output feature: x1 (*, in1), x2 (*, in2) -> (*, out).
    weight (out, in1, in2) and bias (out,) ~ U(-1/sqrt(in1), 1/sqrt(in1)), as torch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / np.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """torch's class name for MHA's `out_proj` (a plain Linear), so reprs match."""


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose `in_features` is the last dimension of its first input
    (`LazyLinear(out_features, bias=True)`); after that forward it is a `Linear`."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # weight and bias are placeholders until forward
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        if self.in_features == 0:  # materialized by load_state_dict: the input tells
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     "is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]

"""torch.nn.modules.conv: `Conv1d/2d/3d`, `ConvTranspose1d/2d/3d` and their Lazy forms
(in_channels from the first input, modules/lazy.py) with PyTorch's arguments, defaults
and initialisation.

    Conv2d: x (N, C_in, H, W) -> y (N, C_out, OH, OW),
            OH = floor((H + 2p - d (k - 1) - 1) / s) + 1
    weight (C_out, C_in / groups, kh, kw) ~ kaiming_uniform_(a=sqrt(5)),
            i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = C_in/groups * kh * kw;
    bias (C_out,) ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

`padding_mode` other than 'zeros' pads explicitly with `F.pad` (reflect, replicate,
circular) and then convolves without padding, as PyTorch does.
"""

import numpy as np

from ... import dtypes as _dt
from .. import functional as F
from .. import init
from .lazy import LazyModuleMixin
from .module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(a) for a in v)
    if len(v) == 1 and n > 1:
        return v * n
    return v


class _ConvNd(Module):
    _nd = 2

    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        dt = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        # weight: (out, in/groups, *k) for a convolution, (in, out/groups, *k) transposed
        wshape = ((in_channels, out_channels // groups) if self.transposed
                  else (out_channels, in_channels // groups))
        self.weight = Parameter(np.empty(wshape + self.kernel_size, dtype=dt))
        if bias:
            self.bias = Parameter(np.empty((out_channels,), dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._default_layer_init_(self.weight, self.bias, fill_bias_without_fan_in=False)

    def _explicit_pad(self):
        """F.pad amounts (last dim first) for a non-'zeros' padding_mode."""
        pairs = []
        for i, k in enumerate(self.kernel_size):
            if self.padding == "same":
                total = self.dilation[i] * (k - 1)
                pairs.append((total // 2, total - total // 2))
            elif self.padding == "valid":
                pairs.append((0, 0))
            else:
                pairs.append((self.padding[i], self.padding[i]))
        out = []
        for b, a in reversed(pairs):
            out += [b, a]
        return tuple(out)

    def _conv_forward(self, input, conv):
        """`conv` (F.conv1d or F.conv2d) with this module's weight, bias and arguments; a
        padding_mode other than 'zeros' pads explicitly first and convolves unpadded."""
        if self.padding_mode != "zeros":
            x = F.pad(input, self._explicit_pad(), mode=self.padding_mode)
            return conv(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-D convolution (cross-correlation) over (N, C_in, H, W) or (C_in, H, W) input."""

    _nd = 2

    def forward(self, input):
        return self._conv_forward(input, F.conv2d)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input."""

    _nd = 1

    def forward(self, input):
        return self._conv_forward(input, F.conv1d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, "
                             f"not {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype,
                         output_padding=output_padding)

    def _output_padding(self, input, output_size):
        """output_padding that makes the output exactly `output_size` (as PyTorch)."""
        if output_size is None:
            return self.output_padding
        n = self._nd
        output_size = tuple(int(v) for v in output_size)[-n:]
        spatial = tuple(input.shape[-n:])
        out = []
        for i in range(n):
            lo = ((spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                  + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            hi = lo + self.stride[i] - 1
            if not lo <= output_size[i] <= hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of {spatial})")
            out.append(output_size[i] - lo)
        return tuple(out)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution: (N, C_in, H, W) -> (N, C_out, H_out, W_out) with
    H_out = (H - 1) s - 2p + d (k - 1) + output_padding + 1. weight (C_in, C_out/groups,
    kh, kw), initialised like Conv2d (fan_in = C_out/groups * kh * kw, as PyTorch)."""

    _nd = 2

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution: (N, C_in, L) -> (N, C_out, L_out)."""

    _nd = 1

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    _nd = 3

    def forward(self, input):
        return self._conv_forward(input, F.conv3d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""

    _nd = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share (torch's `_LazyConvXdMixin`): `in_channels` is
    dimension 1 of the first (batched) input, dimension 0 of an unbatched one."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _lazy_placeholders(self, out_channels, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def _get_in_channels(self, input):
        n = self._nd + 1
        if input.dim() not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: "
                               f"{list(input.shape)}")
        return input.shape[1] if input.dim() == n + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose `in_channels` comes from the first input; then a `Conv1d`."""

    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose `in_channels` comes from the first input; then a `Conv2d`."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A Conv3d whose `in_channels` comes from the first input; then a `Conv3d`."""

    cls_to_become = Conv3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ConvTranspose1d whose `in_channels` comes from the first input."""

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ConvTranspose2d whose `in_channels` comes from the first input."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ConvTranspose3d whose `in_channels` comes from the first input."""

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_placeholders(out_channels, bias, dtype)

"""torch.nn.modules.pooling: `MaxPool1d/2d/3d`, `AvgPool1d/2d/3d`, `AdaptiveAvgPool1d/2d/3d`,
`AdaptiveMaxPool1d/2d/3d` (PyTorch's arguments and reprs). The work is in
`nn/functional/pooling.py` / `ops/rules/conv.py`."""
from .. import functional as F
from ..functional._window_args import _single
from ..functional.pooling import _nuple
from .module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """Max over kh x kw windows; the gradient goes to each window's (first) maximum."""

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """Max over kd x kh x kw windows of (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """Mean over kh x kw windows (zero padding counted unless count_include_pad=False)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    """Mean over kd x kh x kw windows (the arguments of AvgPool2d)."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size),
        self.stride = (_single(stride),) if stride is not None else self.kernel_size
        self.padding = _single(padding),
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    """Average over adaptive windows so that the output is `output_size` (None keeps a dim)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"



class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)



class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """(sum over each window of x^p)^(1/p) over (N, C, L) input."""

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """(sum over each window of x^p)^(1/p) over (N, C, H, W) input."""

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """(sum over each window of x^p)^(1/p) over (N, C, D, H, W) input."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class _MaxUnpoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._nd
        self.kernel_size = _nuple(kernel_size, n, "kernel_size")
        self.stride = _nuple(stride if stride is not None else kernel_size, n, "stride")
        self.padding = _nuple(padding, n, "padding")

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Values back at the positions MaxPool1d(return_indices=True) took them from."""

    _nd = 1

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Values back at the positions MaxPool2d(return_indices=True) took them from."""

    _nd = 2

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Values back at the positions MaxPool3d(return_indices=True) took them from."""

    _nd = 3

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd, name = self._nd, type(self).__name__
        if self._nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _nuple(kernel_size, nd, "kernel_size")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _nuple(output_size, nd, "output_size") \
            if output_size is not None else None
        self.output_ratio = (tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
                             else (output_ratio,) * nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        f = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return f(input, self.kernel_size, self.output_size, self.output_ratio,
                 self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (F.fractional_max_pool2d): pseudo-random window starts,
    fixed by `_random_samples` (N, C, 2) when given."""
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling (F.fractional_max_pool3d)."""
    _nd = 3

"""`AdaptiveMaxPool1d` / `AdaptiveMaxPool2d` over `functional_adaptive_max` (PyTorch's
arguments and reprs)."""
from . import functional_adaptive_max as F
from .module import Module


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

"""torch.nn.modules.dropout: `Dropout` zeroes elements with probability p and scales by
1/(1-p) in training mode (identity in eval mode); `Dropout2d` drops whole channels."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout2d"]


class _DropoutNd(Module):
    """What every dropout module shares (PyTorch's `_DropoutNd`): the check 0 <= p <= 1,
    the `p` and `inplace` attributes and the repr. Subclasses define `forward`."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    def forward(self, input):
        return F.dropout(input, self.p, self.training)


class Dropout2d(_DropoutNd):
    """Zero each whole channel x[n, c] with probability p, scale the rest by 1/(1-p).

    Input (N, C, H, W) or (C, H, W). Identity in eval mode."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)

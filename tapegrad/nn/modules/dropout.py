"""torch.nn.modules.dropout: `Dropout` zeroes elements with probability p and scales by
1/(1-p) in training mode (identity in eval mode); `Dropout1d/2d/3d` drop whole channels;
`AlphaDropout` / `FeatureAlphaDropout` are the SELU-preserving forms."""
from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout"]


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


class Dropout1d(_DropoutNd):
    """Zero each whole channel x[n, c] of (N, C, L) or (C, L) input with probability p."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training)


class Dropout3d(_DropoutNd):
    """Zero each whole channel x[n, c] of (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks): keeps zero mean and unit variance."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)

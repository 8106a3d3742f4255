"""`BatchNorm2d` (batch norm over (N, H, W) per channel, the fused `batch_norm` entry of
`ops/rules/nn.py`) and `Dropout2d` (drops whole channels)."""
from . import functional_conv as F
from .dropout import _DropoutNd
from .normalization import _BatchNorm


class BatchNorm2d(_BatchNorm):
    """y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c, statistics over (N, H, W).

    Input (N, C, H, W). Training: batch statistics (biased variance), running statistics
    updated with momentum (unbiased variance); eval: running statistics.
    """

    _reads_registry = True  # see BatchNorm1d

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class Dropout2d(_DropoutNd):
    """Zero each whole channel x[n, c] with probability p, scale the rest by 1/(1-p).

    Input (N, C, H, W) or (C, H, W). Identity in eval mode."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)

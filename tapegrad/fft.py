"""tapegrad.fft: torch.fft's namespace. tapegrad has no complex dtypes, so of torch.fft
it holds the real-valued helpers: fftshift and ifftshift (ops/spectral.py)."""
from .ops.spectral import fftshift, ifftshift

__all__ = ["fftshift", "ifftshift"]

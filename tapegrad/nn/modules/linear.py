"""torch.nn.modules.linear: Identity, Linear (re-exported from tapegrad.nn), and
NonDynamicallyQuantizableLinear, MultiheadAttention's out_proj class, which torch defines
here but leaves out of `__all__` (word_language_model names it as a safe global)."""
from ..linear import Identity, Linear
from ..multihead import NonDynamicallyQuantizableLinear  # noqa: F401

__all__ = ["Identity", "Linear"]

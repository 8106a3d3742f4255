"""torch.nn.modules.dropout: Dropout, Dropout2d (re-exported from tapegrad.nn)."""
from ..dropout import Dropout
from ..norm2d import Dropout2d

__all__ = ["Dropout", "Dropout2d"]

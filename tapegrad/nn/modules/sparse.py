"""torch.nn.modules.sparse: Embedding (re-exported from tapegrad.nn)."""
from ..sparse import Embedding

__all__ = ["Embedding"]

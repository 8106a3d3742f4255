"""torch.nn.modules.transformer: the transformer layers (re-exported from tapegrad.nn)."""
from ..transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                           TransformerEncoder, TransformerEncoderLayer)

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]

"""`torch._dynamo`'s public corner that tg.compile honours: `exc` (the exception a
`fullgraph=True` capture raises at a graph break), `config` (`recompile_limit`) and
`reset()` (forget every capture)."""
from . import config, exc
from .reset import reset

__all__ = ["config", "exc", "reset"]

"""`tg.utils`: helpers around the core (`tg.utils.data`: datasets and loaders)."""
from . import data
from . import checkpoint, memory

__all__ = ["data", "checkpoint", "memory"]

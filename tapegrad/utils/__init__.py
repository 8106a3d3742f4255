"""`tg.utils`: helpers around the core (`tg.utils.data`: datasets and loaders)."""
from . import data
from . import checkpoint, memory
from .grad_monitor import GradHealthWarning, GradMonitor

__all__ = ["data", "checkpoint", "memory", "GradMonitor", "GradHealthWarning"]

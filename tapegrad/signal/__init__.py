"""tapegrad.signal: torch.signal's namespace (its one subpackage, `windows`)."""
from . import windows

__all__ = ["windows"]

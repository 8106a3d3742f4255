"""`tapegrad.distributed.nn` (torch.distributed.nn): collectives that autograd can
differentiate through (`functional.all_reduce`)."""
from . import functional  # noqa: F401

__all__ = ["functional"]

"""`tg.cpu`: torch.cpu's device queries (the CPU is the one device tapegrad has) and the
deprecated `tg.cpu.amp.autocast`."""
from . import amp  # noqa: F401  torch.cpu.amp.autocast(...)

__all__ = ["amp", "current_device", "device_count", "is_available", "is_initialized",
           "synchronize"]


def is_available():
    return True


def is_initialized():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Every op has finished when it returns: nothing to wait for."""

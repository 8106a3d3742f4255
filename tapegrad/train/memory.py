"""Refuse a training job that cannot fit in memory, before allocating anything.

`--hidden 100000000` asks for a 784 x 10^8 weight matrix (313 GB in float32, four times
that with gradients and Adam's moments); NumPy would raise MemoryError half-way through
building the model, or the OS would start swapping. Each task estimates its bytes from
the flags and calls `check_fits`, which compares with the memory available now.
"""
import os

from .common import CLIError

__all__ = ["available_bytes", "check_fits", "human"]


def available_bytes():
    """Memory available to a new allocation: MemAvailable on Linux, else physical
    memory, else None (unknown: no check)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def human(n):
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.3g} EB"  # pragma: no cover


def check_fits(nbytes, what):
    """CLIError if `nbytes` (an estimate for `what`, e.g. "--hidden 100000000") exceeds
    the available memory."""
    avail = available_bytes()
    if avail is not None and nbytes > avail:
        raise CLIError(f"{what} needs about {human(nbytes)} of memory; this machine has "
                       f"{human(avail)} available (use smaller sizes)")

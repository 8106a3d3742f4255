"""Allocator tuning (opt-in): keep freed large NumPy buffers inside the process heap.

Why: every op allocates its output and every backward its gradients; arrays of more
than ~128 KB come from glibc's `mmap` and go back to the OS on free, so the next step's
arrays of the same sizes are fresh pages the kernel must fault in and zero. On the LeNet
conv bench this page-fault traffic was more than half of tapegrad's time (15.6 ms ->
6.8 ms fwd+bwd once the memory is kept); PyTorch CPU pays the same cost through glibc.

`keep_freed_memory()` raises glibc's mmap threshold (to 32 MB, its maximum on 64-bit)
and trim threshold, so freed buffers are reused (what PyTorch's caching allocator
does on GPU). The price: the process keeps its peak heap instead of returning it.
Linux/glibc only; elsewhere it does nothing and returns False. Equivalent to starting
Python with MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824.
"""
import ctypes
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_memory(mmap_threshold=32 * 2 ** 20, trim_threshold=2 ** 30):
    """Tune glibc malloc for array workloads; returns True when applied."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold))
                and mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)))

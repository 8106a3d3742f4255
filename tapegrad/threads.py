"""torch.set_num_threads / get_num_threads and the interop pair, on NumPy's thread pools.

tapegrad's parallel work is NumPy's: the BLAS library (OpenBLAS, MKL, ...) and any
OpenMP runtime it loaded. `set_num_threads(n)` limits those pools through threadpoolctl
(it finds the loaded libraries and calls their own setters); `get_num_threads()` is what
the BLAS pool has. tapegrad runs no inter-op pool: the interop pair keeps torch's
checks and one-shot rule and records the number, which nothing reads.
"""
import numbers
import os

# threadpoolctl is imported on first use: finding the loaded libraries walks the process's
# shared objects, which `import tapegrad` should not pay for.
_interop = {"n": None}


def _check(name, n):
    # bool is an int to Python but torch refuses it like any non-int
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return int(n)


def _controller():
    from threadpoolctl import ThreadpoolController
    return ThreadpoolController()


def set_num_threads(int):  # noqa: A002  torch's parameter name
    """Limit the BLAS and OpenMP pools NumPy uses to `int` threads."""
    n = _check("set_num_threads", int)
    _controller().limit(limits=n)


def get_num_threads():
    """The BLAS pool's thread count (the largest, if several BLAS libraries are loaded)."""
    pools = _controller().select(user_api="blas").info()
    if not pools:
        return 1          # no BLAS loaded: NumPy computes on the calling thread
    return max(p["num_threads"] for p in pools)


def set_num_interop_threads(int):  # noqa: A002  torch's parameter name
    n = _check("set_num_interop_threads", int)
    if _interop["n"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop["n"] = n


def get_num_interop_threads():
    """The number set, else torch's default: the CPUs this process may use."""
    if _interop["n"] is not None:
        return _interop["n"]
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:            # not on Linux
        return os.cpu_count() or 1

"""Every rank must call a collective with the same tensor shape and dtype: checked.

MPI cannot tell: an all_reduce of 4 elements on one rank against 2 on another, or
float32 against float64, completes and leaves garbage (torch's gloo fails the job).
Before each tensor collective the ranks exchange a short text fingerprint of the call
(its name, dtype, shape, op, root) in one small MPI_Iallgather, bounded by the group's
timeout; if they differ, every rank raises the same RuntimeError naming each rank's
call, before any data moves (so the group stays usable if the error is caught).
"""
import hashlib

import numpy as np

from .process_group import ranks_of, timeout_of, wait_all

__all__ = ["describe", "check_same"]

_WIDTH = 192  # bytes per rank's fingerprint; longer ones keep a digest of the rest


def describe(what, array=None, **more):
    """`what(shape=[...], dtype=..., k=v ...)`: the call as one rank sees it."""
    parts = []
    if array is not None:
        parts += [f"shape={list(array.shape)}", f"dtype={array.dtype}"]
    parts += [f"{k}={v}" for k, v in more.items()]
    return f"{what}({', '.join(parts)})"


def _encode(text):
    raw = text.encode()
    if len(raw) > _WIDTH:
        digest = hashlib.sha1(raw).hexdigest()[:16].encode()
        raw = raw[:_WIDTH - 20] + b"...#" + digest
    return np.frombuffer(raw.ljust(_WIDTH, b"\0"), dtype=np.uint8)


def _decode(row):
    return bytes(row).rstrip(b"\0").decode(errors="replace")


def check_same(comm, what, text):
    """Raise a RuntimeError on every rank of `comm` unless all passed the same `text`
    (ranks are named by their global rank)."""
    n = comm.Get_size()
    if n == 1:
        return
    mine = _encode(text)
    every = np.empty((n, _WIDTH), dtype=np.uint8)
    wait_all([comm.Iallgather(mine, every)], what, timeout_of(comm), peers=ranks_of(comm))
    if (every == every[0]).all():
        return
    names = ranks_of(comm) or range(n)
    calls = ", ".join(f"rank {r} runs {_decode(row)}" for r, row in zip(names, every))
    raise RuntimeError(f"{what}: Detected mismatch between collectives on ranks: {calls}. "
                       "Every rank must pass tensors of the same shape and dtype (and the "
                       "same op and root) to a collective.")

"""How batches cross from a worker process to the main process: pickled to bytes.

The worker pickles each batch itself (not the queue's background thread), so a batch
that cannot be pickled becomes an error the main process re-raises instead of a silent
hang. Tensors travel as their NumPy array plus the leaf's requires_grad flag: the autograd
history of a non-leaf tensor cannot cross processes (its backward closures do not
pickle), and, as torch, sending one is an error that says to detach() it first.
"""
import io
import os
import pickle
import queue
import select
import struct
import time

from ..._tensor import Tensor

__all__ = ["dumps", "loads", "Receiver"]


def _rebuild_tensor(array, requires_grad):
    return Tensor._of(array, requires_grad=requires_grad)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if obj.grad_fn is not None:
                raise RuntimeError(
                    "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                    "since autograd does not support crossing process boundaries. If you "
                    "just want to transfer the data, call detach() on the tensor before "
                    "serializing (e.g., putting it on the queue).")
            if type(obj) is Tensor:
                return _rebuild_tensor, (obj._data, obj.requires_grad)
        return NotImplemented


def dumps(obj):
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


loads = pickle.loads


class Receiver:
    """Reads the result queue's messages without ever blocking on a half-written one.

    `multiprocessing.Queue.get(timeout)` waits at most `timeout` for a message to *start*,
    then blocks until its last byte arrives. A worker killed while sending a batch leaves
    the rest of that message unwritten for ever (the pipe's write end stays open in the
    main process and the other workers), so get() would hang. This reader takes the bytes
    that are there (same framing as `Connection.send_bytes`: a 4-byte signed big-endian
    length, -1 announcing an 8-byte one) and keeps a partial message between calls, so the
    caller can look at its workers between waits. The main process is the queue's only
    reader, so the queue's reader lock is not needed. Where the pipe has no file
    descriptor (Windows), it falls back to get().
    """

    def __init__(self, q):
        self._queue = q
        try:
            self._fd = q._reader.fileno()
        except (AttributeError, OSError):
            self._fd = None
        self._buf = bytearray()
        self._need = None  # payload length once the header is read

    def get(self, timeout):
        """The next message (unpickled), or queue.Empty if it is not complete after
        `timeout` seconds."""
        if self._fd is None:
            return self._queue.get(timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._take()
            if msg is not None:
                return msg
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                raise queue.Empty
            chunk = os.read(self._fd, min(self._wanted(), 1 << 20))
            if not chunk:
                raise EOFError("DataLoader result pipe closed")
            self._buf += chunk

    def _wanted(self):
        if self._need is None:
            return (12 if self._buf[:4] == b"\xff\xff\xff\xff" else 4) - len(self._buf)
        return self._need - len(self._buf)

    def _take(self):
        if self._need is None:
            if len(self._buf) < 4:
                return None
            size, = struct.unpack("!i", self._buf[:4])
            if size == -1:
                if len(self._buf) < 12:
                    return None
                size, = struct.unpack("!Q", self._buf[4:12])
            self._need, self._buf = size, bytearray()
        if len(self._buf) < self._need:
            return None
        payload, self._buf, self._need = bytes(self._buf), bytearray(), None
        return pickle.loads(payload)

"""Tensor arrays in memory that other processes map too (Tensor.share_memory_).

A shared array lives in a `Block`: an anonymous shared-memory file (Linux memfd, else an
unlinked file in /dev/shm or the temp dir) mapped MAP_SHARED, so a 'fork' child writes
into the same pages, and the file descriptor itself is what crosses to other processes
(tapegrad/multiprocessing/reductions.py sends it with multiprocessing's DupFd, as torch's
'file_descriptor' strategy does). The file has no name, so nothing can leak: the kernel
frees the memory when the last process holding the descriptor or the mapping lets go,
and Python's resource_tracker is never involved.

The block is the NumPy array's `.base` (it exports `__array_interface__`), so any view of
a shared array finds its block by following `.base`, and the mapping lives exactly as
long as some array uses it. `uid` names the memory across processes: a process that
receives a block it already maps (its own tensor coming back through a queue, the same
tensor sent twice) reuses its mapping.
"""
import mmap
import os
import tempfile
import uuid
import weakref

import numpy as np

__all__ = ["Block", "block_of", "share_array", "attach", "share_memory_", "is_shared"]

# uid -> Block, for the blocks this process maps (weak: a block goes when its arrays go)
_blocks = weakref.WeakValueDictionary()


def _anonymous_file(size):
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("tapegrad-shm", os.MFD_CLOEXEC)
    else:  # macOS and other POSIX systems: a file unlinked at once has no name either
        where = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="tapegrad-shm-", dir=where)
        os.unlink(path)
    try:
        os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Block:
    """`size` bytes of shared memory: the descriptor, its MAP_SHARED mapping, and the
    array interface that lets NumPy arrays use it as their base."""

    def __init__(self, fd, size, uid):
        self.fd, self.size, self.uid = fd, size, uid
        self._mm = mmap.mmap(fd, size)  # MAP_SHARED, read and write: the defaults
        self._raw = np.frombuffer(self._mm, np.uint8)  # only for its address
        self.__array_interface__ = {"shape": (size,), "typestr": "|u1", "version": 3,
                                    "data": (self._raw.ctypes.data, False)}
        # the descriptor is closed with the block (the mapping stays until _raw goes)
        weakref.finalize(self, os.close, fd)
        _blocks[uid] = self

    @property
    def address(self):
        return self.__array_interface__["data"][0]

    def bytes(self):
        """The whole block as a uint8 array whose base is this block."""
        return np.asarray(self)


def block_of(arr):
    """The Block `arr` (an ndarray) lives in, or None."""
    while isinstance(arr, np.ndarray):
        arr = arr.base
    return arr if isinstance(arr, Block) else None


def share_array(arr):
    """A C-contiguous copy of `arr` in a new block (same dtype, shape and values)."""
    size = max(arr.nbytes, 1)  # an empty file cannot be mapped
    block = Block(_anonymous_file(size), size, uuid.uuid4().hex)
    out = np.ndarray(arr.shape, arr.dtype, buffer=block.bytes())
    np.copyto(out, arr)
    return out


def attach(fd, size, uid, dtype, shape, strides, offset):
    """The array a handle describes (reductions.py). Takes ownership of `fd`: a block this
    process already maps is reused and the new descriptor closed."""
    block = _blocks.get(uid)
    if block is None:
        block = Block(fd, size, uid)
    else:
        os.close(fd)
    return np.ndarray(shape, np.dtype(dtype), buffer=block.bytes(), offset=offset,
                      strides=strides)


def handle(arr):
    """(block, (size, uid, dtype, shape, strides, offset)) of a shared array, else None."""
    block = block_of(arr)
    if block is None:
        return None
    offset = arr.__array_interface__["data"][0] - block.address
    return block, (block.size, block.uid, arr.dtype.str, arr.shape, arr.strides, offset)


def share_memory_(t):
    """Tensor.share_memory_: the tensor's array moves into shared memory (values, dtype,
    shape and autograd flags kept); a tensor already shared stays as it is. Returns t.

    Unlike torch, whose views share a storage object, other tensors viewing the old array
    (made before this call) keep the old, private memory."""
    if block_of(t._data) is None:
        t._data = share_array(t._data)
    return t


def is_shared(t):
    return block_of(t._data) is not None

"""How tensors cross processes through multiprocessing (torch.multiprocessing.reductions).

`init_reductions()` registers `reduce_tensor` with multiprocessing's ForkingPickler, the
pickler that sends Process arguments under 'spawn' / 'forkserver', Queue and Pipe items
and Pool tasks. A SHARED tensor (share_memory_) travels as a handle: the descriptor of its
memory block (multiprocessing's DupFd: passed to a spawned child at its start, otherwise
fetched once from the sender's resource sharer, so the sender must still be alive) plus
offset, shape, strides and dtype; the receiver maps the same pages, so its in-place
updates are the sender's. Every other tensor pickles exactly as before (by value): unlike
torch, a plain tensor put on a Queue is not moved to shared memory.
"""
import multiprocessing.resource_sharer  # noqa: F401  loaded before any fork (as torch)
import pickle
from multiprocessing import reduction

from ..core import shared_memory as _shm
from ..nn.parameter import Parameter
from .._tensor import Tensor

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor"]


def rebuild_tensor(cls, fd, meta, requires_grad):
    arr = _shm.attach(fd.detach(), *meta)
    return cls._of(arr, requires_grad=requires_grad)


def reduce_tensor(tensor):
    shared = _shm.handle(tensor._data)
    if shared is None:  # not shared: the ordinary pickle, as without this module
        return tensor.__reduce_ex__(pickle.DEFAULT_PROTOCOL)
    if tensor._rg and tensor.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    block, (size, uid, dtype, shape, strides, offset) = shared
    # .grad is not sent (as torch): each process accumulates its own gradients
    return rebuild_tensor, (type(tensor), reduction.DupFd(block.fd),
                            (size, uid, dtype, shape, strides, offset), tensor._rg)


def init_reductions():
    # ForkingPickler's table is keyed by exact class, as torch registers its classes
    for cls in (Tensor, Parameter):
        reduction.register(cls, reduce_tensor)

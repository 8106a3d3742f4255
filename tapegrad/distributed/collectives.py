"""Collectives on tensors, in place, as torch.distributed: all_reduce, broadcast,
all_gather, reduce_scatter, barrier; `async_op=True` returns a Work to `.wait()`.

Each works on the tensor's NumPy array: MPI reads and writes a contiguous buffer, the
result is written back with `copy_` under no_grad (so the tensor's version counter
moves, as torch's in-place collectives do). `group` is None (the world) or a group
from new_group; `src` is a global rank, as in torch. On a rank outside `group` a
collective warns and does nothing. Every wait is bounded by the group's timeout.
"""
import numpy as np

from ..core.grad_mode import no_grad
from ..ops.creation import from_numpy
from .._tensor import Tensor
from .fingerprint import check_same, describe
from .process_group import arrive, comm_for, mpi, ranks_of, resolve, timeout_of, wait_all

__all__ = ["ReduceOp", "Work", "all_reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "barrier",
           "all_gather_object", "broadcast_object_list"]


class ReduceOp:
    """torch.distributed.ReduceOp: SUM, AVG, PRODUCT, MIN, MAX."""
    SUM = "SUM"
    AVG = "AVG"
    PRODUCT = "PRODUCT"
    MIN = "MIN"
    MAX = "MAX"
    _ALL = ("SUM", "AVG", "PRODUCT", "MIN", "MAX")


def _mpi_op(op, what):
    name = getattr(op, "name", op)        # accept ReduceOp.SUM or "sum"
    name = str(name).upper()
    if name not in ReduceOp._ALL:
        raise ValueError(f"{what}: unknown op {op!r} (choose one of ReduceOp.SUM, AVG, "
                         "PRODUCT, MIN, MAX)")
    MPI = mpi()
    return name, {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN,
                  "MAX": MPI.MAX}[name]


def _check_tensor(t, what, arg="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {arg} must be a tapegrad Tensor, got {type(t).__name__}")


def _member_comm(group, what, **tensors):
    """The communicator of `group` once the tensor arguments (by their names in torch's
    signature) are checked; None on a rank outside the group, where torch's collectives
    do nothing and return None."""
    for arg, t in tensors.items():
        _check_tensor(t, what, arg)
    return comm_for(group, what, non_member_ok=True)


def _write(t, arr):
    """Write `arr` into tensor `t` in place (version counter bumped)."""
    with no_grad():
        t.copy_(from_numpy(np.asarray(arr, dtype=t._data.dtype).reshape(t._data.shape)))


class Work:
    """The handle of an asynchronous collective: `wait()` finishes it (and writes the
    result into the tensor), `is_completed()` polls. `wait(timeout=timedelta)` bounds
    the wait (default: the group's timeout); past it, a RuntimeError (DistBackendError)
    names the collective."""

    def __init__(self, requests, finish=None, what="a collective", comm=None):
        self._requests = list(requests)
        self._finish = finish
        self._done = False
        self._what = what
        self._comm = comm
        self._statuses = None   # a list for the requests' MPI statuses (point_to_point)

    def is_completed(self):
        if not self._done and mpi().Request.Testall(self._requests, self._statuses):
            self._complete()    # now: a finished request cannot be tested again
        return self._done

    def wait(self, timeout=None):
        if not self._done:
            seconds = (timeout.total_seconds() if timeout is not None
                       else timeout_of(self._comm) if self._comm is not None else None)
            wait_all(self._requests, self._what, seconds, self._statuses, self._peers())
            self._complete()
        return True

    def _peers(self):
        # the ranks this work waits for: the group's (point-to-point: the one peer)
        if getattr(self, "_peer_ranks", None) is not None:
            return self._peer_ranks
        return ranks_of(self._comm) if self._comm is not None else None

    def _complete(self):
        self._done = True
        if self._finish is not None:
            self._finish()


def _done(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across ranks; every rank ends with the result, in place."""
    what = "all_reduce"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    name, mop = _mpi_op(op, what)
    buf = np.array(tensor._data, order="C", copy=True)
    if name == "AVG" and buf.dtype.kind not in "fc":
        raise ValueError(f"all_reduce: ReduceOp.AVG needs a floating tensor, got {buf.dtype}")
    check_same(comm, what, describe(what, buf, op=name))
    req = comm.Iallreduce(mpi().IN_PLACE, buf, op=mop)

    def finish():
        _write(tensor, buf / comm.Get_size() if name == "AVG" else buf)
    return _done(Work([req], finish, what, comm), async_op)


def _root(src, group, comm, what, group_src=None, arg="src"):
    """The group rank of global rank `src` (or `group_src` itself), checked. `arg` names
    the argument in the messages ("src", or "dst" for the ops that send to one rank)."""
    if group_src is not None:
        if src is not None:
            raise ValueError(f"{what}: give {arg} or group_{arg}, not both")
        if not isinstance(group_src, (int, np.integer)) or not 0 <= group_src < comm.Get_size():
            raise ValueError(f"{what}: group_{arg}={group_src!r} is not a rank of this group "
                             f"(size {comm.Get_size()})")
        return int(group_src)
    ranks = resolve(group, what)._ranks
    if not isinstance(src, (int, np.integer)) or int(src) not in ranks:
        if len(ranks) == mpi().COMM_WORLD.Get_size():
            raise ValueError(f"{what}: {arg}={src!r} is not a rank of this group (world size "
                             f"{comm.Get_size()})")
        raise ValueError(f"{what}: {arg}={src!r} is not a rank of this group (its global "
                         f"ranks are {list(ranks)})")
    return ranks.index(int(src))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank `src`'s tensor into the same-shaped tensor of every rank, in place."""
    what = "broadcast"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    root = _root(src, group, comm, what, group_src)
    buf = np.array(tensor._data, order="C", copy=True)
    check_same(comm, what, describe(what, buf, src=resolve(group, what)._ranks[root]))
    req = comm.Ibcast(buf, root=root)
    return _done(Work([req], lambda: _write(tensor, buf), what, comm), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] <- rank r's `tensor` (all the same shape and dtype), on every rank."""
    what = "all_gather"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    n = comm.Get_size()
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != n:
        raise ValueError(f"all_gather: tensor_list must be a list of world_size={n} tensors, "
                         f"got {type(tensor_list).__name__} of length "
                         f"{len(tensor_list) if hasattr(tensor_list, '__len__') else '?'}")
    for i, t in enumerate(tensor_list):
        _check_tensor(t, what, f"tensor_list[{i}]")
        if t._data.shape != tensor._data.shape:
            raise ValueError(f"all_gather: tensor_list[{i}] has shape {list(t._data.shape)} but "
                             f"tensor has shape {list(tensor._data.shape)}")
    send = np.ascontiguousarray(tensor._data)
    recv = np.empty((n,) + send.shape, dtype=send.dtype)
    check_same(comm, what, describe(what, send))
    req = comm.Iallgather(send, recv)

    def finish():
        for t, part in zip(tensor_list, recv):
            _write(t, part)
    return _done(Work([req], finish, what, comm), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor (world_size * N, ...) <- the ranks' input tensors (N, ...), stacked."""
    what = "all_gather_into_tensor"
    comm = _member_comm(group, what, output_tensor=output_tensor, input_tensor=input_tensor)
    if comm is None:
        return None
    n = comm.Get_size()
    if output_tensor._data.size != n * input_tensor._data.size:
        raise ValueError(f"{what}: output_tensor has {output_tensor._data.size} elements; "
                         f"expected world_size ({n}) x {input_tensor._data.size}")
    send = np.ascontiguousarray(input_tensor._data)
    recv = np.empty(n * send.size, dtype=send.dtype)
    check_same(comm, what, describe(what, send, output_dtype=output_tensor._data.dtype))
    req = comm.Iallgather(send, recv)
    return _done(Work([req], lambda: _write(output_tensor, recv), what, comm), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output on rank r <- the reduction over ranks of input_list[r]."""
    what = "reduce_scatter"
    comm = _member_comm(group, what, output=output)
    if comm is None:
        return None
    n = comm.Get_size()
    name, mop = _mpi_op(op, what)
    if not isinstance(input_list, (list, tuple)) or len(input_list) != n:
        raise ValueError(f"reduce_scatter: input_list must be a list of world_size={n} "
                         "tensors")
    for i, t in enumerate(input_list):
        _check_tensor(t, what, f"input_list[{i}]")
        if t._data.shape != output._data.shape:
            raise ValueError(f"reduce_scatter: input_list[{i}] has shape {list(t._data.shape)} "
                             f"but output has shape {list(output._data.shape)}")
    send = np.ascontiguousarray(np.stack([t._data for t in input_list]).astype(
        output._data.dtype, copy=False))
    recv = np.empty(output._data.shape, dtype=send.dtype)
    check_same(comm, what, describe(what, send, op=name))
    req = comm.Ireduce_scatter_block(send, recv, op=mop)

    def finish():
        _write(output, recv / n if name == "AVG" else recv)
    return _done(Work([req], finish, what, comm), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output (N, ...) on rank r <- the reduction of rows [r*N, (r+1)*N) of `input`."""
    what = "reduce_scatter_tensor"
    comm = _member_comm(group, what, output=output, input=input)
    if comm is None:
        return None
    n = comm.Get_size()
    name, mop = _mpi_op(op, what)
    if input._data.size != n * output._data.size:
        raise ValueError(f"{what}: input has {input._data.size} elements; expected "
                         f"world_size ({n}) x output's {output._data.size}")
    send = np.ascontiguousarray(input._data).astype(output._data.dtype, copy=False)
    recv = np.empty(output._data.shape, dtype=send.dtype)
    check_same(comm, what, describe(what, input._data, output_dtype=output._data.dtype,
                                    op=name))
    req = comm.Ireduce_scatter_block(send, recv, op=mop)
    return _done(Work([req], lambda: _write(output, recv / n if name == "AVG" else recv),
                      what, comm), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank got here."""
    comm = comm_for(group, "barrier", non_member_ok=True)
    if comm is None:
        return None
    return _done(Work([comm.Ibarrier()], None, "barrier", comm), async_op)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] <- rank r's picklable `obj`."""
    comm = comm_for(group, "all_gather_object", non_member_ok=True)
    if comm is None:
        return None
    arrive(comm, "all_gather_object")
    gathered = comm.allgather(obj)
    if len(object_list) != len(gathered):
        raise ValueError(f"all_gather_object: object_list must have world_size="
                         f"{len(gathered)} entries, got {len(object_list)}")
    object_list[:] = gathered


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace object_list's items on every rank by rank `src`'s (default 0)."""
    what = "broadcast_object_list"
    comm = comm_for(group, what, non_member_ok=True)
    if comm is None:
        return None
    if src is None and group_src is None:
        src = 0
    root = _root(src, group, comm, what, group_src)
    arrive(comm, what)
    object_list[:] = comm.bcast(list(object_list), root=root)

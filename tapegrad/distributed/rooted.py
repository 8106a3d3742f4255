"""The collectives with one root rank, as torch.distributed: reduce (the result on
`dst` only), gather (every rank's tensor into `gather_list` on `dst`), scatter (the
pieces of `scatter_list` on `src`, one per rank), their object versions gather_object
and scatter_object_list, and monitored_barrier (rank 0 names the ranks that did not
come). `dst` / `src` are global ranks (or `group_dst` / `group_src` group ranks);
gather's and scatter's default to rank 0, reduce needs one, as in torch.
"""

import numpy as np

from .collectives import (ReduceOp, Work, _check_tensor, _done, _member_comm, _mpi_op, _root,
                          _write)
from .fingerprint import check_same, describe
from .process_group import (DistBackendError, arrive, comm_for, resolve, timeout_of,
                            wait_all)

__all__ = ["reduce", "gather", "scatter", "gather_object", "scatter_object_list",
           "monitored_barrier"]


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """The reduction of every rank's `tensor` into rank `dst`'s, in place; the other
    ranks' tensors are left as they were."""
    what = "reduce"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    if dst is None and group_dst is None:
        raise ValueError("Must specify global_rank or group_rank")
    root = _root(dst, group, comm, what, group_dst, arg="dst")
    name, mop = _mpi_op(op, what)
    send = np.ascontiguousarray(tensor._data)
    if name == "AVG" and send.dtype.kind not in "fc":
        raise ValueError(f"reduce: ReduceOp.AVG needs a floating tensor, got {send.dtype}")
    mine = comm.Get_rank() == root
    recv = np.empty_like(send) if mine else None
    check_same(comm, what, describe(what, send, op=name,
                                    dst=resolve(group, what)._ranks[root]))
    req = comm.Ireduce(send, recv, op=mop, root=root)

    def finish():
        if mine:
            _write(tensor, recv / comm.Get_size() if name == "AVG" else recv)
    return _done(Work([req], finish, what, comm), async_op)


def _same_shapes(tensors, like, what, arg):
    for i, t in enumerate(tensors):
        _check_tensor(t, what, f"{arg}[{i}]")
        if t._data.shape != like._data.shape:
            raise ValueError(f"{what}: {arg}[{i}] has shape {list(t._data.shape)} but tensor "
                             f"has shape {list(like._data.shape)}")


def _root_list(lst, mine, n, what, arg, side):
    """torch's checks of gather_list / scatter_list: given (world_size tensors) on the
    root, absent (None or empty) elsewhere."""
    if not mine:
        if lst:
            raise ValueError(f"Argument ``{arg}`` must NOT be specified on non-{side} ranks.")
        return
    if not lst:
        raise ValueError(f"Argument ``{arg}`` must be specified on {side} rank.")
    if len(lst) != n:
        raise ValueError(f"{what}: {arg} must hold world_size={n} tensors, got {len(lst)}")


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather_list[r] on rank `dst` (default 0) <- rank r's `tensor`."""
    what = "gather"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    root = _root(0 if dst is None and group_dst is None else dst, group, comm, what,
                 group_dst, arg="dst")
    n, mine = comm.Get_size(), comm.Get_rank() == root
    _root_list(gather_list, mine, n, what, "gather_list", "destination")
    if mine:
        _same_shapes(gather_list, tensor, what, "gather_list")
    send = np.ascontiguousarray(tensor._data)
    recv = np.empty((n,) + send.shape, dtype=send.dtype) if mine else None
    check_same(comm, what, describe(what, send, dst=resolve(group, what)._ranks[root]))
    req = comm.Igather(send, recv, root=root)

    def finish():
        if mine:
            for t, part in zip(gather_list, recv):
                _write(t, part)
    return _done(Work([req], finish, what, comm), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """`tensor` on rank r <- scatter_list[r] of rank `src` (default 0)."""
    what = "scatter"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    root = _root(0 if src is None and group_src is None else src, group, comm, what,
                 group_src)
    n, mine = comm.Get_size(), comm.Get_rank() == root
    _root_list(scatter_list, mine, n, what, "scatter_list", "source")
    send = None
    if mine:
        _same_shapes(scatter_list, tensor, what, "scatter_list")
        send = np.ascontiguousarray(np.stack([t._data for t in scatter_list]).astype(
            tensor._data.dtype, copy=False))
    recv = np.empty(tensor._data.shape, dtype=tensor._data.dtype)
    check_same(comm, what, describe(what, recv, src=resolve(group, what)._ranks[root]))
    req = comm.Iscatter(send, recv, root=root)
    return _done(Work([req], lambda: _write(tensor, recv), what, comm), async_op)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """object_gather_list[r] on rank `dst` (default 0) <- rank r's picklable `obj`."""
    what = "gather_object"
    comm = comm_for(group, what, non_member_ok=True)
    if comm is None:
        return None
    root = _root(0 if dst is None and group_dst is None else dst, group, comm, what,
                 group_dst, arg="dst")
    mine = comm.Get_rank() == root
    if mine and (object_gather_list is None or len(object_gather_list) != comm.Get_size()):
        raise ValueError(f"gather_object: object_gather_list must be a list of world_size="
                         f"{comm.Get_size()} entries on the destination rank")
    arrive(comm, what)
    got = comm.gather(obj, root=root)
    if mine:
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """scatter_object_output_list[0] on rank r <- scatter_object_input_list[r] of rank
    `src` (default 0)."""
    what = "scatter_object_list"
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    comm = comm_for(group, what, non_member_ok=True)
    if comm is None:
        return None
    root = _root(0 if src is None and group_src is None else src, group, comm, what,
                 group_src)
    n = comm.Get_size()
    items = None
    if comm.Get_rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != n:
            raise ValueError(f"scatter_object_list: scatter_object_input_list must hold "
                             f"world_size={n} objects on the source rank")
        items = list(scatter_object_input_list)
    arrive(comm, what)
    scatter_object_output_list[0] = comm.scatter(items, root=root)


_MONITOR_TAG = 32001    # within every MPI's tag range (MPI_TAG_UB >= 32767)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that, on rank 0, names the ranks that did not arrive within `timeout`
    (a timedelta; default the group's): torch's debugging barrier. The others tell rank
    0 they arrived and wait for its go."""
    what = "monitored_barrier"
    comm = comm_for(group, what, non_member_ok=True)
    if comm is None:
        return None
    n, me = comm.Get_size(), comm.Get_rank()
    if n == 1:
        return None
    seconds = timeout.total_seconds() if timeout is not None else timeout_of(comm)
    token = np.zeros(1, dtype=np.uint8)
    if me != 0:
        wait_all([comm.Isend(token, dest=0, tag=_MONITOR_TAG)], what, seconds)
        wait_all([comm.Irecv(np.empty(1, np.uint8), source=0, tag=_MONITOR_TAG)], what,
                 seconds)
        return None
    ranks = resolve(group, what)._ranks
    bufs = [np.empty(1, np.uint8) for _ in range(n - 1)]
    reqs = [comm.Irecv(b, source=k, tag=_MONITOR_TAG) for k, b in zip(range(1, n), bufs)]
    try:
        wait_all(reqs, what, seconds)
    except DistBackendError:
        missing = [ranks[k] for k, r in zip(range(1, n), reqs) if not r.Test()]
        if not wait_all_ranks:
            missing = missing[:1]
        who = (f"Rank {missing[0]}" if len(missing) == 1
               else "Ranks " + ", ".join(map(str, missing)))
        raise DistBackendError(f"{who} failed to pass monitoredBarrier in "
                               f"{int(seconds * 1000)} ms") from None
    wait_all([comm.Isend(token, dest=k, tag=_MONITOR_TAG) for k in range(1, n)], what,
             seconds)
    return None

"""`tapegrad.distributed`: torch.distributed's names on top of MPI (mpi4py).

    import tapegrad.distributed as dist
    dist.init_process_group(backend="gloo")      # "mpi" or "gloo": both mean MPI on CPU
    dist.all_reduce(t, op=dist.ReduceOp.SUM)     # in place, on every rank
    dist.send(t, dst=1); dist.recv(t, src=0)     # point to point (point_to_point.py)
    g = dist.new_group([0, 2])                   # every rank calls it; its own communicator

Ranks are MPI processes started by `tapegrad launch --nproc N script.py` (or by
`mpiexec` directly). The transport is MPI's: nothing here opens sockets. Without the
`[distributed]` extra (mpi4py + an MPI) `is_available()` is False and
`init_process_group` says what to install; the rest of tapegrad does not need it.
"""
from .all_to_all import all_to_all, all_to_all_single
from .backend_names import (Backend, get_default_backend_for_device, get_node_local_rank,
                            is_backend_available, is_torchelastic_launched)
from .collectives import (ReduceOp, Work, all_gather, all_gather_into_tensor,
                          all_gather_object, all_reduce, barrier, broadcast,
                          broadcast_object_list, reduce_scatter, reduce_scatter_tensor)
from .groups import get_global_rank, get_group_rank, get_process_group_ranks, new_group
from .process_group import (DistBackendError, DistError, GroupMember, ProcessGroup,
                            destroy_process_group, get_backend, get_rank, get_world_size,
                            group, init_process_group, is_available, is_initialized,
                            is_mpi_available, is_nccl_available, is_gloo_available)
from .point_to_point import irecv, isend, recv, send
from .rooted import (gather, gather_object, monitored_barrier, reduce, scatter,
                     scatter_object_list)

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "is_mpi_available", "is_gloo_available", "is_nccl_available", "get_rank",
           "get_world_size", "get_backend", "GroupMember", "barrier", "all_reduce",
           "broadcast", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "broadcast_object_list", "reduce_scatter", "reduce_scatter_tensor", "ReduceOp",
           "Work", "new_group", "group", "ProcessGroup", "get_group_rank", "get_global_rank",
           "get_process_group_ranks", "DistError", "DistBackendError", "send", "recv",
           "isend", "irecv", "reduce", "gather", "scatter", "gather_object",
           "scatter_object_list", "monitored_barrier", "all_to_all", "all_to_all_single",
           "Backend", "get_default_backend_for_device", "is_backend_available",
           "get_node_local_rank", "is_torchelastic_launched"]

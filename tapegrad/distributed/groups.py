"""`new_group` and the rank translations of torch.distributed (get_group_rank,
get_global_rank, get_process_group_ranks).

A group is an MPI communicator split off the world one (`MPI_Comm_split`, a
collective over all ranks: as in torch, EVERY rank calls new_group for every group,
members or not). Ranks are sorted; a member's group rank is its index among them. A
rank outside the group gets GroupMember.NON_GROUP_MEMBER, and collectives it runs on
that group warn and do nothing, as torch's.
"""
import datetime

from . import process_group as _pg
from .process_group import GroupMember, ProcessGroup

__all__ = ["new_group", "get_group_rank", "get_global_rank", "get_process_group_ranks"]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of the given global ranks (None: all of them), on its own communicator.
    `timeout` (timedelta) defaults to the world group's; `backend` may name the
    world's ("mpi"/"gloo")."""
    what = "new_group"
    world = _pg.resolve(None, what)
    comm = world._comm
    n, me = comm.Get_size(), comm.Get_rank()
    if use_local_synchronization:
        raise ValueError("MPI backend doesn't support use_local_synchronization=True")
    if backend is not None and str(backend).lower() not in ("mpi", "gloo"):
        raise ValueError(f"new_group: backend {backend!r} is not available (tapegrad's "
                         "groups run on MPI: 'mpi' or 'gloo')")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{timeout}")
    if ranks is None:
        ranks = list(range(n))
    else:
        ranks = sorted(int(r) for r in ranks)
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"ranks list must not contain duplicate entries, got {ranks}")
        if len(ranks) > n:
            raise ValueError("the new group's world size should be less or equal to the "
                             "world size set by init_process_group")
        for r in ranks:
            if r < 0 or r >= n:
                raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {n - 1} "
                                 f"(world_size={n})")
    seconds = world._timeout if timeout is None else timeout.total_seconds()
    _pg.arrive(comm, what)              # a rank that never calls new_group: a timeout
    member = me in ranks
    MPI = _pg.mpi()
    sub = comm.Split(0 if member else MPI.UNDEFINED, me)
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(sub, ranks, seconds, str(len(_pg._State.groups) + 1))
    _pg._State.groups.append(pg)
    return pg


def _member(group, what):
    pg = _pg.resolve(group, what)
    if pg is None:
        raise ValueError(f"{what}: this rank is not a member of the group")
    return pg


def get_process_group_ranks(group):
    """The global ranks of `group`, in group-rank order."""
    return list(_member(group, "get_process_group_ranks")._ranks)


def get_group_rank(group, global_rank):
    """The rank in `group` of the process whose global rank is `global_rank`."""
    pg = _member(group, "get_group_rank")
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def get_global_rank(group, group_rank):
    """The global rank of the process whose rank in `group` is `group_rank`."""
    pg = _member(group, "get_global_rank")
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]

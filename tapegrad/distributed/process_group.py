"""The process groups: the default (world) group, MPI's COMM_WORLD, made by
init_process_group; `new_group` (groups.py) makes others, each on its own MPI
communicator. Also the one wait loop every collective ends in, which enforces the
group's timeout (init_process_group(timeout=...) / new_group(timeout=...)).

mpi4py is imported only by `init_process_group` (importing `mpi4py.MPI` initialises
MPI), so `import tapegrad.distributed` costs nothing on a machine without MPI.
"""
import datetime
import importlib.util
import os
import sys
import time
import traceback
import warnings

from .departures import Departures

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "get_rank", "get_world_size", "get_backend", "GroupMember", "group",
           "ProcessGroup", "DistError", "DistBackendError"]

_BACKENDS = ("mpi", "gloo")
_INSTALL = "pip install 'tapegrad[distributed]' (mpi4py and the mpich wheel)"
# torch's default for gloo (and MPI): 30 minutes
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


class _State:
    comm = None          # mpi4py.MPI.Comm once initialised
    world = None         # the world ProcessGroup
    groups = []          # groups made by new_group (freed by destroy_process_group)
    backend = None
    MPI = None           # the mpi4py.MPI module
    prev_excepthook = None
    on_destroy = []      # what must be freed before MPI is (DDP's shared windows)
    departures = None    # departures.Departures: the ranks that left the job
    announce_at_exit = False


class ProcessGroup:
    """A set of ranks with its own MPI communicator (torch's ProcessGroup): `rank()` is
    this process's rank in the group, `size()` the group's size. Collectives on
    different groups never mix, as each group has its own communicator."""

    def __init__(self, comm, ranks, timeout, name):
        self._comm = comm
        self._ranks = tuple(ranks)          # global ranks, sorted: group rank = index
        self._timeout = timeout
        self.group_name = name

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def __repr__(self):
        return f"ProcessGroup(name={self.group_name!r}, ranks={list(self._ranks)})"


class _WorldMeta(type):
    """`GroupMember.WORLD` / `group.WORLD`: the default group (None before init), as
    torch's."""

    @property
    def WORLD(cls):
        return _State.world


class GroupMember(metaclass=_WorldMeta):
    """torch.distributed.GroupMember: WORLD (the default group) and NON_GROUP_MEMBER,
    what new_group returns on a rank outside the new group."""
    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):
    """torch.distributed.group: `group.WORLD`."""


def is_available():
    """True if mpi4py is installed (without initialising MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available():
    return is_available()


def is_gloo_available():
    # "gloo" is accepted as the name CPU users write; it runs on MPI.
    return is_available()


def is_nccl_available():
    return False


def is_initialized():
    return _State.comm is not None


def _require_init(what):
    if _State.comm is None:
        raise RuntimeError(f"{what}: Default process group has not been initialized, please "
                           "make sure to call init_process_group.")
    return _State.comm


def resolve(group, what):
    """The ProcessGroup meant by `group` (None: the world), or None if this rank is not
    a member (new_group returned GroupMember.NON_GROUP_MEMBER here)."""
    _require_init(what)
    if group is None:
        return _State.world
    if isinstance(group, ProcessGroup):
        if group._comm is None:
            raise ValueError(f"{what}: {group!r} was destroyed (destroy_process_group)")
        return group
    if isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER:
        return None
    raise ValueError(f"{what}: group must be None or a group made by new_group, got "
                     f"{group!r}")


def comm_for(group, what, non_member_ok=False):
    """The MPI communicator of `group`. On a rank outside the group: with
    `non_member_ok` (the collectives), None after torch's warning; else a ValueError."""
    pg = resolve(group, what)
    if pg is None:
        if non_member_ok:
            warnings.warn(f"Running {what} on global rank {_State.comm.Get_rank()} which "
                          "does not belong to the given group.", stacklevel=3)
            return None
        raise ValueError(f"{what}: global rank {_State.comm.Get_rank()} is not a member "
                         "of the given group")
    return pg._comm


def on_destroy(free):
    """Call `free()` when the process group is destroyed (or at exit, before mpi4py
    finalises MPI): MPI objects such as shared windows must be freed while MPI lives."""
    if not _State.on_destroy:
        import atexit
        atexit.register(_run_on_destroy)
    _State.on_destroy.append(free)


def _run_on_destroy():
    frees, _State.on_destroy = _State.on_destroy, []
    for free in reversed(frees):
        free()


def ranks_of(comm):
    """The global ranks of the group whose communicator is `comm` (None: unknown)."""
    for pg in [_State.world] + _State.groups:
        if pg is not None and pg._comm is comm:
            return pg._ranks
    return None


def timeout_of(comm):
    """The timeout (seconds) of the group whose communicator is `comm`."""
    for pg in [_State.world] + _State.groups:
        if pg is not None and pg._comm is comm:
            return pg._timeout
    return DEFAULT_TIMEOUT.total_seconds()


def mpi():
    """The mpi4py.MPI module (after init_process_group)."""
    _require_init("mpi")
    return _State.MPI


class DistError(RuntimeError):
    """torch.distributed.DistError: a failure of the distributed runtime."""
    __module__ = "tapegrad.distributed"


class DistBackendError(DistError):
    """torch.distributed.DistBackendError: raised here when a collective times out."""
    __module__ = "tapegrad.distributed"


def wait_all(requests, what="a collective", timeout=None, statuses=None, peers=None):
    """MPI Waitall that gives the CPU away while it waits, and gives up after `timeout`
    seconds (default: the world group's) with an error naming the collective.

    Why not MPI's Waitall: MPICH's spins; on a machine with more busy processes than
    cores the spinning rank steals the core from the very rank it waits for.
    Test + sched_yield keeps MPI progressing and lets the others run (measured in
    bench/bench_ddp.py). MPI cannot cancel a collective, so after a timeout the
    group is unusable: the error, uncaught, ends the whole job (abort_job).
    `statuses`: a list that receives the requests' MPI statuses (who sent a message to
    a receive from any rank, and how long it was). `peers`: the global ranks the wait
    depends on (None: every rank); if one of them left the job (departures.py) and the
    wait is still unfinished GRACE seconds later, it fails naming that rank."""
    MPI = _State.MPI
    if not requests:
        return
    if MPI.Request.Testall(requests, statuses):
        return
    if timeout is None:
        timeout = _State.world._timeout if _State.world is not None else None
    deadline = None if timeout is None else time.monotonic() + timeout
    yield_ = getattr(os, "sched_yield", None)
    departures = _State.departures
    while not MPI.Request.Testall(requests, statuses):
        gone = departures.overdue(peers) if departures is not None else None
        if gone is not None:
            raise DistBackendError(
                f"{what}: rank {gone} left the job (its script ended or exited, or it "
                f"destroyed its process group) while this rank waits for it in this "
                f"{what}: every rank must run the same collectives")
        if deadline is not None and time.monotonic() > deadline:
            raise DistBackendError(
                f"{what}: timed out after {timeout:g} s waiting for the other ranks (the "
                f"group's timeout, from init_process_group or new_group): another rank "
                f"failed, hangs, or never reached this {what}")
        if yield_ is not None:
            yield_()


def arrive(comm, what):
    """Wait (with the group's timeout) until every rank of `comm` reached this call; the
    blocking MPI calls that follow (pickled objects, communicator splits) then cannot
    hang on a rank that never comes."""
    if comm.Get_size() > 1:
        wait_all([comm.Ibarrier()], what, timeout_of(comm), peers=ranks_of(comm))


def _env_int(name):
    v = os.environ.get(name)
    try:
        return None if v in (None, "") else int(v)
    except ValueError:
        raise ValueError(f"init_process_group: environment variable {name}={v!r} is not an "
                         "integer") from None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's process group: every MPI rank of the launch.

    backend: "mpi", or "gloo" (torch's CPU backend name, accepted and run on MPI), or None
    (= "mpi"). "nccl" is a clear error: tapegrad runs on CPUs. `init_method` and `store`
    are accepted for torch compatibility: MPI's launcher already wired the ranks
    together. `world_size` / `rank`, if given, must agree with MPI's. `timeout` (a
    timedelta, default 30 minutes as torch's gloo) bounds every wait of a collective:
    a rank that waits longer raises a RuntimeError naming the collective.
    Sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE as torchrun does, if unset.
    """
    name = "mpi" if backend is None else str(backend).lower()
    if name.startswith("cpu:"):
        name = name[4:]
    if name in ("nccl", "cuda:nccl") or "nccl" in name:
        raise RuntimeError(f"init_process_group: backend {backend!r} needs CUDA GPUs; "
                           "tapegrad runs on CPUs: use backend='gloo' or 'mpi'")
    if name not in _BACKENDS:
        raise ValueError(f"init_process_group: unknown backend {backend!r} (choose 'mpi' or "
                         "'gloo', both run on MPI)")
    if _State.comm is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{timeout}")
    if timeout is not None and timeout.total_seconds() <= 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {timeout}")
    if not is_available():
        raise RuntimeError(f"init_process_group: tapegrad.distributed needs mpi4py and an "
                           f"MPI library: {_INSTALL}")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    if world_size not in (-1, None) and int(world_size) != comm.Get_size():
        raise ValueError(f"init_process_group: world_size={world_size} but the MPI job has "
                         f"{comm.Get_size()} ranks (start it with tapegrad launch --nproc "
                         f"{world_size})")
    if rank not in (-1, None) and int(rank) != comm.Get_rank():
        raise ValueError(f"init_process_group: rank={rank} but MPI says this process is rank "
                         f"{comm.Get_rank()}")
    env_ws = _env_int("WORLD_SIZE")
    if env_ws is not None and env_ws != comm.Get_size():
        raise ValueError(f"init_process_group: WORLD_SIZE={env_ws} but the MPI job has "
                         f"{comm.Get_size()} ranks")
    _State.comm, _State.backend, _State.MPI = comm, name, MPI
    _State.world = ProcessGroup(comm, range(comm.Get_size()),
                                (timeout or DEFAULT_TIMEOUT).total_seconds(), "0")
    _State.groups = []
    if comm.Get_size() > 1:
        _State.departures = Departures(MPI, comm)
        if not _State.announce_at_exit:
            import atexit
            atexit.register(_announce_departure)  # runs before mpi4py finalises MPI
            _State.announce_at_exit = True
    os.environ.setdefault("RANK", str(comm.Get_rank()))
    os.environ.setdefault("WORLD_SIZE", str(comm.Get_size()))
    os.environ.setdefault("LOCAL_RANK", os.environ.get("MPI_LOCALRANKID", "0"))
    os.environ.setdefault("LOCAL_WORLD_SIZE", os.environ.get("MPI_LOCALNRANKS", "1"))
    _install_abort_on_error()


def destroy_process_group(group=None):
    """Leave the process group: None (or the world group) ends every group; a group
    from new_group frees only that one. MPI itself is finalised at exit by mpi4py."""
    if _State.comm is None:
        return
    if group is not None and group is not _State.world:
        if isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER:
            return
        pg = resolve(group, "destroy_process_group")
        pg._comm.Free()
        pg._comm = None
        _State.groups.remove(pg)
        return
    _run_on_destroy()
    _announce_departure()
    for pg in _State.groups:
        pg._comm.Free()
        pg._comm = None
    if _State.world is not None:
        _State.world._comm = None
    _State.comm = _State.world = None
    _State.groups = []
    _State.backend = None
    if _State.prev_excepthook is not None:
        sys.excepthook = _State.prev_excepthook
        _State.prev_excepthook = None


def _announce_departure():
    """Tell the other ranks this one left (at exit, or destroy_process_group), so that a
    rank still waiting for it in a collective fails instead of hanging."""
    departures, _State.departures = _State.departures, None
    if departures is not None:
        departures.announce()


def get_rank(group=None):
    """This process's rank in `group` (default: the world); -1 outside the group. A
    RuntimeError before init_process_group, as torch."""
    pg = resolve(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The size of `group` (default: the world); -1 on a rank outside it."""
    pg = resolve(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    resolve(group, "get_backend")
    return _State.backend


def abort_job(message, code=1):
    """Print `message` on stderr and end EVERY rank of the job (MPI_Abort): the others
    may be blocked in a collective that this rank will never join, so exiting alone
    would leave them hanging."""
    try:
        sys.stderr.write(message)
        sys.stderr.flush()
        sys.stdout.flush()
        # MPI_Abort tears the job down at once; mpiexec's I/O forwarding may then drop
        # what this rank just wrote (seen: an empty stderr in about 1 run of 3 on a busy
        # machine). Give the forwarder a moment first.
        time.sleep(0.5)
    finally:
        MPI = _State.MPI
        if MPI is None and "mpi4py.MPI" in sys.modules:
            MPI = sys.modules["mpi4py.MPI"]
        if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
            MPI.COMM_WORLD.Abort(code)
        os._exit(code)


def format_rank_error(exc_type, exc, tb):
    rank = os.environ.get("RANK", os.environ.get("PMI_RANK", "?"))
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    lines = "".join(f"[rank {rank}] {line}\n" for line in text.rstrip("\n").split("\n"))
    return (lines + f"[rank {rank}] error: this rank failed with {exc_type.__name__}: {exc}; "
            "aborting all ranks\n")


def _install_abort_on_error():
    """An uncaught exception on one rank ends the whole job (see abort_job)."""
    if _State.prev_excepthook is not None:
        return
    _State.prev_excepthook = sys.excepthook

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt):
            return _State.prev_excepthook(exc_type, exc, tb)
        abort_job(format_rank_error(exc_type, exc, tb))

    sys.excepthook = hook

"""The one process group (MPI's COMM_WORLD): init, destroy, rank, world size.

mpi4py is imported only by `init_process_group` (importing `mpi4py.MPI` initialises
MPI), so `import tapegrad.distributed` costs nothing on a machine without MPI.
"""
import datetime
import importlib.util
import os
import sys
import time
import traceback

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "get_rank", "get_world_size", "get_backend", "GroupMember"]

_BACKENDS = ("mpi", "gloo")
_INSTALL = "pip install 'tapegrad[distributed]' (mpi4py and the mpich wheel)"


class _State:
    comm = None          # mpi4py.MPI.Comm once initialised
    backend = None
    MPI = None           # the mpi4py.MPI module
    prev_excepthook = None


class GroupMember:
    """torch.distributed.GroupMember: `WORLD` is the only group (None means it too)."""
    WORLD = "WORLD"
    NON_GROUP_MEMBER = "NON_GROUP_MEMBER"


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


def comm_for(group, what):
    """The MPI communicator of `group` (only the world group exists)."""
    comm = _require_init(what)
    if group is not None and group != GroupMember.WORLD:
        raise ValueError(f"{what}: only the default (world) group is supported, got "
                         f"group={group!r}")
    return comm


def mpi():
    """The mpi4py.MPI module (after init_process_group)."""
    _require_init("mpi")
    return _State.MPI


def wait_all(requests):
    """MPI Waitall that gives the CPU away while it waits. MPICH's Waitall spins; on a
    machine with more busy processes than cores the spinning rank steals the core from
    the very rank it waits for. Test + sched_yield keeps MPI progressing and lets the
    others run (measured below in bench/bench_ddp.py)."""
    MPI = _State.MPI
    if not requests:
        return
    if MPI.Request.Testall(requests):
        return
    yield_ = getattr(os, "sched_yield", None)
    while not MPI.Request.Testall(requests):
        if yield_ is not None:
            yield_()


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
    (= "mpi"). "nccl" is a clear error: tapegrad runs on CPUs. `init_method`, `store` and
    `timeout` are accepted for torch compatibility: MPI's launcher already wired the
    ranks together. `world_size` / `rank`, if given, must agree with MPI's.
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
        raise TypeError(f"init_process_group: timeout must be a datetime.timedelta, got "
                        f"{type(timeout).__name__}")
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
    os.environ.setdefault("RANK", str(comm.Get_rank()))
    os.environ.setdefault("WORLD_SIZE", str(comm.Get_size()))
    os.environ.setdefault("LOCAL_RANK", os.environ.get("MPI_LOCALRANKID", "0"))
    os.environ.setdefault("LOCAL_WORLD_SIZE", os.environ.get("MPI_LOCALNRANKS", "1"))
    _install_abort_on_error()


def destroy_process_group(group=None):
    """Leave the process group (MPI itself is finalised at exit by mpi4py)."""
    if group is not None and group != GroupMember.WORLD:
        raise ValueError(f"destroy_process_group: only the world group exists, got {group!r}")
    if _State.comm is None:
        return
    _State.comm = None
    _State.backend = None
    if _State.prev_excepthook is not None:
        sys.excepthook = _State.prev_excepthook
        _State.prev_excepthook = None


def get_rank(group=None):
    """This process's rank (a RuntimeError before init_process_group, as torch)."""
    return comm_for(group, "get_rank").Get_rank()


def get_world_size(group=None):
    return comm_for(group, "get_world_size").Get_size()


def get_backend(group=None):
    comm_for(group, "get_backend")
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

"""Per-rank entry point used by `tapegrad launch`: `python -m tapegrad.distributed.run
script.py args` or `... run -m module args`.

Sets the torchrun environment variables from MPI's (MPICH: PMI_RANK, PMI_SIZE,
MPI_LOCALRANKID, MPI_LOCALNRANKS; Open MPI: OMPI_COMM_WORLD_*), then runs the target as
`__main__`. If the target raises (or exits non-zero) on any rank, that rank prints its
traceback prefixed with its rank and aborts the whole MPI job, so no other rank is left
waiting in a collective.
"""
import os
import runpy
import sys

_ENV = {  # torchrun name: (MPICH name, Open MPI name, default)
    "RANK": ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "0"),
    "WORLD_SIZE": ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "1"),
    "LOCAL_RANK": ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "0"),
    "LOCAL_WORLD_SIZE": ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "1"),
}


def set_env(environ=os.environ):
    for name, (mpich, ompi, default) in _ENV.items():
        environ[name] = environ.get(mpich) or environ.get(ompi) or default
    # the rest of torchrun's per-worker variables (one role, one worker group per job):
    # scripts print MASTER_ADDR/PORT, or branch on is_torchelastic_launched(); nothing
    # here listens on the port (MPI's launcher wired the ranks together)
    environ.setdefault("GROUP_RANK", "0")
    environ.setdefault("GROUP_WORLD_SIZE", "1")
    environ["ROLE_RANK"] = environ["RANK"]
    environ["ROLE_WORLD_SIZE"] = environ["WORLD_SIZE"]
    environ.setdefault("ROLE_NAME", "default")
    environ.setdefault("MASTER_ADDR", "127.0.0.1")
    environ.setdefault("MASTER_PORT", "29500")
    environ.setdefault("TORCHELASTIC_RUN_ID", "none")
    environ.setdefault("TORCHELASTIC_RESTART_COUNT", "0")
    environ.setdefault("TORCHELASTIC_MAX_RESTARTS", "0")
    environ.setdefault("TAPEGRAD_LAUNCHED", "1")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv == ["-m"]:
        print("usage: python -m tapegrad.distributed.run (script.py | -m module) [args]",
              file=sys.stderr)
        return 2
    set_env()
    from .process_group import abort_job, format_rank_error, is_available
    if is_available():
        # Initialise MPI now, on every rank: a rank that fails before its script calls
        # init_process_group can then still MPI_Abort the job (a plain exit would leave
        # the ranks that did initialise waiting for it forever).
        from mpi4py import MPI  # noqa: F401
    try:
        if argv[0] == "-m":
            sys.argv = argv[1:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            _mark_finished()
            return 0
        if not isinstance(code, int):
            abort_job(f"[rank {os.environ['RANK']}] {code}\n[rank {os.environ['RANK']}] "
                      "error: this rank exited with an error; aborting all ranks\n", 1)
        abort_job(f"[rank {os.environ['RANK']}] error: this rank exited with code {code}; "
                  "aborting all ranks\n", code)
    except BaseException as e:  # noqa: BLE001  any failure must end the whole job
        abort_job(format_rank_error(type(e), e, e.__traceback__))
    _mark_finished()
    return 0


def _mark_finished():
    """Tell `tapegrad launch` this rank's script finished (launch.py: a rank that
    vanished with status 0 leaves no such file, and the job fails)."""
    directory = os.environ.get("TAPEGRAD_FINISHED_DIR")
    if directory and os.path.isdir(directory):
        try:
            with open(os.path.join(directory, os.environ["RANK"]), "w"):
                pass
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())

"""`tapegrad launch --nproc N [--hostfile FILE] script.py [args]`: run N ranks under MPI,
like `torchrun --nproc-per-node N script.py`.

The launcher is MPI's own `mpiexec` (from the `[distributed]` extra: the mpich wheel puts
it beside the Python interpreter). Each rank starts in `tapegrad.distributed.run`, which
sets RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE from MPI's environment BEFORE the
script runs (scripts such as nanoGPT's read `os.environ['RANK']` before
init_process_group), then runs the script as `__main__`. Several machines: pass MPI's
host file (`--hostfile hosts`, one `host:slots` line per machine); mpiexec starts the
ranks over ssh and the same command works unchanged.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

__all__ = ["find_mpiexec", "launch_command", "launch"]


# The directory where each rank's run.py leaves a file named by its rank once its
# script finished (see launch()).
FINISHED_DIR = "TAPEGRAD_FINISHED_DIR"


class LaunchError(RuntimeError):
    """A launch that cannot start (no mpiexec, bad arguments)."""


def find_mpiexec():
    """mpiexec next to this Python first (the mpich wheel's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise LaunchError("tapegrad launch needs MPI's mpiexec, which was not found: "
                          "pip install 'tapegrad[distributed]' (mpi4py and the mpich wheel)")
    return found


def launch_command(nproc, target, hostfile=None, module=False):
    """The mpiexec argv that runs `target` (a script path and its arguments, or with
    module=True a module name and arguments) on `nproc` ranks."""
    if not isinstance(nproc, int) or nproc < 1:
        raise LaunchError(f"--nproc must be a positive integer, got {nproc!r}")
    cmd = [find_mpiexec(), "-n", str(nproc)]
    if hostfile is not None:
        if not os.path.isfile(hostfile):
            raise LaunchError(f"--hostfile {hostfile} does not exist")
        cmd += ["-f", hostfile]
    cmd += [sys.executable, "-m", "tapegrad.distributed.run"]
    if module:
        cmd.append("-m")
    return cmd + list(target)


def _first_host(hostfile):
    """The host of the first entry of an MPI host file (`host[:slots]` lines, # comments)."""
    with open(hostfile) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                return line.split(":")[0].split()[0]
    return "127.0.0.1"


def launch(nproc, target, hostfile=None, module=False, env=None):
    """Run the job; returns mpiexec's exit code (non-zero if any rank failed), or 1 if
    mpiexec reports success but a rank never finished its script.

    Why the second check: a rank that ends with os._exit(0) mid-training (no MPI_Finalize)
    makes MPICH's mpiexec tear the job down and report 0, the other ranks unfinished.
    torchrun exits 1 there. Each rank's run.py leaves a marker file when its script
    finished; on one machine (no host file: the others' files are not visible here)
    a missing marker turns success into failure."""
    cmd = launch_command(nproc, target, hostfile=hostfile, module=module)
    env = dict(os.environ if env is None else env)
    # torchrun's rule: one OpenMP/BLAS thread per rank unless the user chose otherwise,
    # so that N ranks on N cores do not oversubscribe them.
    if "OMP_NUM_THREADS" not in env and nproc > 1:
        env["OMP_NUM_THREADS"] = "1"
    # torchrun's rendezvous address: the first machine of the host file (this one
    # without); one run id for every rank (uuid, as torchrun's standalone mode)
    env.setdefault("MASTER_ADDR", _first_host(hostfile) if hostfile else "127.0.0.1")
    env.setdefault("TORCHELASTIC_RUN_ID", uuid.uuid4().hex)
    markers = None if hostfile else tempfile.mkdtemp(prefix="tapegrad-launch-")
    if markers is not None:
        env[FINISHED_DIR] = markers
    try:
        code = subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130
    finally:
        if markers is not None:
            finished = set(os.listdir(markers))
            shutil.rmtree(markers, ignore_errors=True)
    if code == 0 and markers is not None:
        missing = [r for r in range(nproc) if str(r) not in finished]
        if missing:
            sys.stderr.write(
                f"tapegrad launch: rank(s) {', '.join(map(str, missing))} did not finish "
                "the script though mpiexec reported success (a rank that leaves with "
                "os._exit(0) ends the job, the others unfinished); exit code 1\n")
            return 1
    return code

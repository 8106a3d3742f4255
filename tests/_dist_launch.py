"""Starting MPI jobs from the tests: `launch(nproc, script, *args, cwd=...)` runs
`tapegrad launch --nproc N tests/dist_scripts/<script> args` with a timeout (a hang
fails instead of blocking CI); `assert_ok` checks the exit code and every rank's
`OK <rank>` line."""
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")
TIMEOUT = 240      # generous: 3 ranks + another xdist worker on 2 cores


def launch(nproc, script, *args, cwd, timeout=TIMEOUT, module=False):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONWARNINGS="ignore::FutureWarning")
    target = script if module else os.path.join(SCRIPTS, script)
    cmd = [sys.executable, "-m", "tapegrad", "launch", "--nproc", str(nproc)]
    cmd += (["-m"] if module else []) + [target, *map(str, args)]
    t0 = time.perf_counter()
    # its own session: on a timeout the whole job (mpiexec, its proxy, the ranks) is
    # killed, not only the launcher, so a hung job does not spin on after the test
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    p.seconds = time.perf_counter() - t0
    return p


def assert_ok(p, nproc):
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    for r in range(nproc):
        assert f"OK {r}" in p.stdout, p.stdout + p.stderr

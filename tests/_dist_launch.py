"""Starting MPI jobs from the tests: `launch(nproc, script, *args, cwd=...)` runs
`tapegrad launch --nproc N tests/dist_scripts/<script> args` with a timeout (a hang
fails instead of blocking CI); `assert_ok` checks the exit code and every rank's
`OK <rank>` line."""
import os
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
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    p.seconds = time.perf_counter() - t0
    return p


def assert_ok(p, nproc):
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    for r in range(nproc):
        assert f"OK {r}" in p.stdout, p.stdout + p.stderr

"""DataLoader workers that die at the worst moment: the main process raises, never hangs.

A worker killed (SIGKILL) while its batch is half-way through the result pipe leaves a
message that can never complete; torch raises "DataLoader worker (pid N) is killed by
signal: Killed." at once. Each case runs in a subprocess with a time limit, so a hang
fails the test instead of stalling the suite.
"""
import os
import subprocess
import sys
import textwrap

import pytest

LIMIT = 60  # seconds for the whole child program; the error must come within a few

PROGRAM = textwrap.dedent("""
    import multiprocessing.connection as mpc, os, signal, sys, time
    import numpy as np
    from tapegrad.utils import data as tgd

    def half_then_die(self, buf):
        # Runs in the worker's queue feeder thread: the header and half the payload
        # reach the pipe, then the worker is killed.
        import struct
        self._send(struct.pack("!i", len(buf)))
        self._send(bytes(buf)[:len(buf) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

    class DiesWhileSending(tgd.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            mpc.Connection._send_bytes = half_then_die  # only in this worker process
            return np.zeros(200_000)                    # bigger than a pipe's buffer

    loader = tgd.DataLoader(DiesWhileSending(), batch_size=1, num_workers=1,
                            timeout=float(sys.argv[1]))
    t0 = time.monotonic()
    try:
        next(iter(loader))
    except RuntimeError as e:
        print(f"{time.monotonic() - t0:.1f}", e)
    else:
        print("no error")
""")


@pytest.mark.parametrize("timeout", [0, 5, 300])
def test_worker_killed_while_sending_a_batch_raises_promptly(tmp_path, timeout):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, str(script), str(timeout)], capture_output=True,
                         text=True, timeout=LIMIT, env=env, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr
    seconds, _, msg = out.stdout.strip().partition(" ")
    assert msg.startswith("DataLoader worker (pid ") and msg.endswith(
        ") is killed by signal: Killed."), out.stdout
    # The check between waits runs every STATUS_CHECK_INTERVAL (1 s); allow for load.
    assert float(seconds) < 4.5, out.stdout

"""`tapegrad sample CKPT | head -1`: a reader that closes the pipe early ends the command
quietly (no "tapegrad: error: BrokenPipeError", no "Exception ignored" line, exit 0).

The reader here closes its end before the command writes anything (`head -n 0`, or the
pipe's read end closed at once), so every write meets the closed pipe: deterministic,
where `head -1` races with the command's output buffer."""
import os
import subprocess
import sys

import pytest

from _cli_fixtures import ROOT, train_names, words_file


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("names"))
    return train_names(os.path.join(folder, "run"), words_file(folder))


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_sample_into_a_closed_pipe_ends_quietly(checkpoint, debug):
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "tapegrad", "sample", checkpoint, "-n", "30", *debug]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=ROOT)
    proc.stdout.close()                     # the reader is gone before the first name
    try:
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
    assert err == "", err
    assert code == 0


@pytest.mark.parametrize("reader", ["head -n 0", "head -1"])
def test_shell_pipe_into_head(checkpoint, reader):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(
        f"set -o pipefail; '{sys.executable}' -m tapegrad sample '{checkpoint}' -n 30 "
        f"| {reader}", shell=True, executable="/bin/bash", capture_output=True, text=True,
        env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stderr == "", (out.returncode, out.stderr)
    assert len(out.stdout.splitlines()) == (0 if reader == "head -n 0" else 1)

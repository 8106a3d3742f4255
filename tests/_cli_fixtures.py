"""Helpers shared by the command-line tests: run `tapegrad.cli.main` in-process or as a
subprocess, assert the one-line error contract, and make tiny real checkpoints."""
import os
import subprocess
import sys

from tapegrad import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A small word list (letters only) so `train names` needs neither the `names` package
# nor more than a fraction of a second.
WORDS = ("emma olivia ava isabella sophia mia amelia harper evelyn abigail emily ella "
         "elizabeth camila luna sofia avery mila aria scarlett penelope layla chloe "
         "victoria madison eleanor grace nora riley zoey hannah hazel lily ellie violet "
         "liam noah oliver elijah james william benjamin lucas henry theodore jack levi "
         "alexander jackson mateo daniel michael mason sebastian ethan logan owen samuel").split()


def run(argv):
    """cli.main(argv) -> exit code; argparse's SystemExit (usage errors) becomes its code."""
    try:
        return cli.main([str(a) for a in argv])
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1


def assert_one_line_error(code, err, needle=None, context=""):
    """The contract: non-zero exit, stderr is exactly one line `tapegrad...: error: ...`
    (no traceback), and it names `needle` (the flag or the file)."""
    assert code not in (0, None), (context, code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), (context, err)
    assert lines[0].startswith("tapegrad") and ": error: " in lines[0], (context, err)
    assert "Traceback" not in err, (context, err)
    if needle is not None:
        assert str(needle) in lines[0], (context, needle, err)
    return lines[0]


def run_subprocess(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "tapegrad", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def words_file(folder):
    path = os.path.join(folder, "words.txt")
    with open(path, "w") as fh:
        fh.write("\n".join(WORDS) + "\n")
    return path


def train_mnist(out, *extra):
    """A real, tiny MNIST run on the offline sample (one epoch, 8 hidden units)."""
    argv = ["train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "8",
            "--batch-size", "500", "--no-progress", "--out", out, *extra]
    assert run(argv) == 0, argv
    return os.path.join(out, "checkpoint.safetensors")


def train_names(out, words, *extra):
    """A real, tiny names run (a few steps on WORDS)."""
    argv = ["train", "names", "--data", words, "--steps", "3", "--samples", "0",
            "--out", out, *extra]
    assert run(argv) == 0, argv
    return os.path.join(out, "checkpoint.safetensors")

"""Doc tests: every code block of README.md and docs/**/*.md runs, and its output is
compared with the page (Sybil; the parser and its markers: tests/_doc_blocks.py).

Show every drift between the pages and the code (a unified diff per block):

    python -m pytest README.md docs -q

A page shows real output. Where a number depends on the machine (timings, speed-ups),
write `~` before it (`~0.6s`); `...` stands for any text. A block that cannot run here
(installs, network, several machines, > 30 s) gets `<!-- not-run: reason -->` before it;
a snippet quoted from a file gets `<!-- excerpt: path -->` and is checked against it; a
python block that uses what the `$` session above it wrote (a checkpoint) gets
`<!-- after-session: reason -->` and runs in that session's directory.
"""
import os
import sys
from pathlib import Path

# one BLAS thread, as in tests/conftest.py (2 xdist workers on 2 cores)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def _x86_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# One OpenBLAS kernel on every x86 machine with AVX2: OpenBLAS picks its kernels by CPU
# (Haswell/Zen, SkylakeX with AVX-512, ...), and they round differently in the last bits.
# The bit-for-bit gradient fixture (tests/test_grad_regression.py) and the exact numbers
# in the docs were made with the Haswell kernels; on an AVX-512 machine they would differ.
# Set before NumPy is imported (here: before any test module), inherited by subprocesses.
if {"avx2", "fma"} <= _x86_flags():
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

from sybil import Sybil  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
from _doc_blocks import parse_blocks  # noqa: E402

pytest_collect_file = Sybil(
    parsers=[parse_blocks],
    patterns=["README.md", "docs/*.md", "docs/*/*.md"],
).pytest()

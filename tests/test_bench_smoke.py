"""Smoke test of bench/run.py: `--quick` runs every row in a fresh process and prints the
whole table, including issue 15's goals. No timing assertions (the numbers of a quick run
on a shared machine are noise); it checks that each row ran and reported a verdict, and
that a quick run leaves the committed bench/RESULTS.md alone."""
import os
import re
import subprocess
import sys

import torch  # noqa: F401  (run.py compares with torch: it must be importable)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = "abcdefgh"
GOAL_ROWS = ("W2 ", "W3 ", "W4 ", "tiny GPT step", "microgpt-shaped Value GPT",
             "peak RSS growth, W3 training, batch 4096")


def test_quick_run_prints_every_row():
    results = os.path.join(ROOT, "bench", "RESULTS.md")
    before = open(results, "rb").read() if os.path.exists(results) else None
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--quick"],
                       capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout
    for letter in SECTIONS:
        assert re.search(rf"^## \({letter}\) ", text, re.M), f"section ({letter}) missing"
    # every section's table has at least one data row with a number
    for body in re.split(r"^## ", text, flags=re.M)[1:]:
        assert re.search(r"^\| [^-|][^|]*\|\s*\+?[0-9.]+", body, re.M), body[:200]
    summary = text.split("## Issue 15's goals, this run", 1)
    assert len(summary) == 2, "the goals table is missing"
    summary[1] = summary[1].split("\n## ", 1)[0]  # up to the next table (issue 30's goals)
    rows = [ln for ln in summary[1].splitlines() if ln.startswith("| ") and "---" not in ln]
    assert rows[0].startswith("| workload |")
    assert len(rows) == 1 + len(GOAL_ROWS), rows
    for want, row in zip(GOAL_ROWS, rows[1:]):
        assert row.startswith("| " + want), (want, row)
        assert row.rstrip().endswith(("| met |", "| NOT met |")), row
    assert "Losses and samples identical (==): True." in text  # tg.Value == reference
    assert re.search(r"^\d of 6 goals met", summary[1], re.M)
    after = open(results, "rb").read() if os.path.exists(results) else None
    assert after == before, "a --quick run rewrote bench/RESULTS.md"

"""docs/derivatives.md is the op table (ops.registry.OPS) as a page: it must not drift."""
import subprocess
import sys
from pathlib import Path

from tapegrad.ops.registry import OPS
from tapegrad.viz.derivatives_page import COMMAND, _cell, page, reads_text

DOC = Path(__file__).resolve().parents[1] / "docs" / "derivatives.md"


def test_page_is_the_table():
    assert DOC.read_text(encoding="utf-8") == page(), (
        f"docs/derivatives.md differs from the op table: regenerate it with `{COMMAND}`")


def test_every_op_has_one_row_with_its_rule_reads_and_hint():
    rows = [line for line in page().splitlines() if line.startswith("| `")]
    assert len(rows) == len(OPS) > 100
    for name, op in OPS.items():
        row = [r for r in rows if r.startswith(f"| `{name}`")
               and r[len(name) + 4:len(name) + 5] in (" ", "(")]
        assert len(row) == 1, name
        assert f"`{op.text.replace('|', chr(92) + '|')}`" in row[0], name
        assert _cell(op.hint) in row[0] and _cell(reads_text(op)) in row[0], name
    assert reads_text(OPS["mul"]) == "x: y; y: x"
    assert reads_text(OPS["add"]) == "x: nothing; y: nothing"
    assert reads_text(OPS["exp"]) == "x: ans"


def test_a_changed_entry_is_noticed(monkeypatch):
    monkeypatch.setattr(OPS["mul"], "text", "dx = g*y ; dy = g*x (changed)")
    assert "(changed)" in page()
    assert DOC.read_text(encoding="utf-8") != page()


def test_the_command_writes_the_page():
    out = subprocess.run([sys.executable, "-m", "tapegrad.viz.derivatives_page"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out == page()

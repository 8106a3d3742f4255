"""docs/differences.md stays true: its lists of op_db entries and module_db classes that
tapegrad lacks are exactly those the conformance machinery finds missing today. When an op
or module is added (or a new torch adds entries) this fails, naming what to move."""
import os
import re

import _torch_module_db as M
import _torch_op_db as H

DOC = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "differences.md")


def _listed(kind):
    text = open(DOC, encoding="utf-8").read()
    block = re.search(rf"<!-- {kind} missing: begin -->(.*?)<!-- {kind} missing: end -->",
                      text, re.S)
    assert block, f"docs/differences.md lost its '{kind} missing' markers"
    names = re.findall(r"`([^`]+)`", block.group(1))
    repeated = sorted({n for n in names if names.count(n) > 1})
    assert not repeated, f"listed twice in docs/differences.md: {repeated}"
    return set(names)


def _drift(listed, actual):
    gone, new = sorted(listed - actual), sorted(actual - listed)
    return (f"docs/differences.md is out of date: now present in tapegrad (remove from the "
            f"page): {gone}; missing but not listed (add, with the reason): {new}")


def test_missing_ops_are_the_listed_ones():
    actual = {H.entry_id(op) for op, fn in H.entries() if fn is None}
    listed = _listed("op_db")
    assert listed == actual, _drift(listed, actual)


def test_missing_modules_are_the_listed_ones():
    actual = {mi.name for mi, cls in M.entries() if cls is None}
    listed = _listed("module_db")
    assert listed == actual, _drift(listed, actual)


def test_readme_links_the_page():
    readme = open(os.path.join(os.path.dirname(DOC), os.pardir, "README.md"),
                  encoding="utf-8").read()
    assert "docs/differences.md" in readme

"""Conformance: PyTorch's own module database (`module_db`) run through tapegrad.

One test per (module, mode) for every module_db entry with a tapegrad class of the same
name: every input torch generates (float64) gives the same outputs, input and parameter
gradients and buffers (tests/_torch_module_db.py). Known failures are listed in
tests/torch_module_db_known.py with their reasons; such a test is an expected failure
and FAILS once the module passes (remove it from the list).
"""
import pytest

import _torch_module_db as M
from torch_module_db_known import KNOWN

ENTRIES = [(mi, cls) for mi, cls in M.entries() if cls is not None]


@pytest.mark.parametrize("mode", ("train", "eval"))
@pytest.mark.parametrize("entry", ENTRIES, ids=[mi.name for mi, _ in ENTRIES])
def test_module_db(entry, mode):
    mi, cls = entry
    key = f"{mi.name}:{mode}"
    bad = [f"#{i}: {r}" for i, r in M.run_module(mi, cls, mode == "train") if r]
    if key in KNOWN:
        if not bad:
            pytest.fail(f"{key} passes now: remove it from tests/torch_module_db_known.py")
        pytest.xfail(KNOWN[key])
    assert not bad, f"{key}: {len(bad)} failing inputs:\n" + "\n".join(bad[:10])


def test_known_module_failures_name_real_entries():
    keys = {f"{mi.name}:{m}" for mi, _ in ENTRIES for m in ("train", "eval")}
    stale = sorted(set(KNOWN) - keys)
    assert not stale, f"tests/torch_module_db_known.py lists entries that do not exist: {stale}"
    assert all(isinstance(r, str) and len(r) > 10 for r in KNOWN.values())

"""Conformance: PyTorch's own operator database (`op_db`) run through tapegrad.

One test per (entry, kind) for every op_db entry that has a tapegrad counterpart:
`fwd` (every sample, every dtype both libraries support: values, shapes, dtypes),
`bwd` (float64 gradients for one random cotangent per output), `err` (torch's error
inputs raise, with torch's exception type). The machinery is tests/_torch_op_db.py.

Known failures are listed in tests/torch_op_db_known.py, each with its reason; such a
test is an expected failure and FAILS once the entry passes (remove it from the list).
"""
import pytest

import _torch_op_db as H
from torch_op_db_known import KNOWN

ENTRIES = [(op, fn) for op, fn in H.entries() if fn is not None]
KINDS = ("fwd", "bwd", "err")


def _failures(op, fn, kind):
    if kind == "fwd":
        return [f"{d} #{i}: {r}" for d in H._dtypes(op) for i, r in H.run_forward(op, fn, d) if r]
    if kind == "bwd":
        return [f"#{i}: {r}" for i, r in H.run_backward(op, fn) if r]
    return [f"#{i}: {r}" for i, r in H.run_errors(op, fn) if r]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", ENTRIES, ids=[H.entry_id(op) for op, _ in ENTRIES])
def test_op_db(entry, kind):
    op, fn = entry
    key = f"{H.entry_id(op)}:{kind}"
    bad = _failures(op, fn, kind)
    if key in KNOWN:
        if not bad:
            pytest.fail(f"{key} passes now: remove it from tests/torch_op_db_known.py")
        pytest.xfail(KNOWN[key])
    assert not bad, f"{key}: {len(bad)} failing samples:\n" + "\n".join(bad[:10])


def test_known_failures_name_real_entries():
    keys = {f"{H.entry_id(op)}:{k}" for op, _ in ENTRIES for k in KINDS}
    stale = sorted(set(KNOWN) - keys)
    assert not stale, f"tests/torch_op_db_known.py lists entries that do not exist: {stale}"
    assert all(isinstance(r, str) and len(r) > 10 for r in KNOWN.values()), \
        "every known failure needs its reason"

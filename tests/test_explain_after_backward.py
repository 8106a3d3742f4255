"""tg.explain runs backward itself: called after `v.backward()` it says so (a Value's
leaf gradients were silently doubled; a Tensor gave the engine's generic second-backward
error), and its table stays aligned with long op and leaf names."""
import pytest

import tapegrad as tg
from tapegrad import Value


def test_value_after_backward_is_refused_and_grads_stay():
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    v = a * b + a
    v.backward()
    assert (a.grad, b.grad) == (4.0, 2.0)
    with pytest.raises(RuntimeError, match=r"explain runs backward itself, and a backward "
                                           r"already ran from this Value"):
        tg.explain(v, quiet=True)
    assert (a.grad, b.grad) == (4.0, 2.0)        # not doubled
    a2, b2 = Value(2.0), Value(3.0)
    tg.explain(a2 * b2 + a2, quiet=True)          # explain instead of backward: one pass
    assert (a2.grad, b2.grad) == (4.0, 2.0)


def test_tensor_after_backward_says_explain_runs_backward_itself():
    w = tg.ones(3, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match=r"explain runs backward itself.*call "
                                           r"tg\.explain\(loss\) INSTEAD of loss\.backward\(\)"
                                           r".*Trying to backward through the graph a second "
                                           r"time"):
        tg.explain(loss, quiet=True)


def test_table_columns_stay_aligned_with_long_names():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    x, y = tg.randn(5, 3), tg.tensor([0, 1, 0, 1, 1])
    lines = tg.explain(tg.nn.functional.cross_entropy(model(x), y), model=model, quiet=True)
    rows = [ln for ln in lines if not ln.startswith("  (")]
    assert any("cross_entropy" in ln for ln in rows)
    assert any("leaf 2.weight" in ln for ln in rows)
    header = rows[0]
    # every row's cells start where the header's column titles start
    for title in ("shapes (in -> out)", "local rule", "unbroadcast"):
        col = header.index(title)
        for ln in rows[1:]:
            assert ln[col] != " " and ln[col - 1] == " ", (title, header, ln)
    # the |grad out| numbers end where the title ends
    end = header.index("|grad out|") + len("|grad out|")
    for ln in rows[1:]:
        assert ln[end - 1] != " " and ln[end] == " ", ln

"""tg.testing.compare (the manual-backprop check) and assert_close."""
import numpy as np
import pytest

import tapegrad as tg
from tapegrad.testing import assert_close, compare


def test_compare_reports_exact_approx_maxdiff(capsys):
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()           # grad = 2w
    manual = 2 * w.detach()
    r = compare("w", manual, w)
    assert r.exact and r.approx and r.maxdiff == 0.0
    assert "exact: True" in capsys.readouterr().out
    r = compare("w", manual * (1 + 2e-6), w, verbose=False)  # a float32 rounding-sized error
    assert not r.exact and r.approx and 0 < r.maxdiff < 1e-4
    r = compare("w", manual + 1.0, w, verbose=False)
    assert not r.approx and r.maxdiff == pytest.approx(1.0)


def test_compare_needs_a_grad_and_matching_shape():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="no .grad"):
        compare("w", np.zeros(2), w)
    w.sum().backward()
    with pytest.raises(ValueError, match="shape"):
        compare("w", np.zeros(3), w)


def test_assert_close():
    assert_close(np.ones(3), np.ones(3) + 1e-9)
    with pytest.raises(AssertionError, match="max abs diff"):
        assert_close(np.ones(3), np.array([1.0, 1.0, 2.0]))


def test_tg_testing_is_an_attribute_after_import_tapegrad():
    """`import tapegrad as tg; tg.testing.compare(...)` works, as torch.testing does after
    `import torch` (a fresh interpreter: here tapegrad.testing is imported already)."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import tapegrad as tg, torch; "
            "print(tg.testing.compare.__name__, torch.testing.assert_close.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=root)).stdout
    assert out.split() == ["compare", "assert_close"]

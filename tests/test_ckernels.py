"""tapegrad's C kernels (tapegrad/_ckernels/kernels.c) against their NumPy twins, the
references in ops/rules/: the same formula in the same order of float operations, so the
two agree but where the C library's exp and NumPy's round differently (one ulp of exp).
The twins themselves are checked against PyTorch and float64 formulas elsewhere
(tests/test_gelu_f32.py runs whichever kernel is in use)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tapegrad import _ckernels
from tapegrad.ops.rules.nn import _GELU_CONSTS, _gelu_f32, _gelu_f32_numpy

NATIVE_OFF = os.environ.get("TAPEGRAD_NATIVE", "1").strip() == "0"
needs_lib = pytest.mark.skipif(NATIVE_OFF, reason="TAPEGRAD_NATIVE=0: the C kernels are off")


def test_the_c_kernels_are_built_and_loaded():
    """setup.py builds them at install when a C compiler is there; a missing library
    fails here (it would otherwise make every other test in this file pass vacuously)."""
    if NATIVE_OFF:
        assert _ckernels.LIB is None
        return
    assert _ckernels.library_path() is not None, (
        "tapegrad/_ckernels/kernels.c was not built: install a C compiler (gcc) and "
        "reinstall (pip install -e .), or set TAPEGRAD_NATIVE=0 to test the NumPy kernels")
    assert _ckernels.LIB is not None


def _grid():
    rng = np.random.default_rng(0)
    return np.concatenate([
        np.linspace(-12.0, 12.0, 24001), rng.standard_normal(10007) * 4,
        [0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40, 20.0, -20.0, 3e38, -3e38,
         np.inf, -np.inf, np.nan]]).astype(np.float32)


def _close_to_twin(x, y, d):
    y0, d0 = _gelu_f32_numpy(x)
    fin = np.isfinite(y0) & np.isfinite(d0)
    # the special values (nan, inf, the saturated tails, signed zeros) exactly
    np.testing.assert_array_equal(y[~fin], y0[~fin])
    np.testing.assert_array_equal(d[~fin], d0[~fin])
    assert np.array_equal(np.signbit(y), np.signbit(y0))
    # elsewhere within what one ulp of exp(-x^2 / 2) can move
    assert np.all(np.abs(y - y0)[fin] <= 2.5e-7 * np.maximum(1.0, np.abs(x[fin])))
    assert np.all(np.abs(d - d0)[fin] <= 2.5e-7)


@needs_lib
def test_c_gelu_matches_its_numpy_twin():
    x = _grid()
    y, d = _ckernels.gelu_f32(x, _GELU_CONSTS)
    assert y.dtype == d.dtype == np.float32 and y.shape == d.shape == x.shape
    _close_to_twin(x, y, d)
    # not one ufunc pass of the twin: most elements are the twin's bits
    y0, d0 = _gelu_f32_numpy(x)
    assert (y == y0).mean() > 0.8 and (d == d0).mean() > 0.6


@needs_lib
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 100])
def test_c_gelu_every_length(n):
    """The vector loop's remainder (lengths around the 8- and 16-lane widths)."""
    x = np.linspace(-5, 5, n, dtype=np.float32)
    y, d = _ckernels.gelu_f32(x, _GELU_CONSTS)
    assert y.shape == (n,)
    _close_to_twin(x, y, d)


@needs_lib
def test_c_gelu_layouts():
    """Results laid out like the input, as the twin's ufuncs lay them out (a transposed
    input gives transposed results); a strided slice is read through a copy; 0-d."""
    rng = np.random.default_rng(2)
    base = (rng.standard_normal((6, 5, 4)) * 3).astype(np.float32)
    for x in (base.transpose(2, 0, 1), base.transpose(1, 2, 0), np.asfortranarray(base),
              base[:, ::2, 1:], base[..., 0], base[0, 0, 0].reshape(())):
        y, d = _ckernels.gelu_f32(x, _GELU_CONSTS)
        y0, d0 = _gelu_f32_numpy(x)
        assert y.shape == x.shape and y.strides == y0.strides and d.strides == d0.strides
        _close_to_twin(x, y, d)
        yc, _ = _ckernels.gelu_f32(np.ascontiguousarray(x), _GELU_CONSTS)
        np.testing.assert_array_equal(y, yc)  # each element's value is its own
    assert not np.shares_memory(y, x)


def test_the_entry_runs_the_kernel_in_use():
    x = _grid()
    y, d = _gelu_f32(x)
    want = _gelu_f32_numpy(x) if _ckernels.LIB is None else _ckernels.gelu_f32(x, _GELU_CONSTS)
    np.testing.assert_array_equal(y, want[0])
    np.testing.assert_array_equal(d, want[1])


def test_tapegrad_native_0_runs_the_numpy_kernels():
    """TAPEGRAD_NATIVE=0 (read at import): no library, gelu gives the NumPy twin's bits."""
    code = ("import numpy as np, tapegrad as tg\n"
            "from tapegrad import _ckernels\n"
            "from tapegrad.ops.rules.nn import _gelu_f32_numpy\n"
            "x = np.linspace(-6, 6, 1001, dtype=np.float32)\n"
            "a = tg.tensor(x, requires_grad=True)\n"
            "tg.nn.functional.gelu(a).sum().backward()\n"
            "y, d = _gelu_f32_numpy(x)\n"
            "assert _ckernels.LIB is None\n"
            "assert np.array_equal(tg.nn.functional.gelu(tg.tensor(x)).numpy(), y)\n"
            "assert np.array_equal(a.grad.numpy(), d)\n")
    env = dict(os.environ, TAPEGRAD_NATIVE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr

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
from tapegrad.ops.rules.nn import _normalized_grad_forward, _normalized_grad_numpy
from tapegrad.ops.rules.nn import _ln_forward, _ln_forward_numpy
from tapegrad.optim._arrays import adam_moments_, adam_moments_numpy

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
    assert _ckernels.LIB is not None, (
        "tapegrad/_ckernels/libkernels.so.1 was built from another kernels.c: rebuild it "
        "(pip install -e .)")


@needs_lib
def test_a_library_built_from_another_kernels_c_is_refused(monkeypatch):
    """An editable checkout pulled but not rebuilt: its library's kernels may take other
    arguments than the wrappers pass. The loader compares the library's recorded SHA-256
    of kernels.c with the file's, warns and runs the NumPy kernels."""
    assert _ckernels.LIB.tg_source_sha256().decode() == _ckernels.source_digest()
    monkeypatch.setattr(_ckernels, "source_digest", lambda: "0" * 64)
    with pytest.warns(RuntimeWarning, match="built from another kernels.c"):
        assert _ckernels._load() is None


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
    # the same formula, not merely a close one: most elements are the twin's bits (here
    # 89% of y and 72% of d; where they differ, the two exps rounded differently)
    y0, d0 = _gelu_f32_numpy(x)
    assert (y == y0).mean() > 0.5 and (d == d0).mean() > 0.4


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


def _norm_case(shape, k, seed=0):
    """(gx, xhat, invstd) of a layer norm over the last k axes of `shape`, float32."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3 + 1
    axes = tuple(range(len(shape) - k, len(shape)))
    mu = x.mean(axis=axes, keepdims=True)
    invstd = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + 1e-5)
    f = np.float32
    return rng.standard_normal(shape).astype(f), ((x - mu) * invstd).astype(f), invstd.astype(f), axes


@needs_lib
@pytest.mark.parametrize("shape,k", [((512, 64), 1), ((4, 3, 17), 1), ((5, 16), 1), ((7, 1), 1),
                                     ((2, 3, 4, 5), 2), ((3, 100), 1), ((6, 33), 1), ((0, 8), 1)])
@pytest.mark.parametrize("correction", [0, 1])
def test_c_normalized_grad_matches_its_numpy_twin(shape, k, correction):
    """The same formula; the row sums in the C kernel's fixed order (16 running sums) and
    in BLAS's: both within the same distance of the float64 formula."""
    if correction and shape[-1] == 1:
        return  # (one element per row: dof 0)
    gx, xhat, invstd, axes = _norm_case(shape, k)
    n = int(np.prod(shape[len(shape) - k:]))
    got = _ckernels.normalized_grad_f32(gx, xhat, invstd, n, n - correction)
    assert got is not None and got.dtype == np.float32 and got.shape == gx.shape
    np.testing.assert_array_equal(
        got, _normalized_grad_forward(gx, xhat, invstd, axes=axes, n=n, correction=correction))
    twin = _normalized_grad_numpy(gx, xhat, invstd, axes=axes, n=n, correction=correction)
    g64, h64 = gx.astype(np.float64), xhat.astype(np.float64)
    ref = invstd * (g64 - g64.mean(axis=axes, keepdims=True)
                    - h64 * (g64 * h64).sum(axis=axes, keepdims=True) / (n - correction))
    if gx.size:
        bound = 4 * np.abs(twin - ref).max() + 1e-7
        assert np.abs(got - ref).max() <= bound


@needs_lib
def test_c_normalized_grad_leaves_what_it_does_not_read_to_the_twin():
    """Batch norm's leading axes, a non-contiguous gradient, float64: the NumPy twin
    (its bits); a nan stays in its own row."""
    gx, xhat, invstd, axes = _norm_case((6, 8), 1)
    gt = np.asfortranarray(gx)
    assert _ckernels.normalized_grad_f32(gt, xhat, invstd, 8, 8) is None
    np.testing.assert_array_equal(
        _normalized_grad_forward(gt, xhat, invstd, axes=axes, n=8),
        _normalized_grad_numpy(gt, xhat, invstd, axes=axes, n=8))
    inv0 = (1 / np.sqrt(np.ones((1, 8), np.float32)))
    np.testing.assert_array_equal(
        _normalized_grad_forward(gx, xhat, inv0, axes=(0,), n=6),
        _normalized_grad_numpy(gx, xhat, inv0, axes=(0,), n=6))
    g64 = gx.astype(np.float64)
    np.testing.assert_array_equal(
        _normalized_grad_forward(g64, xhat.astype(np.float64), invstd.astype(np.float64),
                                 axes=axes, n=8),
        _normalized_grad_numpy(g64, xhat.astype(np.float64), invstd.astype(np.float64),
                               axes=axes, n=8))
    gx[2, 3] = np.nan
    got = _ckernels.normalized_grad_f32(gx, xhat, invstd, 8, 8)
    assert np.isnan(got[2]).all() and np.isfinite(np.delete(got, 2, axis=0)).all()


@needs_lib
@pytest.mark.parametrize("shape,k", [((32, 16, 64), 1), ((4, 3, 17), 1), ((5, 16), 1),
                                     ((7, 1), 1), ((2, 3, 4, 5), 2), ((3, 100), 1), ((0, 8), 1)])
@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
def test_c_layer_norm_matches_its_numpy_twin(shape, k, affine):
    """out, xhat and invstd of the C kernel and of the NumPy twin: the same roundings,
    the row sums in another order, both within the same distance of float64; the saved
    arrays of the same shapes and dtypes (invstd keeps the normalized axes as 1)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    axes = tuple(range(len(shape) - k, len(shape)))
    w = (rng.standard_normal(shape[len(shape) - k:]).astype(np.float32)
         if "w" in affine else None)
    b = (rng.standard_normal(shape[len(shape) - k:]).astype(np.float32)
         if "b" in affine else None)
    out, saved = _ln_forward(x, w, b, axes=axes, eps=1e-5)
    out0, saved0 = _ln_forward_numpy(x, w, b, axes=axes, eps=1e-5)
    for a, a0 in ((out, out0), (saved["xhat"], saved0["xhat"]),
                  (saved["invstd"], saved0["invstd"])):
        assert a.dtype == a0.dtype == np.float32 and a.shape == a0.shape
    if not affine:
        assert out is saved["xhat"]
    if not x.size:
        return
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=axes, keepdims=True)
    inv64 = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=axes, keepdims=True) + 1e-5)
    ref = (x64 - mu) * inv64 * (1 if w is None else w) + (0 if b is None else b)
    for a, a0, r in ((out, out0, ref), (saved["invstd"], saved0["invstd"], inv64)):
        err0 = np.abs(a0 - r).max()
        assert np.abs(a - r).max() <= 4 * err0 + 1e-7 * np.abs(r).max()


@needs_lib
def test_c_layer_norm_leaves_what_it_does_not_read_to_the_twin():
    """A transposed input, float64 weights, leading axes: the NumPy twin (its bits)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    w = rng.standard_normal(6).astype(np.float32)
    for args, axes in (((x.T.copy().T, w, w), (1,)), ((x, w.astype(np.float64), w), (1,)),
                       ((x, None, None), (0,)), ((x.astype(np.float64), None, None), (1,))):
        out, saved = _ln_forward(*args, axes=axes, eps=1e-5)
        out0, saved0 = _ln_forward_numpy(*args, axes=axes, eps=1e-5)
        np.testing.assert_array_equal(out, out0)
        np.testing.assert_array_equal(saved["invstd"], saved0["invstd"])


@needs_lib
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 1000, 104_601])
def test_c_adam_moments_bit_identical_to_its_numpy_twin(n):
    """No sums, no exp: the C loop gives the twin's bits (m, v and the step), also for
    hyperparameters whose float32 rounding matters and for gradients of every scale."""
    rng = np.random.default_rng(n)
    g = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 4, n)).astype(np.float32)
    m0 = (rng.standard_normal(n) * 1e-2).astype(np.float32)
    v0 = (rng.random(n) * 1e-3).astype(np.float32)
    if n:
        g[0], v0[0] = 0.0, 0.0  # sqrt(0) / bc + eps
    for hyper in ((0.9, 0.999, 1e-3 / (1 - 0.9 ** 3), (1 - 0.999 ** 3) ** 0.5, 1e-8),
                  (0.8, 0.95, 0.1234567, 0.3333333, 1e-6)):
        out = []
        for fn in (adam_moments_, adam_moments_numpy):
            m, v = m0.copy(), v0.copy()
            tmp, upd = np.empty_like(g), np.empty_like(g)
            fn(g, m, v, tmp, upd, *hyper)
            out.append((m, v, upd))
        for a, b in zip(*out):
            np.testing.assert_array_equal(a, b)

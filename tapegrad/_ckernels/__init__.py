"""tapegrad's C kernels (kernels.c), loaded through ctypes: `LIB` is the library or None.

setup.py builds kernels.c at install when a C compiler is there (an optional extension:
without one the install goes on and tapegrad runs its NumPy kernels); `TAPEGRAD_NATIVE=0`
in the environment makes tapegrad use the NumPy kernels even when the library is built.
Each C kernel has a NumPy twin (ops/rules/nn.py, optim/_arrays.py) that computes the same
formula and stays the reference the tests compare against; the caller decides (`LIB is
None`, or a wrapper here that returns None/False for arrays the kernel does not read)
which one runs.
This module sits below the op tables and imports only NumPy and the standard library.
"""
import ctypes
import hashlib
import os
import warnings

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_P = ctypes.c_void_p


def library_path():
    """The built library's file (setup.py names it libkernels.so.1: no import takes that
    name for a Python module), or None."""
    path = os.path.join(_HERE, "libkernels.so.1")
    return path if os.path.exists(path) else None


def source_digest():
    """The SHA-256 of the kernels.c beside this module (None in an install without it)."""
    try:
        with open(os.path.join(_HERE, "kernels.c"), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _load():
    if os.environ.get("TAPEGRAD_NATIVE", "1").strip() == "0":
        return None
    path = library_path()
    if path is None:
        return None
    lib = ctypes.CDLL(path)
    lib.tg_source_sha256.restype = ctypes.c_char_p
    built, source = lib.tg_source_sha256().decode(), source_digest()
    if source is not None and built != source:
        # an editable checkout whose kernels.c changed since the build: the library's
        # kernels may read other arguments than the wrappers below pass
        warnings.warn(f"tapegrad's C kernels ({path}) were built from another kernels.c: "
                      "running the NumPy kernels; rebuild them with `pip install -e .`",
                      RuntimeWarning, stacklevel=2)
        return None
    lib.tg_gelu_f32.argtypes = [_P, _P, _P, ctypes.c_ssize_t, _P]
    lib.tg_gelu_f32.restype = None
    lib.tg_normalized_grad_f32.argtypes = [_P, _P, _P, _P, ctypes.c_ssize_t, ctypes.c_ssize_t,
                                           ctypes.c_float, ctypes.c_float]
    lib.tg_normalized_grad_f32.restype = None
    lib.tg_layer_norm_f32.argtypes = [_P, _P, _P, _P, _P, _P, ctypes.c_ssize_t,
                                      ctypes.c_ssize_t, ctypes.c_float, ctypes.c_float]
    lib.tg_layer_norm_f32.restype = None
    lib.tg_adam_moments_f32.argtypes = [_P, _P, _P, _P, ctypes.c_ssize_t] + [ctypes.c_float] * 6
    lib.tg_adam_moments_f32.restype = None
    return lib


LIB = _load()


def dense_order(x):
    """(x's axes ordered outermost first in memory, or None): x read through
    `x.transpose(order)` is C-contiguous, so a kernel walks its memory as one flat run and
    the results keep x's layout, as NumPy's ufuncs (and torch's kernels) keep it. None:
    x is not dense (a strided slice), its caller copies it first."""
    if x.flags.c_contiguous:
        return tuple(range(x.ndim))
    order = tuple(sorted(range(x.ndim), key=lambda i: -abs(x.strides[i])))
    return order if x.transpose(order).flags.c_contiguous else None


def gelu_f32(x, consts):
    """(gelu(x), gelu'(x)) of a float32 array by kernels.c's `tg_gelu_f32` (consts: its
    float32 constants, from ops/rules/nn.py), laid out like x."""
    x = np.asarray(x)  # (a NumPy scalar: 0-d)
    order = dense_order(x)
    if order is None:
        x, order = np.ascontiguousarray(x), tuple(range(x.ndim))
    permuted = order != tuple(range(x.ndim))
    if permuted:
        x = x.transpose(order)  # (not for 0-d: its transpose is a NumPy scalar)
    y = np.empty(x.shape, np.float32)
    d = np.empty(x.shape, np.float32)
    LIB.tg_gelu_f32(x.ctypes.data, y.ctypes.data, d.ctypes.data, x.size, consts.ctypes.data)
    if permuted:
        back = tuple(np.argsort(order))
        y, d = y.transpose(back), d.transpose(back)
    return y, d


def normalized_grad_f32(gx, xhat, invstd, n, dof):
    """invstd (gx - mean(gx) - xhat sum(gx xhat) / dof) over the trailing n elements of
    each row, by kernels.c's `tg_normalized_grad_f32`, or None when the arrays are not
    what it reads (float32, gx and xhat of one shape and C-contiguous, one invstd a row):
    the caller runs the NumPy twin then."""
    if not (gx.shape == xhat.shape and _rows_f32(gx, n) and _rows_f32(xhat, n)
            and invstd.dtype == np.float32 and invstd.flags.c_contiguous
            and invstd.size * n == gx.size):
        return None
    dx = np.empty(gx.shape, np.float32)
    LIB.tg_normalized_grad_f32(gx.ctypes.data, xhat.ctypes.data, invstd.ctypes.data,
                               dx.ctypes.data, gx.size // n, n, n, dof)
    return dx


def _rows_f32(a, n):
    return a.dtype == np.float32 and a.flags.c_contiguous and n > 0 and a.size % n == 0


def layer_norm_f32(x, w, b, n, eps):
    """(out, xhat, invstd) of a layer norm over the trailing n elements of each row of x,
    by kernels.c's `tg_layer_norm_f32` (w, b: arrays of n elements or None; invstd: one
    per row, flat), or None when the arrays are not what it reads (float32,
    C-contiguous): the caller runs the NumPy twin then."""
    if not (_rows_f32(x, n) and all(a is None or (_rows_f32(a, n) and a.size == n)
                                    for a in (w, b))):
        return None
    rows = x.size // n
    xhat = np.empty(x.shape, np.float32)
    out = xhat if w is None and b is None else np.empty(x.shape, np.float32)
    invstd = np.empty(rows, np.float32)
    LIB.tg_layer_norm_f32(x.ctypes.data, None if w is None else w.ctypes.data,
                          None if b is None else b.ctypes.data, out.ctypes.data,
                          xhat.ctypes.data, invstd.ctypes.data, rows, n, n, eps)
    return out, xhat, invstd


def adam_moments_f32(g, m, v, upd, w1, beta2, w2, bc2_sqrt, eps, neg_step):
    """Adam's moments and step in place by kernels.c's `tg_adam_moments_f32` (g, m, v,
    upd: flat float32 arrays of one size), True; False when the arrays are not what it
    reads: the caller runs the NumPy twin then."""
    n = g.size
    if not all(a.dtype == np.float32 and a.flags.c_contiguous and a.size == n
               for a in (g, m, v, upd)):
        return False
    LIB.tg_adam_moments_f32(g.ctypes.data, m.ctypes.data, v.ctypes.data, upd.ctypes.data, n,
                            w1, beta2, w2, bc2_sqrt, eps, neg_step)
    return True

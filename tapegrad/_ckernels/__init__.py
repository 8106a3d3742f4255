"""tapegrad's C kernels (kernels.c), loaded through ctypes: `LIB` is the library or None.

setup.py builds kernels.c at install when a C compiler is there (an optional extension:
without one the install goes on and tapegrad runs its NumPy kernels); `TAPEGRAD_NATIVE=0`
in the environment makes tapegrad use the NumPy kernels even when the library is built.
Each C kernel has a NumPy twin in ops/rules/ that computes the same formula and stays the
reference the tests compare against; the caller decides (`LIB is None`) which one runs.
This module sits below the op tables and imports only NumPy and the standard library.
"""
import ctypes
import importlib.machinery
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_P = ctypes.c_void_p


def library_path():
    """The built library's file (`_lib` + this Python's extension suffix), or None."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(_HERE, "_lib" + suffix)
        if os.path.exists(path):
            return path
    return None


def _load():
    if os.environ.get("TAPEGRAD_NATIVE", "1").strip() == "0":
        return None
    path = library_path()
    if path is None:
        return None
    lib = ctypes.CDLL(path)
    lib.tg_gelu_f32.argtypes = [_P, _P, _P, ctypes.c_ssize_t, _P]
    lib.tg_gelu_f32.restype = None
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
        x = np.ascontiguousarray(x)
    elif order != tuple(range(x.ndim)):
        x = x.transpose(order)  # (not for 0-d: its transpose is a NumPy scalar)
    y = np.empty(x.shape, np.float32)
    d = np.empty(x.shape, np.float32)
    LIB.tg_gelu_f32(x.ctypes.data, y.ctypes.data, d.ctypes.data, x.size, consts.ctypes.data)
    if order is not None and order != tuple(range(x.ndim)):
        back = tuple(np.argsort(order))
        y, d = y.transpose(back), d.transpose(back)
    return y, d

"""Window functions for spectral analysis: hann, hamming, blackman, bartlett, kaiser;
and torch.fft's real-valued helpers fftshift/ifftshift (tg.fft, tapegrad/fft.py).

torch's definitions, computed in float64 with NumPy and cast to the dtype. A periodic
window (the default, for use with an FFT) is the symmetric window of length N + 1
without its last point; lengths 0 and 1 give [] and [1.].
"""
import math
import numbers

import numpy as np

from .. import dtypes as _dt
from .._device import check as _check_device
from ..core.tensor_base import new_tensor
from . import _args, shape as _shape
from .public import public


def _window(name, window_length, periodic, dtype, requires_grad, device, formula):
    if isinstance(window_length, bool) or not isinstance(window_length, numbers.Integral):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    _check_device(device, f"{name}()")
    d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
    if d.kind != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{_dt.cpp_name(d)}, device=cpu, layout=Strided (default), "
                           "requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        arr = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        arr = formula(np.arange(n, dtype=np.float64), n)[:window_length]
    return new_tensor(arr.astype(d), requires_grad=requires_grad)


@public(method=False)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, n: alpha - beta * np.cos(2 * math.pi * k / (n - 1)))


@public(method=False)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, n: 0.5 - 0.5 * np.cos(2 * math.pi * k / (n - 1)))


@public(method=False)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, n: (0.42 - 0.5 * np.cos(2 * math.pi * k / (n - 1))
                                 + 0.08 * np.cos(4 * math.pi * k / (n - 1))))


@public(method=False)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1))


@public(method=False)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, n: np.kaiser(n, beta))


# ---- torch.fft's shifts (tapegrad/fft.py): rolls, so differentiable ------------------------
def _shift_dims(x, dim):
    if dim is None:
        return list(range(x._data.ndim))
    return [int(dim)] if isinstance(dim, (int, np.integer)) else [int(d) for d in dim]


def _roll_half(name, input, dim, sign):
    x = _args._tensor(input, name)
    dims = _shift_dims(x, dim)
    if not dims:  # a 0-d tensor: torch's roll gets no shifts
        raise RuntimeError("`shifts` required")
    sizes = [x._data.shape[_args._dim(d, x._data.ndim)] for d in dims]
    return _shape.roll(x, [sign * (n // 2) for n in sizes], dims)


def fftshift(input, dim=None):
    """The zero-frequency term moved to the centre: a roll by n // 2 along each dim
    (default every dim)."""
    return _roll_half("fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """fftshift's inverse: a roll by -(n // 2) along each dim."""
    return _roll_half("ifftshift", input, dim, -1)

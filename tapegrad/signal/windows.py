"""tapegrad.signal.windows: torch.signal.windows' window functions (bartlett, blackman,
cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser,
nuttall), SciPy's definitions as torch implements them.

Each takes the length M and keyword-only arguments: `sym` (True: the symmetric window,
for filter design; False: the periodic one, for spectral analysis, the symmetric
window of length M + 1 without its last point), `dtype` (float32 or float64, default
the default dtype), `layout`, `device`, `requires_grad`. Computed in float64 with NumPy
and cast once; torch's checks raise torch's ValueError/TypeError with its messages.
torch builds the window from a `linspace` that requires grad when asked, so its result
is a non-leaf; here it is a leaf that requires grad (the same values and `requires_grad`).
"""
import math
from collections.abc import Iterable

import numpy as np

from .. import dtypes as _dt
from .._device import check as _check_device
from ..core.tensor_base import new_tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout, device):
    """torch's _window_function_checks; the dtype (None: the default dtype)."""
    d = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and not str(layout).endswith("strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if d not in (_dt.float32, _dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    _check_device(device, f"{name}()")
    return d


def _make(values, d, requires_grad):
    return new_tensor(np.asarray(values, dtype=np.float64).astype(d), requires_grad=requires_grad)


def _ramp(M, start, step):
    """torch's linspace(start, start + (M - 1) * step, M), in float64."""
    return start + step * np.arange(M, dtype=np.float64)


def _periodic_len(M, sym):
    """The denominator length torch uses: M - 1 (symmetric) or M (periodic, M > 1)."""
    return M if not sym and M > 1 else M - 1


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau); center defaults to the window's middle."""
    d = _checks("exponential", M, dtype, layout, device)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _make([], d, requires_grad)
    if center is None:
        center = _periodic_len(M, sym) / 2.0
    k = _ramp(M, -center / tau, 1.0 / tau)
    return _make(np.exp(-np.abs(k)), d, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sin(pi * (n + 0.5) / M) (the sine window, as SciPy's)."""
    d = _checks("cosine", M, dtype, layout, device)
    if M == 0:
        return _make([], d, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _make(np.sin(_ramp(M, 0.5 * step, step)), d, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """exp(-(n - middle)^2 / (2 std^2))."""
    d = _checks("gaussian", M, dtype, layout, device)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _make([], d, requires_grad)
    c = 1.0 / (std * math.sqrt(2))
    k = _ramp(M, -_periodic_len(M, sym) / 2.0 * c, c)
    return _make(np.exp(-(k * k)), d, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """I0(beta * sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta), N = M - 1 (sym) or M."""
    d = _checks("kaiser", M, dtype, layout, device)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _make(np.ones(M), d, requires_grad)
    from scipy.special import i0  # SciPy: imported on first use (torch.i0's Cephes)
    step = 2.0 * beta / (M if not sym else M - 1)
    # torch's linspace ends at min(beta, ...): the last point never passes beta
    end = min(beta, -beta + (M - 1) * step)
    k = np.linspace(-beta, end, M)
    with np.errstate(invalid="ignore"):
        return _make(i0(np.sqrt(np.maximum(beta * beta - k * k, 0.0))) / i0(beta), d,
                     requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / N), N = M - 1 (sym) or M."""
    d = _checks("general_cosine", M, dtype, layout, device)
    if M <= 1:
        return _make(np.ones(M), d, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _ramp(M, 0.0, 2 * math.pi / (M if not sym else M - 1))
    terms = [(-1) ** i * w * np.cos(i * k) for i, w in enumerate(a)]
    return _make(np.sum(terms, axis=0), d, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_cosine with a = [0.42, 0.5, 0.08]."""
    _checks("blackman", M, dtype, layout, device)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """1 - |2n/N - 1|, N = M - 1 (sym) or M."""
    d = _checks("bartlett", M, dtype, layout, device)
    if M <= 1:
        return _make(np.ones(M), d, requires_grad)
    k = _ramp(M, -1.0, 2.0 / (M if not sym else M - 1))
    return _make(1 - np.abs(k), d, requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window (general_cosine)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)

"""More ways to make a tensor: `logspace`, `scalar_tensor`, `frombuffer` (torch's names,
arguments, dtypes and checks)."""
import numbers
import warnings

import numpy as np

from . import dtypes as _dt
from .core.tensor_base import TensorBase
from ._device import check as _check_device
from .ops.out_arg import with_out
from ._tensor import Tensor


def _logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """`steps` points base**linspace(start, end): computed in float64, then cast."""
    _check_device(device, "logspace()")
    start, end = (v.item() if isinstance(v, TensorBase) else v for v in (start, end))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
    arr = np.power(float(base), np.linspace(start, end, int(steps), dtype=np.float64))
    if d.kind in "iu":
        arr = np.rint(arr)      # torch rounds the float powers to the nearest integer
    return Tensor._of(arr.astype(d), requires_grad=requires_grad)


logspace = with_out(_logspace, "logspace")
logspace.__name__ = logspace.__qualname__ = "logspace"


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """A 0-dim tensor of the number `s`, of the default dtype unless `dtype` is given
    (scalar_tensor(3) is float: unlike tensor(3))."""
    if isinstance(s, TensorBase):
        s = s.item()
    if not isinstance(s, (numbers.Number, np.generic)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    _check_device(device, "scalar_tensor()")
    d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
    return Tensor._of(np.array(s, dtype=d), requires_grad=requires_grad)


_readonly_warned = {"once": False}


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with an object of the buffer protocol (bytearray,
    array.array, mmap, ...): writes through the tensor change the buffer."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    d = np.dtype(_dt.as_dtype(dtype))
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % d.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({d.itemsize})")
        count = (length - offset) // d.itemsize
    elif offset + count * d.itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {d.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and not _readonly_warned["once"]:
        _readonly_warned["once"] = True      # torch warns once per program
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it "
                      "to a tensor. This type of warning will be suppressed for the rest of "
                      "this program.", UserWarning, stacklevel=2)
    arr = np.frombuffer(buffer, dtype=d, count=count, offset=offset)
    # NumPy marks a view of read-only memory read-only; torch hands out a writable tensor
    return Tensor._of(arr, requires_grad=requires_grad)

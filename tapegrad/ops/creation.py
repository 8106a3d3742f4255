"""Creating tensors (torch's "Creation Ops"): `tensor`, `as_tensor`, `from_numpy`,
`zeros`/`ones`/`empty`/`full` (+ `_like`), `arange`, `linspace`, `logspace`, `eye`,
`scalar_tensor`, `frombuffer`. Random tensors (rand, randn, ...) are in ops/random.py.

Defaults follow PyTorch: floating results use the default dtype (float32), integer
data stays int64, and `requires_grad` is only allowed for floating dtypes.
"""
import math
import numbers
import warnings

import numpy as np

from .. import dtypes as _dt
from .._device import check as _check_device
from ..core import tape as _tape
from ..core.tensor_base import TensorBase, new_tensor, scalar_to, to_array
from ._args import _finish, _float_dtype, _size
from .out_arg import write_out
from .public import public


@public(method=False)
def tensor(data, dtype=None, requires_grad=False, device=None):
    """Copy `data` (numbers, nested lists, arrays, tensors) into a new leaf tensor."""
    _check_device(device, "tensor()")
    if isinstance(data, TensorBase):
        # a new leaf never shares memory with its source (tg.compile: a step, the copy
        # of a tensor the tape knows)
        return new_tensor(to_array(_tape.host(np.copy, data._data), dtype),
                          requires_grad=requires_grad)
    if isinstance(data, np.ndarray):
        return new_tensor(to_array(data.copy(), dtype), requires_grad=requires_grad)
    # numbers and nested lists: Python values (guards of a tg.compile capture), so the
    # array is a constant of the step
    return new_tensor(_tape.const(to_array(data, dtype)), requires_grad=requires_grad)


@public(method=False)
def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but shares memory with an ndarray or tensor when it can."""
    if isinstance(data, TensorBase) and (dtype is None or data.dtype == _dt.as_dtype(dtype)):
        return data
    _check_device(device, "as_tensor()")
    return new_tensor(to_array(data, dtype))


@public(method=False)
def from_numpy(arr):
    """Share memory with a NumPy array (its dtype is kept, float64 included)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    return new_tensor(arr)


@public(out=True, method=False)
def zeros(*size_args, size=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "zeros()")
    shape = _size(size_args, size, "zeros")
    return _finish(_tape.const(np.zeros(shape, _float_dtype(dtype))), None, requires_grad)


@public(out=True, method=False)
def ones(*size_args, size=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "ones()")
    shape = _size(size_args, size, "ones")
    return _finish(_tape.const(np.ones(shape, _float_dtype(dtype))), None, requires_grad)


@public(out=True, method=False)
def empty(*size_args, size=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "empty()")
    shape = _size(size_args, size, "empty")
    return _finish(np.empty(shape, _float_dtype(dtype)), None, requires_grad)


@public(out=True, method=False)
def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    _check_device(device, "full()")
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dt.bool
        elif isinstance(fill_value, int):
            dtype = _dt.int64
        else:
            dtype = _dt.get_default_dtype()
    dtype = _dt.as_dtype(dtype)
    return _finish(_tape.const(np.full(_size((size,)), scalar_to(fill_value, dtype), dtype)),
                   None, requires_grad)


def _like(maker):
    def f(input, dtype=None, requires_grad=False, device=None, *, layout=None,
          memory_format=None, pin_memory=False):
        _check_device(device, maker.__name__ + "_like()")
        # empty_like too: its values are garbage either way, and a replay may reuse them
        return _finish(_tape.const(maker(input.shape, _dt.as_dtype(dtype) or input.dtype)),
                       None, requires_grad)
    return f


zeros_like = public(_like(np.zeros), name="zeros_like", method=False)
ones_like = public(_like(np.ones), name="ones_like", method=False)
empty_like = public(_like(np.empty), name="empty_like", method=False)


@public(method=False)
def full_like(input, fill_value, dtype=None, requires_grad=False, device=None, *,
              layout=None, memory_format=None, pin_memory=False):
    _check_device(device, "full_like()")
    dtype = _dt.as_dtype(dtype) or input.dtype
    return _finish(_tape.const(np.full(input.shape, scalar_to(fill_value, dtype), dtype)),
                   None, requires_grad)


@public(method=False)
def arange(start, end=None, step=1, *, out=None, dtype=None, requires_grad=False,
           device=None):
    """start, start + step, ... below end. With `out=`, its dtype is the result's (torch:
    arange(0, 64, 0.5, out=<int64>) truncates the step to 0 and refuses it)."""
    if out is not None:
        if dtype is None:
            dtype = out.dtype
        return write_out("arange", out, arange(start, end, step, dtype=dtype, device=device))
    _check_device(device, "arange()")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = _dt.int64 if ints else _dt.get_default_dtype()
    dtype = _dt.as_dtype(dtype)
    return _finish(_tape.const(_arange_values(start, end, step, dtype)), None, requires_grad)


def _arange_values(start, end, step, dtype):
    """torch's arange: the bounds checked as float64; the length ceil((end - start) / step)
    in float64, except int64, whose bounds and step are first truncated to integers (a
    fractional step truncated to 0 is a ValueError there); integer values start + i * step
    with start and step truncated."""
    fs, fe, fst = (float(v) for v in (start, end, step))
    if not (np.isfinite(fs) and np.isfinite(fe)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}")
    if not ((fst > 0 and fe >= fs) or (fst < 0 and fe <= fs)):
        raise RuntimeError("arange: upper bound and lower bound inconsistent with step sign")
    if dtype.kind == "f":
        n = int(np.ceil((fe - fs) / fst))
        return (fs + np.arange(n, dtype=np.float64) * fst).astype(dtype)
    xs, xe, xst = int(start), int(end), int(step)  # C++'s conversion truncates toward 0
    if dtype == np.int64:
        if xst == 0:
            raise ValueError("step must be nonzero")
        num = xe - xs + xst - (1 if xst > 0 else -1)
        n = abs(num) // abs(xst) * (1 if (num >= 0) == (xst > 0) else -1)  # C++ division
    else:
        n = int(np.ceil((fe - fs) / fst))
    return (xs + np.arange(max(n, 0), dtype=np.int64) * xst).astype(dtype)


@public(out=True, method=False)
def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    _check_device(device, "linspace()")
    start, end = _range_ends("linspace", start, end, steps)
    d = _float_dtype(dtype)
    i, n = _spaced_positions(steps)
    s, e = scalar_to(start, d), scalar_to(end, d)
    if n == 1:
        return _finish(np.array([s], dtype=d), None, requires_grad)
    # torch's kernel: ends cast to the dtype first; the step in float64 for integer
    # dtypes and in the dtype itself for floating ones (float16 rounds at every step);
    # the first half counts up from start, the second half down from end, so both ends
    # are exact.
    w = np.float64 if d.kind in "iub" else d.type
    step = (w(e) - w(s)) / w(n - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        up = w(s) + step * i.astype(w)
        down = w(e) - step * (n - 1 - i).astype(w)
        vals = np.where(i < n // 2, up, down)
    return _finish(_truncate(vals, d), None, requires_grad)


@public(out=True, method=False)
def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "eye()")
    for k, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{k} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), None, requires_grad)


def _range_ends(name, start, end, steps):
    """linspace's and logspace's checks, as torch: `steps` an int >= 0 (a float is a
    TypeError), tensor ends 0-dimensional; returns the ends as Python numbers."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(start).__name__}, {type(end).__name__}, "
                        f"{type(steps).__name__}), but expected an int steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    ts = [v for v in (start, end) if isinstance(v, TensorBase)]
    if any(v.ndim for v in ts):
        nd = [v.ndim if isinstance(v, TensorBase) else 0 for v in (start, end)]
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but "
                           f"got start with {nd[0]} dimension(s) and end with {nd[1]} "
                           f"dimension(s).")
    return tuple(v._data.item() if isinstance(v, TensorBase) else v for v in (start, end))


def _logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """`steps` points base**(linspace of the exponents), as torch's kernel: the ends cast
    to the dtype, the step and the power in float64, the result cast (truncated for
    integers)."""
    _check_device(device, "logspace()")
    start, end = _range_ends("logspace", start, end, steps)
    d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
    i, n = _spaced_positions(steps)
    if n == 1:
        return new_tensor(_truncate(np.power(float(base), np.float64([start])), d),
                          requires_grad=requires_grad)
    s, e = scalar_to(start, d), scalar_to(end, d)
    # the difference of the ends: in C++'s int for integer dtypes (uint8's 0 - 1 is -1),
    # in the dtype for floating ones (it rounds for float16)
    if d.kind in "iub":
        span = np.float64(int(e) - int(s))
    else:
        with np.errstate(over="ignore"):
            span = np.float64(np.array(e, dtype=d) - np.array(s, dtype=d))
    step = span / (n - 1)
    expo = np.where(i < n // 2, np.float64(s) + step * i, np.float64(e) - step * (n - 1 - i))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        vals = np.power(np.float64(base), expo)
    return new_tensor(_truncate(vals, d), requires_grad=requires_grad)


def _spaced_positions(steps):
    n = int(steps)
    return np.arange(n, dtype=np.int64), n


def _truncate(vals, d):
    """float64 values cast to `d` as C++'s conversion does (toward zero for integers)."""
    if d.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(vals).astype(np.int64).astype(d)
    return vals.astype(d)


logspace = public(_logspace, name="logspace", out=True, method=False)


@public(method=False)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """A 0-dim tensor of the number `s`, of the default dtype unless `dtype` is given
    (scalar_tensor(3) is float: unlike tensor(3))."""
    if isinstance(s, TensorBase):
        s = s._data.item()
    if not isinstance(s, (numbers.Number, np.generic)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    _check_device(device, "scalar_tensor()")
    d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
    return new_tensor(np.array(scalar_to(s, d), dtype=d), requires_grad=requires_grad)


_readonly_warned = {"once": False}


@public(method=False)
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
    return new_tensor(arr, requires_grad=requires_grad)


# ---- uninitialized tensors with a given memory layout (torch's strided constructors) ----
def _strided_empty(size, stride, dtype):
    """An uninitialized array of `size` whose element strides are `stride` (on a buffer
    just large enough, as torch's storage)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    dt = np.dtype(dtype)
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    buf = np.empty(n, dt)
    return np.lib.stride_tricks.as_strided(buf, size, tuple(st * dt.itemsize for st in stride))


@public(method=False)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialized tensor of `size` with the element strides `stride`."""
    _check_device(device, "empty_strided()")
    return _finish(_strided_empty(size, stride, _float_dtype(dtype)), None, requires_grad)


@public(function=False)
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """empty_strided with this tensor's dtype unless `dtype` is given."""
    _check_device(device, "new_empty_strided()")
    dt = _dt.as_dtype(dtype) or self.dtype
    return _finish(_strided_empty(size, stride, dt), None, requires_grad)


@public(method=False)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialized tensor of `size` laid out in memory in the dim order
    `physical_layout` (outermost first): empty_permuted((N, C, H, W), (0, 2, 3, 1)) is
    channels-last."""
    _check_device(device, "empty_permuted()")
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    n = len(size)
    if len(order) != n:
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout")
    for d in order:
        if not -n <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be in range of "
                               f"[{-n}, {n - 1}], but got {d})")
    order = tuple(d % n for d in order)
    if len(set(order)) != n:
        raise RuntimeError("Duplicate dim not allowed")
    physical = np.empty(tuple(size[d] for d in order), _float_dtype(dtype))
    return _finish(physical.transpose(np.argsort(order)), None, requires_grad)


# ---- tril_indices, triu_indices ------------------------------------------------------------
def _tri_indices(name, np_fn):
    def f(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
        _check_device(device, f"{name}()")
        dt = _dt.as_dtype(dtype) if dtype is not None else np.dtype(np.int64)
        if dt.kind != "i" and dt.kind != "u":
            raise NotImplementedError(f"\"{name}\" not implemented for '{_dt.torch_name(dt)}'")
        for k, v in (("row", row), ("col", col)):
            if v < 0:
                raise RuntimeError(f"{k} must be non-negative, got{v}")
        rows, cols = np_fn(int(row), int(offset), int(col))
        return new_tensor(np.stack([rows, cols]).astype(dt).reshape(2, -1))
    f.__doc__ = (f"The (2, N) row and column indices of the {name[:4]}angular part of a "
                 "row x col matrix (diagonal `offset`), in row-major order.")
    return f


tril_indices = public(_tri_indices("tril_indices", np.tril_indices), name="tril_indices",
                      method=False)
triu_indices = public(_tri_indices("triu_indices", np.triu_indices), name="triu_indices",
                      method=False)

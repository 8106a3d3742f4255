"""Creating tensors: `tensor`, `zeros`, `ones`, `arange`, `randn`, ... (PyTorch names).

Defaults follow PyTorch: floating results use the default dtype (float32), integer
data stays int64, and `requires_grad` is only allowed for floating dtypes.
"""
import numpy as np

from . import dtypes as _dt
from .core import tape as _tape
from .core.tensor_base import to_array
from ._device import check as _check_device
from .random import rng as _rng
from ._tensor import Tensor


def _size(size, kw=None, name=None):
    """The shape from `*size` (ints, or one tuple/list), or from the keyword `size=`
    (`torch.empty(size=(n, h))`, as gat's layers write it)."""
    if kw is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kw,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"sizes must be non-negative integers, got {tuple(size)}")
    return tuple(int(s) for s in size)


def _finish(arr, dtype, requires_grad):
    return Tensor._of(arr, requires_grad=requires_grad, dtype=dtype)


def _float_dtype(dtype):
    return _dt.as_dtype(dtype) or _dt.get_default_dtype()


def tensor(data, dtype=None, requires_grad=False, device=None):
    """Copy `data` (numbers, nested lists, arrays, tensors) into a new leaf tensor."""
    if isinstance(data, Tensor):
        data = data._data
    if isinstance(data, np.ndarray):
        data = data.copy()  # a new leaf never shares memory with its source
    _check_device(device, "tensor()")
    return Tensor._of(to_array(data, dtype), requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but shares memory with an ndarray or tensor when it can."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == _dt.as_dtype(dtype)):
        return data
    _check_device(device, "as_tensor()")
    return Tensor._of(to_array(data, dtype))


def from_numpy(arr):
    """Share memory with a NumPy array (its dtype is kept, float64 included)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    return Tensor._of(arr)


def zeros(*size_args, size=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "zeros()")
    shape = _size(size_args, size, "zeros")
    return _finish(_tape.const(np.zeros(shape, _float_dtype(dtype))), None, requires_grad)


def ones(*size_args, size=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "ones()")
    shape = _size(size_args, size, "ones")
    return _finish(_tape.const(np.ones(shape, _float_dtype(dtype))), None, requires_grad)


def empty(*size_args, size=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "empty()")
    shape = _size(size_args, size, "empty")
    return _finish(np.empty(shape, _float_dtype(dtype)), None, requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    _check_device(device, "full()")
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dt.bool
        elif isinstance(fill_value, int):
            dtype = _dt.int64
        else:
            dtype = _dt.get_default_dtype()
    return _finish(_tape.const(np.full(_size((size,)), fill_value, _dt.as_dtype(dtype))), None,
                   requires_grad)


def _like(maker):
    def f(input, dtype=None, requires_grad=False, device=None):
        _check_device(device, maker.__name__ + "_like()")
        # empty_like too: its values are garbage either way, and a replay may reuse them
        return _finish(_tape.const(maker(input.shape, _dt.as_dtype(dtype) or input.dtype)),
                       None, requires_grad)
    return f


zeros_like = _like(np.zeros)
ones_like = _like(np.ones)
empty_like = _like(np.empty)


def full_like(input, fill_value, dtype=None, requires_grad=False, device=None):
    _check_device(device, "full_like()")
    return _finish(np.full(input.shape, fill_value, _dt.as_dtype(dtype) or input.dtype), None,
                   requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    _check_device(device, "arange()")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = _dt.int64 if ints else _dt.get_default_dtype()
    dtype = _dt.as_dtype(dtype)
    # Computed in float64 / int64 then cast, so the number of points is PyTorch's.
    arr = np.arange(start, end, step, dtype=np.float64 if dtype.kind == "f" else np.int64)
    return _finish(_tape.const(arr.astype(dtype)), None, requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    _check_device(device, "linspace()")
    return _finish(np.linspace(start, end, int(steps), dtype=np.float64).astype(_float_dtype(dtype)),
                   None, requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    _check_device(device, "eye()")
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), None, requires_grad)


def rand(*size_args, size=None, generator=None, dtype=None, requires_grad=False,
         device=None):
    _check_device(device, "rand()")
    d = _float_dtype(dtype)
    shape = _size(size_args, size, "rand")
    return _finish(_rng(generator).random(shape).astype(d), None, requires_grad)


def randn(*size_args, size=None, generator=None, dtype=None, requires_grad=False,
          device=None):
    _check_device(device, "randn()")
    d = _float_dtype(dtype)
    shape = _size(size_args, size, "randn")
    return _finish(_rng(generator).standard_normal(shape).astype(d), None, requires_grad)


def randint(low=None, high=None, size=None, generator=None, dtype=None, requires_grad=False,
            device=None):
    """randint(high, size), randint(low, high, size) (positional or keyword), as torch."""
    _check_device(device, "randint()")
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high          # torch's randint(high, size) overload
    if high is None:
        low, high = 0, low
    if low is None:
        low = 0                                 # randint(high=10, size=(3,))
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    arr = _rng(generator).integers(low, high, size=tuple(size))
    return _finish(arr, _dt.as_dtype(dtype) or _dt.int64, requires_grad)


def randperm(n, generator=None, dtype=None, device=None):
    _check_device(device, "randperm()")
    return _finish(_rng(generator).permutation(int(n)), _dt.as_dtype(dtype) or _dt.int64, False)


def rand_like(input, dtype=None, requires_grad=False, generator=None):
    return rand(*input.shape, generator=generator, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


def randn_like(input, dtype=None, requires_grad=False, generator=None):
    return randn(*input.shape, generator=generator, dtype=dtype or input.dtype,
                 requires_grad=requires_grad)


def randint_like(input, low, high=None, dtype=None, generator=None):
    return randint(low, high, size=input.shape, generator=generator, dtype=dtype or input.dtype)

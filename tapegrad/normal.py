"""torch.normal: normal draws with tensor or number mean and std, all four overloads.

    normal(mean: Tensor, std: Tensor)      shape: the two broadcast; dtype: mean's
    normal(mean: Tensor, std: float = 1)   mean's shape and dtype
    normal(mean: float, std: Tensor)       std's shape and dtype
    normal(mean: float, std: float, size, *, dtype, requires_grad)

each with `generator=` and `out=`. As in torch, the result of a mean or std that requires
grad requires grad, and its gradient w.r.t. them is 0 (a sample, not a
reparameterization: write `mean + std * tg.randn_like(std)` for one).
"""
import numbers

import numpy as np

from . import dtypes as _dt
from .core.record import apply
from .core.tensor_base import TensorBase, like
from ._device import check as _check_device
from .ops.rules import pointwise as E
from .ops.out_arg import with_out
from .random import rng as _rng
from ._tensor import Tensor

_OVERLOADS = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n")


def _number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, TensorBase)


def _invalid(mean, std, size):
    got = ", ".join(type(v).__name__ for v in (mean, std) + (() if size is None else (size,)))
    return TypeError(f"normal() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_OVERLOADS}")


def _check_std(std):
    if isinstance(std, TensorBase):
        if np.any(std._data < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        s = float(std)
        raise RuntimeError(f"normal expects std >= 0.0, but found std "
                           f"{int(s) if s.is_integer() else s}")


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        sa, sb = shapes
        n = max(len(sa), len(sb))
        for i in range(1, min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and 1 not in (sa[-i], sb[-i]):
                raise RuntimeError(f"The size of tensor a ({sa[-i]}) must match the size of "
                                   f"tensor b ({sb[-i]}) at non-singleton dimension {n - i}") \
                    from None
        raise


def _check_float(dtype):
    if dtype.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dt.torch_name(dtype)}'")


def _normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False,
            device=None, layout=None, pin_memory=False):
    tensors = [v for v in (mean, std) if isinstance(v, TensorBase)]
    if not tensors:
        if size is None or not (_number(mean) and _number(std)) \
                or not isinstance(size, (tuple, list)):
            raise _invalid(mean, std, size)
        _check_device(device, "normal()")
        d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        _check_float(d)
        _check_std(std)
        arr = _rng(generator).normal(float(mean), float(std), size=tuple(int(s) for s in size))
        return Tensor._of(arr.astype(d), requires_grad=requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise _invalid(mean, std, size)
    for v in (mean, std):
        if not isinstance(v, TensorBase) and not _number(v):
            raise _invalid(mean, std, size)
    d = mean.dtype if isinstance(mean, TensorBase) else std.dtype
    _check_float(d)
    _check_std(std)
    m = mean._data if isinstance(mean, TensorBase) else mean
    s = std._data if isinstance(std, TensorBase) else std
    shape = _broadcast(*(t._data.shape for t in tensors))
    arr = (m + s * _rng(generator).standard_normal(shape)).astype(d)
    out = like(tensors[0], arr)
    # torch's NormalBackward gives mean and std a gradient of 0: where(True, sample, t)
    # records exactly that (the value is the sample; t's share is zeros of its shape)
    for t in tensors:
        if t._rg:      # (cast first: where would promote to t's dtype)
            out = apply(E.where, np.ones(shape, bool), out, t if t.dtype == d else t.to(d))
    return out


normal = with_out(_normal, "normal")
normal.__name__ = normal.__qualname__ = "normal"

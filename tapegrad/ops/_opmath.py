"""float16 composites computed in float32 and rounded once, as PyTorch's fused kernels.

core/opmath.py makes each recorded op compute float16 in float32 and round its result;
an op written here as several tapegrad ops (addcmul = input + t1 * t2, lerp, the
normalizations, the losses) would still round after every step, where torch's one kernel
rounds once. `widened` casts the float16 tensors up at the composite's entry (a
differentiable cast: gradients come back as float16) and `rounded` casts the result down.
float32 and float64 pass through untouched (`widened` returns None).
"""
import numpy as np

from ..core.tensor_base import TensorBase
from . import conversion as _conversion

_float16 = np.dtype("float16")
_float32 = np.dtype("float32")


def widened(*xs, strict=False):
    """The xs with their float16 tensors cast to float32 when some x is a float16 tensor
    and no x is a float32/float64 tensor (torch's promotion would leave float16 then);
    else None (nothing to do). `strict`: only when every tensor is float16 (an op that
    checks its operands' dtypes keeps its error messages)."""
    half = False
    for x in xs:
        if isinstance(x, TensorBase):
            dt = x._data.dtype
            if dt != _float16 and (strict or dt.kind == "f"):
                return None
            half = half or dt == _float16
    if not half:
        return None
    return [_conversion.cast(x, _float32)
            if isinstance(x, TensorBase) and x._data.dtype == _float16 else x for x in xs]


def rounded(out):
    """A composite's float32 result(s) rounded to float16 once (others as they are)."""
    if isinstance(out, TensorBase):
        if out._data.dtype == _float32:
            with np.errstate(over="ignore"):  # beyond 65504: inf, silently as torch
                return _conversion.cast(out, _float16)
        return out
    if type(out) is tuple:
        return tuple(rounded(o) for o in out)
    return out

"""torch.nn.functional's linear functions: `linear` (the fused `linear` table entry of
ops/rules/nn.py) and `bilinear` (not implemented)."""
import numpy as np

from ... import dtypes as _dt
from ...core.record import apply
from ...ops.rules import nn as _K
from ._input_checks import _t


# ---- linear -----------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """y = x W^T + b. Shapes: x (*, in), W (out, in), b (out,) -> (*, out)."""
    x = _t(input)
    xs, ws = x._data.shape, weight._data.shape
    if len(ws) != 2 or not xs or xs[-1] != ws[1]:
        xs, ws = tuple(x.shape), tuple(weight.shape)
        rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1
        raise RuntimeError(
            f"linear: input of shape {xs} does not fit weight of shape {ws} (in_features = "
            f"{ws[-1] if ws else '?'}, the input's last dimension is "
            f"{xs[-1] if xs else '?'}): mat1 and mat2 shapes cannot be multiplied "
            f"({rows}x{xs[-1] if xs else 0} and {ws[-1] if ws else 0}x{ws[0] if ws else 0})")
    if bias is not None and bias._data.shape not in ((ws[0],), ()):
        raise RuntimeError(f"linear: bias of shape {tuple(bias.shape)} does not match weight "
                           f"of shape {tuple(weight.shape)} (expected ({weight.shape[0]},))")
    if x._data.dtype != weight._data.dtype or (bias is not None
                                                and bias._data.dtype != weight._data.dtype):
        _refuse_mixed_dtypes(x, weight, bias)
    return apply(_K.linear, x, weight, bias)


def _refuse_mixed_dtypes(x, weight, bias):
    """torch promotes nothing in linear: float32 input with a float64 weight is refused."""
    if x._data.dtype != weight._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dt.cpp_name(x._data.dtype)} != {_dt.cpp_name(weight._data.dtype)}")
    raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                       f"{_dt.torch_name(bias._data.dtype)} and {_dt.torch_name(weight._data.dtype)}")



def bilinear(*args, **kwargs):
    raise NotImplementedError("bilinear is not implemented in tapegrad")

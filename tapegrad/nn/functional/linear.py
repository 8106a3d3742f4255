"""torch.nn.functional's linear functions: `linear` (the fused `linear` table entry of
ops/rules/nn.py) and `bilinear` (one `linear` against the weight's (out * in2, in1)
matrix, then a product with input2 summed over in2)."""
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



def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o].
    x1 (*, in1), x2 (*, in2), W (out, in1, in2), b (out,) -> (*, out)."""
    x1, x2, w = _t(input1), _t(input2), _t(weight)
    if x1.dim() != x2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {x1.dim()} and "
                           f"{x2.dim()}")
    if tuple(x1.shape[:-1]) != tuple(x2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(x1.shape)} and {list(x2.shape)}")
    if w.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out, in1, in2), got "
                           f"{list(w.shape)}")
    out, in1, in2 = w.shape
    if x1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{x1.shape[-1]} but expected {in1}")
    if x2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{x2.shape[-1]} but expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0] if bias.dim() else bias.numel()} but expected {out}")
    # t[..., o, j] = sum_i x1[..., i] W[o, i, j]: one matrix product (the fused linear)
    t = linear(x1, w.permute(0, 2, 1).reshape(out * in2, in1))
    t = t.reshape(tuple(x1.shape[:-1]) + (out, in2))
    if t._data.dtype == np.float16 and x2._data.dtype == np.float16:
        # torch's second contraction is one float16 matrix product: float32, rounded once
        y = (t.float() * x2.float().unsqueeze(-2)).sum(-1).half()
    else:
        y = (t * x2.unsqueeze(-2)).sum(-1)
    if y.dtype != t.dtype:  # an integer sum widens to int64; torch keeps the input's dtype
        y = y.to(t.dtype)
    return y if bias is None else y + bias

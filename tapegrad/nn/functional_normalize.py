"""`F.normalize` (scale to unit p-norm along a dim: CLIP embeddings, contrastive losses)
and `F.rms_norm` (divide by the root mean square over the last dims), as compositions
of public ops, so their gradients come from the ops they are made of.

    normalize:  x / max(||x||_p along dim, eps)
    rms_norm:   x / sqrt(mean(x^2 over normalized_shape) + eps) * weight
"""
import numpy as np

from .. import dtypes as _dt
from ..out_functions import div as _div_out
from ..tensor import Tensor

__all__ = ["normalize", "rms_norm"]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along `dim` (torch's formula: the clamp is recorded,
    so a norm below eps gives the gradient of input / eps)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"normalize(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _div_out(input, denom, out=out)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """RMS normalization over the trailing `normalized_shape` dims; eps None means
    finfo(input.dtype).eps, as torch (LLaMA-style blocks pass their own, e.g. 1e-6)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rms_norm(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(normalized_shape, (int, np.integer)):  # torch's binding takes no int here
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    if not ns:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{list(ns)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(ns)}")
    xs = tuple(input.shape)
    if len(xs) < len(ns) or xs[len(xs) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{list(xs)}")
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"rms_norm" not implemented for '
                                  f'\'{_dt.torch_name(input._data.dtype)}\'')
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(-len(ns), 0))
    y = input * ((input * input).mean(dim=dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight

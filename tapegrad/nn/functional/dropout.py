"""torch.nn.functional's dropout functions: `dropout` (elements) and `dropout2d` (whole
channels). The masks come from `tapegrad.random` (seed with `tg.manual_seed`); the
streams do not match PyTorch's, so tests compare statistics and the mask rule, not
exact masks."""
import warnings

import numpy as np

from ...core import tape as _tape
from ...core.record import apply

from ...ops.rules import nn as _K
from ..._tensor import Tensor
from ._input_checks import _t
from ._window_args import _tensor
from ...ops import pointwise as _pointwise


# ---- dropout -------------------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only).

    The mask comes from `tapegrad.random` (seed with `tg.manual_seed`); the streams do not
    match PyTorch's, so tests compare statistics and the mask rule, not exact masks."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _t(input)
    if not training or p == 0.0:
        return x
    if inplace:  # the result written back into the input, as torch's dropout_
        return _pointwise.inplace_of(x, lambda v: dropout(v, p, training, False, generator))
    if p == 1.0:
        mask = _tape.const(np.zeros(x.shape, dtype=x.dtype))
    else:  # a tg.compile replay draws the mask again, from the same generator, in order
        mask = _tape.host(_dropout_mask, x.shape, x.dtype, p, generator)
    return apply(_K.dropout, x, mask=mask)



def _dropout_mask(shape, dtype, p, generator):
    """Keep with probability 1 - p, scaled by 1 / (1 - p)."""
    from ...random import rng
    keep = rng(generator).random(shape) >= p
    return keep.astype(dtype) * np.asarray(1.0 / (1.0 - p), dtype=dtype)


def dropout2d(input, p=0.5, training=True, inplace=False, generator=None):
    """Zero whole channels: y = x * mask, mask (N, C, 1, 1) ~ Bernoulli(1-p) / (1-p), so
    dx = g * mask.

    As PyTorch 2.x: a 3-D input is read as (N, C, L) (with its warning), and other ranks
    warn and drop per (N, C) as well."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _tensor(input)
    if x.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.")
    elif x.ndim != 4:
        warnings.warn(f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).")
    if x.ndim < 2:
        raise RuntimeError(f"dropout2d: Feature dropout requires at least 2 dimensions in the "
                           f"input, got {x.ndim}")
    if not training or p == 0.0:
        return x
    from ...random import rng
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    if p == 1.0:
        mask = np.zeros(shape, dtype=x.dtype)
    else:
        keep = rng(generator).random(shape) >= p
        mask = keep.astype(x.dtype) * np.asarray(1.0 / (1.0 - p), dtype=x.dtype)
    return _pointwise.mul(x, Tensor._of(mask))

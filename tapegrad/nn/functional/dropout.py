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


# ---- channel and alpha dropout (torch's `_dropout_impl`) ------------------------------
# One rule for the four: a keep mask (per element, or per (N, C) channel for the feature
# forms) ~ Bernoulli(1 - p); plain dropout scales the kept values by 1 / (1 - p); alpha
# dropout (for SELU networks) sets the dropped values to SELU's negative saturation and
# then rescales so that mean 0 / variance 1 inputs stay so:
#     y = a * (x * keep + alpha' * (1 - keep)) + b',   alpha' = -1.7580993408473766,
#     a = 1 / sqrt((alpha'^2 p + 1)(1 - p)),   b' = -a alpha' p   (as ATen writes it).
_SELU_SATURATION = 1.7580993408473766


def _keep_mask(shape, dtype, p, generator):
    from ...random import rng
    return np.asarray(rng(generator).random(shape) >= p).astype(dtype)


def _dropout_impl(x, p, training, feature, alpha, generator=None):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0 or not training or x.numel() == 0:
        return x
    if p == 1.0:
        return _pointwise.mul(x, Tensor._of(np.zeros((), dtype=x.dtype)))
    if feature and x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2) if feature else tuple(x.shape)
    dt = x._data.dtype
    keep = _tape.host(_keep_mask, shape, dt, p, generator)
    if not alpha:
        return _pointwise.mul(x, Tensor._of(keep * np.asarray(1.0 / (1.0 - p), dtype=dt)))
    a = 1.0 / np.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p
    return _pointwise.add(_pointwise.mul(x, Tensor._of(np.asarray(keep * a).astype(dt))),
                  Tensor._of(np.asarray(b).astype(dt)))


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels x[n, c] of (N, C, L) or (C, L) input with probability p,
    scaling the rest by 1/(1-p)."""
    x = _tensor(input)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    if x.ndim == 2:
        return _dropout_impl(x.unsqueeze(0), p, training, True, False).squeeze(0)
    return _dropout_impl(x, p, training, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels x[n, c] of (N, C, D, H, W) or (C, D, H, W) input with
    probability p, scaling the rest by 1/(1-p)."""
    x = _tensor(input)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if x.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {x.ndim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=2)
    if x.ndim != 5:
        return _dropout_impl(x.unsqueeze(0), p, training, True, False).squeeze(0)
    return _dropout_impl(x, p, training, True, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout (SELU's self-normalizing dropout): dropped elements take SELU's
    negative saturation, then an affine map keeps mean and variance."""
    return _dropout_impl(_tensor(input), p, training, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels x[n, c]."""
    return _dropout_impl(_tensor(input), p, training, True, True)

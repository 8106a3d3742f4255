"""torch.masked: reductions and normalizations that skip the masked-out elements
(`tg.masked.sum(x, 1, mask=m)`); see _ops.py. MaskedTensor is not provided."""
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp,
                   logsumexp, mean, median, norm, normalize, prod, softmax, softmin, std, sum,
                   var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]

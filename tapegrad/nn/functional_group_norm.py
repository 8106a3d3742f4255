"""`F.group_norm`: normalize each of `num_groups` channel groups of every sample, then an
optional per-channel affine map (a composite of public ops).

    x (N, C, *) -> (N, G, C/G * prod(*)) ;  y = (x - mean) / sqrt(var + eps)   (biased var)
    y -> (N, C, *) ;  y * weight[c] + bias[c]
"""
from .._tensor import Tensor

__all__ = ["group_norm"]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if not isinstance(input, Tensor):
        raise TypeError(f"group_norm(): input must be a Tensor, not {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected input with at least 2 dimensions (N, C, *), "
                           f"got shape {tuple(input.shape)}")
    N, C = input.shape[0], input.shape[1]
    if num_groups <= 0 or C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"group_norm: expected {name} of shape ({C},), got "
                               f"{tuple(t.shape)}")
    x = input.reshape(N, num_groups, -1)
    mean = x.mean(dim=-1, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(dim=-1, keepdim=True)
    y = (xc / (var + eps).sqrt()).reshape(tuple(input.shape))
    bshape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(bshape)
    if bias is not None:
        y = y + bias.reshape(bshape)
    return y

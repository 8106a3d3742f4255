"""Shape ops: linear maps that move or copy elements without arithmetic.

Each is linear, so its forward rule is the op applied to the tangent, and its
backward rule is the inverse movement (reshape back, permute back, sum over the
broadcast axes).
"""
import numpy as np

from .registry import defop


def _reshape_forward(x, shape):
    try:
        return np.reshape(x, shape)
    except ValueError:
        raise RuntimeError(f"reshape: shape {tuple(shape)} is invalid for input of shape "
                           f"{tuple(x.shape)} ({x.size} elements)") from None


reshape = defop("reshape", _reshape_forward, linear=True, promote=False, vjp=[
    lambda xp, g, ans, x, shape: xp.reshape(g, x.shape)
])


def _expand_forward(x, shape):
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise RuntimeError(f"expand: the shape {tuple(x.shape)} cannot be expanded to "
                           f"{tuple(shape)}") from None


# The engine sums the gradient back to the input's shape, so the rule passes g on.
expand = defop("expand", _expand_forward, linear=True, promote=False,
               vjp=[lambda xp, g, ans, x, shape: g])


def _permute_forward(x, dims):
    return np.transpose(x, dims)


permute = defop("permute", _permute_forward, linear=True, promote=False, vjp=[
    lambda xp, g, ans, x, dims: xp.transpose(g, tuple(np.argsort(dims)))
])

"""The cumulative product table entry (cumsum, a linear scan, lives in reduce.py).

d out_j / d x_i = prod_{k <= j, k != i} x_k for i <= j. Without zeros the VJP is
PyTorch's reversed cumulative sum of g * out divided by x. With zeros (PyTorch handles
them, so must we) let z be the first zero along the axis: an entry before z keeps that
formula (the later outputs are 0); the entry AT z gets the reversed cumulative sum of
g * cumprod(x with x_z set to 1); entries after z get 0 (their products hold x_z = 0).
The rules are cumsums and cumprods of the table, so every order of derivative works;
the zero masks are constants.
"""
import numpy as np

from ._within_rule import within_rule
from .reduce import cumsum
from .registry import defop


def _raw(a):
    return a.detach().numpy() if hasattr(a, "detach") else a


def _forward(x, axis):
    if x.ndim == 0:
        return x.copy()
    return np.cumprod(x, axis=axis)


def _zero_masks(x, axis):
    """(before the first zero, at the first zero), or None without zeros."""
    zero = _raw(x) == 0
    if not zero.any():
        return None
    seen = np.cumsum(zero, axis=axis)
    return seen == 0, zero & (seen == 1)


def _vjp(xp, g, ans, x, axis):
    if x.ndim == 0:
        return g
    masks = _zero_masks(x, axis)
    if masks is None:
        return within_rule(xp, cumsum, g * ans, axis=axis, reverse=True) / x
    if xp is not np:
        return _vjp_differentiable(xp, g, x, axis)
    before, first = masks
    safe = xp.where(before, x, 1.0)
    part1 = within_rule(xp, cumsum, g * ans, axis=axis, reverse=True) / safe
    others = within_rule(xp, cumprod, xp.where(first, 1.0, x), axis=axis)
    part2 = within_rule(xp, cumsum, g * others, axis=axis, reverse=True)
    return xp.where(before, part1, xp.where(first, part2, 0.0))


def _vjp_differentiable(xp, g, x, axis):
    """With zeros under create_graph: grad_i = sum_{j>=i} g_j * cumprod(x with x_i set to
    1)_j, all n variants of x at once (O(n^2) per slice, as PyTorch's double backward):
    the O(n) formula's 0 after the first zero has the value but not the derivative."""
    shape = tuple(x.shape)
    n, nd = shape[axis], len(shape)
    # a new axis 0 says which x_i is set to 1
    eye = np.eye(n, dtype=bool).reshape((n,) + (1,) * axis + (n,) + (1,) * (nd - axis - 1))
    later = np.triu(np.ones((n, n), dtype=bool)).reshape(eye.shape)  # j >= i
    xs = xp.broadcast_to(xp.expand_dims(x, 0), (n,) + shape)
    others = within_rule(xp, cumprod, xp.where(np.broadcast_to(eye, (n,) + shape), 1.0, xs),
                         axis=axis + 1)
    terms = xp.where(np.broadcast_to(later, (n,) + shape), others * xp.expand_dims(g, 0), 0.0)
    out = xp.sum(terms, axis=axis + 1)  # (n, the other dims): move axis 0 to `axis`
    perm = list(range(1, nd))
    perm.insert(axis, 0)
    return xp.transpose(out, perm)


def _jvp(xp, t, ans, x, axis):
    t = t[0]
    if x.ndim == 0:
        return t
    masks = _zero_masks(x, axis)
    if masks is None:
        return ans * within_rule(xp, cumsum, t / x, axis=axis)
    before, first = masks
    safe = xp.where(before, x, 1.0)
    part1 = ans * within_rule(xp, cumsum, t / safe, axis=axis)
    others = within_rule(xp, cumprod, xp.where(first, 1.0, x), axis=axis)
    t_at_zero = xp.sum(xp.where(first, t, 0.0), axis=axis, keepdims=True)
    return xp.where(before, part1, t_at_zero * others)


cumprod = defop("cumprod", _forward, vjp=[_vjp], jvp=_jvp, reads=["ans x"],
                text="dx_i = sum_{j>=i} g_j*ans_j/x_i (zeros: see ops/scan.py)",
                hint=("cumprod's derivative is a product of the other factors, computed "
                      "without dividing by a zero: finite for finite x (many large factors "
                      "can overflow)"))

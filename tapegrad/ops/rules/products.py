"""Matrix products. `matmul` follows NumPy/PyTorch: 1-D, 2-D and batched inputs with
broadcast batch dimensions.

Rules (for 2-D `Y = X @ W`): dX = dY @ W^T, dW = X^T @ dY. A 1-D operand is first
promoted to a matrix (a row for the left operand, a column for the right) and its
gradient squeezed back; broadcast batch dimensions are summed away by the engine.
"""
import numpy as np

from ..registry import defop


def _matmul_forward(x, y):
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError("matmul: both arguments need at least 1 dimension, got "
                           f"shapes {tuple(x.shape)} and {tuple(y.shape)}")
    kx = x.shape[-1]
    ky = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if kx != ky:
        raise RuntimeError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} cannot be "
                           f"multiplied ({kx} != {ky})")
    return np.matmul(x, y)


def _as_matrices(xp, g, x, y):
    """Promote 1-D operands and the gradient to the matrix case."""
    if x.ndim == 1:
        g = xp.expand_dims(g, -2)
    if y.ndim == 1:
        g = xp.expand_dims(g, -1)
    x2 = xp.expand_dims(x, 0) if x.ndim == 1 else x
    y2 = xp.expand_dims(y, -1) if y.ndim == 1 else y
    return g, x2, y2


def _matmul_dx(xp, g, ans, x, y):
    if y.ndim == 2 and x.ndim > 1:  # the common case, x (..., n, k) @ W (k, m): no promotion
        return xp.matmul(g, y.T)
    if x.ndim == 1 and y.ndim == 1:
        return g * y
    g2, x2, y2 = _as_matrices(xp, g, x, y)
    dx = xp.matmul(g2, xp.swapaxes(y2, -1, -2))
    return xp.squeeze(dx, -2) if x.ndim == 1 else dx


def _matmul_dy(xp, g, ans, x, y):
    if x.ndim == 2 and y.ndim == 2:
        return xp.matmul(x.T, g)
    if x.ndim == 1 and y.ndim == 1:
        return g * x
    g2, x2, y2 = _as_matrices(xp, g, x, y)
    dy = xp.matmul(xp.swapaxes(x2, -1, -2), g2)
    return xp.squeeze(dy, -1) if y.ndim == 1 else dy


def _matmul_node(node):
    # torch dispatches matmul by the operands' dims
    a, b = (np.ndim(t._data) for t in node.inputs[:2])
    return {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0",
            (1, 2): "SqueezeBackward4"}.get((a, b), "UnsafeViewBackward0")


matmul = defop("matmul", _matmul_forward, inputs=("x", "y"), vjp=[_matmul_dx, _matmul_dy],
               jvp=lambda xp, t, ans, x, y: (
                   (xp.matmul(t[0], y) if t[0] is not None else 0)
                   + (xp.matmul(x, t[1]) if t[1] is not None else 0)), reads=["x y", "x y"],
               text="dX = g @ W^T ; dW = X^T @ g",
               hint=("matmul is linear in each input (dx = g @ y^T, dy = x^T @ g): finite for "
                     "finite inputs (very large values can overflow)"),
               node=_matmul_node)

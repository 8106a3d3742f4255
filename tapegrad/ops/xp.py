"""The differentiable array namespace: NumPy's names, tapegrad's recorded ops.

Backward rules are written once against an array namespace `xp`. For an ordinary
backward `xp` is NumPy itself (raw arrays, no recording, fast). Under
`create_graph=True` the engine passes this namespace instead, so the same rule
builds a graph and can be differentiated again (grad of grad, Hessian-vector
products). Only the functions the rules use are here; keep the two in step.
"""
import numpy as np

from . import functions as F


def _axis(axis):
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


class _TensorNamespace:
    """NumPy-compatible signatures over tapegrad's differentiable functions."""

    exp = staticmethod(F.exp)
    log = staticmethod(F.log)
    sqrt = staticmethod(F.sqrt)
    sin = staticmethod(F.sin)
    cos = staticmethod(F.cos)
    tanh = staticmethod(F.tanh)
    abs = staticmethod(F.abs)
    matmul = staticmethod(F.matmul)
    maximum = staticmethod(F.maximum)
    minimum = staticmethod(F.minimum)

    @staticmethod
    def sign(x):
        return F.sign(x) if isinstance(x, F.Tensor) else np.sign(x)

    @staticmethod
    def where(cond, a, b):
        return F.where(cond, a, b)

    @staticmethod
    def sum(x, axis=None, keepdims=False):
        return F.sum(x, dim=_axis(axis), keepdim=keepdims)

    @staticmethod
    def prod(x, axis=None, keepdims=False):
        if axis is None and not keepdims:
            return F.prod(F.reshape(x, (-1,)), 0)
        if axis is None:
            return F.reshape(F.prod(F.reshape(x, (-1,)), 0), (1,) * x.ndim)
        return F.prod(x, dim=axis, keepdim=keepdims)

    @staticmethod
    def mean(x, axis=None, keepdims=False):
        return F.mean(x, dim=_axis(axis), keepdim=keepdims)

    @staticmethod
    def reshape(x, shape):
        return F.reshape(x, tuple(shape))

    @staticmethod
    def broadcast_to(x, shape):
        return F.expand(x, tuple(shape))

    @staticmethod
    def expand_dims(x, axis):
        shape = list(x.shape)
        axis = axis if axis >= 0 else len(shape) + 1 + axis
        shape.insert(axis, 1)
        return F.reshape(x, tuple(shape))

    @staticmethod
    def squeeze(x, axis):
        shape = list(x.shape)
        del shape[axis]
        return F.reshape(x, tuple(shape))

    @staticmethod
    def swapaxes(x, a, b):
        return F.transpose(x, a, b)

    @staticmethod
    def transpose(x, axes):
        return F.permute(x, tuple(axes))

    @staticmethod
    def zeros_like(x):
        return F.Tensor(np.zeros(x.shape, dtype=x.dtype))

    @staticmethod
    def ones_like(x):
        return F.Tensor(np.ones(x.shape, dtype=x.dtype))

    def __getattr__(self, name):
        raise AttributeError(
            f"backward rule uses xp.{name}, which the differentiable namespace (ops/xp.py) "
            "does not provide yet: add it there so create_graph=True works for this op")


tensor_namespace = _TensorNamespace()

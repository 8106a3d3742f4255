"""The differentiable array namespace: NumPy's names, tapegrad's recorded ops.

Backward rules are written once against an array namespace `xp`. For an ordinary
backward `xp` is NumPy itself (raw arrays, no recording, fast). Under
`create_graph=True` the walk asks the gradient tensor for its namespace
(`Tensor.__array_namespace__()`, the Array API's hook) and gets this one, so the same
rule builds a graph and can be differentiated again (grad of grad, Hessian-vector
products). Each function applies one table entry with NumPy's argument names; only
the functions the rules use are here: keep the two in step.
"""
import numpy as np

from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from .rules import pointwise as E
from .rules import products as L
from .rules import reductions as R
from .rules import shape as S


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _unary(op):
    return staticmethod(lambda x: apply(op, x))


class _TensorNamespace:
    """NumPy-compatible signatures over tapegrad's differentiable table entries."""

    exp = _unary(E.exp)
    log = _unary(E.log)
    sqrt = _unary(E.sqrt)
    sin = _unary(E.sin)
    cos = _unary(E.cos)
    tanh = _unary(E.tanh)
    abs = _unary(E.abs)

    @staticmethod
    def matmul(a, b):
        return apply(L.matmul, a, b)

    @staticmethod
    def maximum(a, b):
        return apply(E.maximum, a, b)

    @staticmethod
    def minimum(a, b):
        return apply(E.minimum, a, b)

    @staticmethod
    def sign(x):
        return apply(E.sign, x) if isinstance(x, TensorBase) else np.sign(x)

    @staticmethod
    def where(cond, a, b):
        c = cond._data if isinstance(cond, TensorBase) else np.asarray(cond)
        return apply(E.where, c.astype(bool, copy=False), a, b)

    @staticmethod
    def sum(x, axis=None, keepdims=False):
        return apply(R.sum, x, axis=_axis(axis), keepdims=keepdims)

    @staticmethod
    def mean(x, axis=None, keepdims=False):
        return apply(R.mean, x, axis=_axis(axis), keepdims=keepdims)

    @staticmethod
    def prod(x, axis=None, keepdims=False):
        if axis is None:  # the product of all elements, as a product along one axis
            flat = apply(S.reshape, x, shape=(-1,))
            out = apply(R.prod, flat, axis=0, keepdims=False)
            return apply(S.reshape, out, shape=(1,) * x.ndim) if keepdims else out
        return apply(R.prod, x, axis=axis, keepdims=keepdims)

    @staticmethod
    def reshape(x, shape):
        return apply(S.reshape, x, shape=tuple(shape))

    @staticmethod
    def broadcast_to(x, shape):
        return apply(S.expand, x, shape=tuple(shape))

    @staticmethod
    def expand_dims(x, axis):
        shape = list(x.shape)
        axis = axis if axis >= 0 else len(shape) + 1 + axis
        shape.insert(axis, 1)
        return apply(S.reshape, x, shape=tuple(shape))

    @staticmethod
    def squeeze(x, axis):
        shape = list(x.shape)
        del shape[axis]
        return apply(S.reshape, x, shape=tuple(shape))

    @staticmethod
    def swapaxes(x, a, b):
        dims = list(range(x.ndim))
        dims[a], dims[b] = dims[b], dims[a]
        return apply(S.permute, x, dims=tuple(dims))

    @staticmethod
    def transpose(x, axes):
        return apply(S.permute, x, dims=tuple(int(a) for a in axes))

    @staticmethod
    def zeros_like(x):
        if not isinstance(x, TensorBase):  # a constant input (mask, index array)
            return np.zeros_like(x)
        return like(x, np.zeros(x.shape, dtype=x.dtype))

    @staticmethod
    def ones_like(x):
        if not isinstance(x, TensorBase):
            return np.ones_like(x)
        return like(x, np.ones(x.shape, dtype=x.dtype))

    def __getattr__(self, name):
        raise AttributeError(
            f"backward rule uses xp.{name}, which the differentiable namespace (ops/xp.py) "
            "does not provide yet: add it there so create_graph=True works for this op")


namespace = _TensorNamespace()

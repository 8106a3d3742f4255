"""Public functions that are compositions of existing op functions (no table entry of
their own: their derivatives are their parts'): lerp, addcmul, addcdiv, addmm, mv,
ravel, tile, broadcast_tensors, isclose, count_nonzero.

Real programs use them for EMA updates (`torch.lerp`), affine maps (`torch.addmm`),
and tensor plumbing; PyTorch's names, arguments and defaults.
"""
import numpy as np

from ..core.tensor_base import TensorBase, like
from . import functions as F
from . import shape_functions as S


def _t(x, name):
    return F._tensor(x, name)


def lerp(input, end, weight):
    """input + weight * (end - input) (weight a number or a tensor)."""
    x = _t(input, "lerp")
    return x + weight * (end - x)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    prod = tensor1 * tensor2
    return _t(input, "addcmul") + (prod if value == 1 else prod * value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    q = tensor1 / tensor2
    return _t(input, "addcdiv") + (q if value == 1 else q * value)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) (input broadcast to the product's shape)."""
    m = F.mm(mat1, mat2)
    m = m if alpha == 1 else m * alpha
    x = _t(input, "addmm")
    if beta == 0:  # torch: input's values are ignored (nan/inf do not propagate), its
        # gradient is 0: where() picks the product everywhere
        return F.where(like(x, np.ones(tuple(m.shape), dtype=bool)), m, x)
    return (x if beta == 1 else x * beta) + m


def mv(input, vec):
    """Matrix-vector product: (n, m) @ (m,) -> (n,)."""
    a, v = _t(input, "mv"), _t(vec, "mv")
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, "
                           f"{v.ndim}")
    return F.matmul(a, v)


def ravel(input):
    """The elements as a 1-D tensor (a view when possible)."""
    return F.reshape(_t(input, "ravel"), (-1,))


def tile(input, dims):
    """repeat() with dims padded by leading 1s to the tensor's rank (and vice versa)."""
    x = _t(input, "tile")
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) < x.ndim:
        dims = (1,) * (x.ndim - len(dims)) + dims
    return S.repeat(x, *dims)


def broadcast_tensors(*tensors):
    """Each tensor expanded to the common broadcast shape."""
    ts = [_t(t, "broadcast_tensors") for t in tensors]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in ts))
    return tuple(F.expand(t, shape) for t in ts)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (bool tensor, no gradient)."""
    x = _t(input, "isclose")
    o = other.detach().numpy() if isinstance(other, TensorBase) else other
    return like(x, np.isclose(x.detach().numpy(), o, rtol=rtol, atol=atol, equal_nan=equal_nan))


def count_nonzero(input, dim=None):
    """The number of nonzero elements (along dim): an int64 tensor."""
    x = _t(input, "count_nonzero")
    a = x.detach().numpy()
    axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    return like(x, np.asarray(np.count_nonzero(a, axis=axis), dtype=np.int64))

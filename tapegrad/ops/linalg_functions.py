"""Norms with PyTorch's names and arguments: torch.norm / Tensor.norm and
torch.linalg.norm, vector_norm, matrix_norm, svdvals (exposed as `tg.linalg`).

Vector norms are one table entry (linalg_extra.vector_norm, PyTorch's rule with the 0
subgradient at 0). Matrix norms are composites, as PyTorch writes them: 'fro' is the
2-norm of the two dims; 1 / -1 the max / min column sum of |A|, inf / -inf the
max / min row sum; 'nuc', 2, -2 the sum / max / min of the singular values.
"""
import builtins
import math


from ..core.record import apply
from . import functions as F
from .rules import linalg as LX
from .functions_extra import _tname
from .shape_functions import _dim

_INF = math.inf


def _dims_arg(dim, nd):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(_dim(d, nd) for d in dim)
    return (_dim(dim, nd),)


def _ord_value(name, ord):
    if isinstance(ord, str):
        raise RuntimeError(f"{name}: Expected a non-string ord, got {ord!r}")
    try:
        return float(ord)
    except (TypeError, ValueError):
        raise TypeError(f"{name}(): argument 'ord' must be a number, not "
                        f"{type(ord).__name__}") from None


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of x's elements over `dim` (all of them by default): sum(|x|**ord)**
    (1/ord); ord inf / -inf: max / min |x|; ord 0: the number of non-zeros."""
    t = F._tensor(x, "linalg.vector_norm")
    if dtype is not None:
        t = t.to(dtype)
    if t.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_tname(t.dtype)}")
    p = _ord_value("linalg.vector_norm", ord)
    dims = _dims_arg(dim, t.ndim)
    if p < 0 and t.numel() == 0:
        raise RuntimeError("linalg.vector_norm cannot compute the "
                           f"{ord} norm on an empty tensor because the operation does not "
                           "have an identity")
    if dims is not None and len(set(dims)) != len(dims):
        raise RuntimeError("linalg.vector_norm: dim appears multiple times in the list")
    axis = None if dims is None or t.ndim == 0 else dims
    return apply(LX.vector_norm, t, axis=axis, ord=p, keepdims=bool(keepdim))


def svdvals(A, *, driver=None):
    """The singular values of A (a batch of matrices), in decreasing order."""
    t = F._tensor(A, "linalg.svdvals")
    if t.ndim < 2:
        raise RuntimeError("linalg.svdvals: The input tensor A must have at least 2 "
                           "dimensions.")
    if t.dtype.kind != "f":
        raise RuntimeError("linalg.svd: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(t.dtype)}")
    return apply(LX.svdvals, t)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro', 'nuc', inf, -inf, 1, -1, 2, -2 norms of the matrices in dims `dim`."""
    t = F._tensor(A, "linalg.matrix_norm")
    if dtype is not None:
        t = t.to(dtype)
    if t.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if t.dtype.kind != "f":
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_tname(t.dtype)}")
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if len(dims) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           + " ".join(str(d) for d in dims))
    d0, d1 = _dim(dims[0], t.ndim), _dim(dims[1], t.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if ord == "fro":
        return vector_norm(t, 2, (d0, d1), keepdim)
    if ord == "nuc" or (not isinstance(ord, str) and builtins.abs(float(ord)) == 2):
        # the singular values of the matrices moved to the last two dims
        m = F.permute(t, [k for k in range(t.ndim) if k not in (d0, d1)] + [d0, d1])
        s = svdvals(m)
        if ord == "nuc":
            out = F.sum(s, -1)
        else:
            out = F.amax(s, -1) if float(ord) > 0 else F.amin(s, -1)
        return _keep(out, t.ndim, d0, d1) if keepdim else out
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    p = float(ord)
    if p not in (1.0, -1.0, _INF, -_INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1 / -1: column sums (over d0) then max / min over d1; inf / -inf: the other way
    inner, outer = (d0, d1) if builtins.abs(p) == 1 else (d1, d0)
    sums = F.sum(F.abs(t), inner, keepdim=True)
    out = F.amax(sums, outer, keepdim=True) if p > 0 else F.amin(sums, outer, keepdim=True)
    return out if keepdim else F.reshape(out, tuple(
        s for k, s in enumerate(t.shape) if k not in (d0, d1)))


def _keep(out, nd, d0, d1):
    shape = list(out.shape)
    for d in sorted((d0, d1)):
        shape.insert(d, 1)
    return F.reshape(out, tuple(shape))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm or a matrix norm, chosen as torch does: with
    ord=None and dim=None the 2-norm of all elements; else a 2-tuple dim (or a 2-D input
    without dim) means a matrix norm, an int dim (or 1-D input) a vector norm."""
    t = F._tensor(A, "linalg.norm")
    if dim is not None:
        dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
        if len(dims) == 2:
            return matrix_norm(t, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(t, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(t, 2, None, keepdim, dtype=dtype)
    if t.ndim == 2:
        return matrix_norm(t, ord, (-2, -1), keepdim, dtype=dtype)
    if t.ndim == 1 and not isinstance(ord, str):
        return vector_norm(t, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                       f"1D or 2D. Got {t.ndim}D.")


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm / Tensor.norm (the older interface): p 'fro' or a number is a vector
    norm over `dim` (all elements by default); 'nuc' a matrix norm."""
    t = F._tensor(input, "norm")
    dims = None if dim is None else (tuple(dim) if isinstance(dim, (list, tuple)) else (dim,))
    if p == "nuc":
        if dims is None:
            if t.ndim != 2:
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                                   + " ".join(str(k) for k in range(t.ndim)))
            dims = (0, 1)
        return matrix_norm(t, "nuc", dims, keepdim, dtype=dtype)
    if p == "fro":
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm(): p must be a number, 'fro' or 'nuc', got {p!r}")
    return vector_norm(t, 2 if p is None else p, dims, keepdim, dtype=dtype)



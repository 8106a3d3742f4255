"""torch's cross products, determinants, inverses and solves, with its names, arguments
and error messages: torch.cross / linalg.cross, linalg.det / det, linalg.slogdet /
slogdet, logdet, linalg.inv / inverse, linalg.solve. The table entries are in
linalg_solve.py; the checks shared with the decompositions are `check_matrices`.
"""
import warnings

import numpy as np

from .. import dtypes as _dt
from ..core.record import apply, apply_saved
from ..core.tensor_base import like
from . import functions as F
from .rules import linalg_solve as LS
from . import shape_functions as S
from .return_types import structseq

_tname = _dt.torch_name

linalg_slogdet_result = structseq("linalg_slogdet", ["sign", "logabsdet"])
slogdet_result = structseq("slogdet", ["sign", "logabsdet"])


def check_matrices(name, A, *, square=True, half=None):
    """torch's checks of a (batch of) matrices: 2+ dims, floating point, (square).
    `half`: the error torch gives for float16 (its kernel's, or a sentence)."""
    t = F._tensor(A, name)
    if t.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if t.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(t.dtype)}")
    if t.dtype == np.float16:
        if half is None or half.startswith('"'):
            raise NotImplementedError(f"{half or name} not implemented for 'Half'")
        raise RuntimeError(f"{name}: {half}")
    if square and t.shape[-1] != t.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{t.shape[-2]} by {t.shape[-1]} matrices")
    return t


_LOW = "Low precision dtypes not supported. Got Half"


# ---- cross ------------------------------------------------------------------------------
def linalg_cross(input, other, *, dim=-1):
    """torch.linalg.cross: the cross product of 3-vectors along `dim` (inputs broadcast,
    with the same number of dims and dtype)."""
    x = F._tensor(input, "linalg.cross")
    y = F._tensor(other, "linalg.cross")
    if x.ndim != y.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = S._dim(dim, x.ndim)
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[d]} and {y.shape[d]}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {_tname(x.dtype)} but found "
                           f"{_tname(y.dtype)}")
    if x.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    F._check_broadcast("linalg.cross", x, y)
    return apply(LS.cross, x, y, axis=d)


_cross_warned = []


def cross(input, other, dim=None):
    """torch.cross / Tensor.cross: without `dim`, the first dim of size 3 (deprecated:
    torch warns once per process, as TORCH_WARN_ONCE)."""
    x = F._tensor(input, "cross")
    if dim is None:
        if not _cross_warned:
            _cross_warned.append(True)
            warnings.warn(
                "Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                "default value of dim will change to agree with that of linalg.cross in a "
                "future release.", UserWarning, stacklevel=2)
        sizes = list(x.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return linalg_cross(x, other, dim=dim)


# ---- det, slogdet, logdet ----------------------------------------------------------------
def linalg_det(A):
    """The determinant of every matrix of the batch A (..., n, n)."""
    t = check_matrices("linalg.det", A, half='"lu_cpu"')
    return apply(LS.det, t)


def det(input):
    return linalg_det(input)


def _slogdet(name, A, result):
    t = check_matrices(name, A, half=_LOW)
    logabs, saved = apply_saved(LS.logabsdet, t)
    return result(like(t, saved["sign"].astype(t.dtype, copy=False)), logabs)


def linalg_slogdet(A):
    """(sign, logabsdet): det(A) = sign * exp(logabsdet); only logabsdet has a
    gradient (the sign of a real matrix is piecewise constant)."""
    return _slogdet("linalg.slogdet", A, linalg_slogdet_result)


def slogdet(input):
    return _slogdet("linalg.slogdet", input, slogdet_result)


def logdet(input):
    """log(det(A)): nan where det < 0, -inf where it is 0 (torch's)."""
    sign, logabs = _slogdet("logdet", input, slogdet_result)
    return F.where(sign._data < 0, float("nan"), logabs)


# ---- inverse, solve ----------------------------------------------------------------------
def linalg_inv(A):
    """The inverse of every matrix of the batch A (LinAlgError for a singular one)."""
    t = check_matrices("linalg.inv", A, half=_LOW)
    return apply(LS.inv, t)


def inverse(input):
    return linalg_inv(input)


def _batch_broadcast(a, b):
    """torch's message for batch dims that do not broadcast (a, b: the shapes)."""
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        for k in range(n - 1, -1, -1):
            if pa[k] != pb[k] and pa[k] != 1 and pb[k] != 1:
                raise RuntimeError(f"The size of tensor a ({pa[k]}) must match the size of "
                                   f"tensor b ({pb[k]}) at non-singleton dimension {k}") from None
        raise


def solve(A, B, *, left=True):
    """torch.linalg.solve: X with A X = B (left) or X A = B. B is a (batch of) vector(s)
    when it is 1-D or A's shape without its last dim; batch dims broadcast."""
    a = check_matrices("linalg.solve", A, square=False, half='"lu_cpu"')
    b = F._tensor(B, "linalg.solve")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_tname(a.dtype)} and B of type {_tname(b.dtype)} "
                           "instead")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.solve: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    b2 = S.unsqueeze(b, -1) if vector else b
    n = a.shape[-1]
    ok = b2.shape[-2] == n if left else (b2.shape[-1] == n and not vector)
    if b2.ndim < 2 or not ok:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {b2.shape[-2]}x{b2.shape[-1]})")
    _batch_broadcast(tuple(b2.shape[:-2]), tuple(a.shape[:-2]))  # torch's order: B, A
    if left:
        x = apply(LS.solve, a, b2)
    else:  # X A = B  <=>  A^T X^T = B^T
        x = F.transpose(apply(LS.solve, F.transpose(a, -2, -1), F.transpose(b2, -2, -1)),
                        -2, -1)
    return S.squeeze(x, -1) if vector else x

"""The functions behind tg.linalg (norms, det/slogdet/inv/solve, svd/qr/eigh/cholesky/
pinv, cross) and their torch.* names. Derivatives: rules/linalg*.py."""
import builtins
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..core.record import apply, apply_saved
from ..core.state import state
from ..core.tensor_base import like
from . import (_args, conversion as _conversion, pointwise as _pointwise, products as _products,
               reductions as _reductions, shape as _shape)
from .public import public, public_inplace
from .return_types import structseq
from .rules import linalg as LX, linalg_decomp as LD, linalg_solve as LS


@public(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R),
    out[i, j] = ||x1[i] - x2[j]||_p (the norm of every difference: exact, where torch
    may use a matmul form for p = 2)."""
    a, b = _args._tensor(x1, "cdist"), _args._tensor(x2, "cdist")
    for t, nm in ((a, "X1"), (b, "X2")):
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {nm} got: "
                               f"{_dt.torch_name(t._data.dtype)}")
    for t, nm in ((a, "X1"), (b, "X2")):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {nm} got: "
                               f"{t._data.ndim}D")
    if a._data.shape[-1] != b._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{a._data.shape[-1]} X2: {b._data.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return vector_norm(_shape.unsqueeze(a, -2) - _shape.unsqueeze(b, -3), float(p), dim=-1)


@public
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    a, b = _args._tensor(input, "dist"), _args._tensor(other, "dist", "other", 2)
    if _dt.as_dtype(_conversion.promote_types(a._data.dtype, b._data.dtype)).kind != "f":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_dt.torch_name(_conversion.promote_types(a._data.dtype, b._data.dtype))}"
                           f" instead.")
    return vector_norm(_pointwise.sub(a, b), p)


@public
def renorm(input, p, dim, maxnorm):
    """Each slice along `dim` whose p-norm exceeds maxnorm scaled to norm maxnorm (by
    maxnorm / (norm + 1e-7), torch's factor); the factor is differentiated too, as
    torch's renorm_backward does."""
    x = _args._tensor(input, "renorm")
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} "
                           f"dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _args._dim(dim, x.ndim)
    others = tuple(i for i in range(x.ndim) if i != d)
    norm = vector_norm(x, p, others, True)
    big = like(x, norm._data > maxnorm)
    factor = _pointwise.where(big, _pointwise.div(maxnorm, _pointwise.add(norm, 1e-7)),
                     like(x, np.ones((), x._data.dtype)))
    return _pointwise.mul(x, factor)


@public(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/|x1| * x2/|x2|) along dim, each norm clamped to at least eps (torch clamps
    without recording, so the gradient is the unclamped one; they agree for norms > eps)."""
    a, b = _args._tensor(x1, "cosine_similarity", "x1"), _args._tensor(x2, "cosine_similarity", "x2", 2)
    common = _dt.as_dtype(_conversion.promote_types(a._data.dtype, b._data.dtype))
    if common.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dt.torch_name(common)}")
    if a.shape != b.shape:
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            _args._check_broadcast("cosine_similarity", a, b)
            raise
        a, b = _shape.expand(a, shape), _shape.expand(b, shape)
    na = _pointwise.clamp_min(vector_norm(a, 2, dim, True), eps)
    nb = _pointwise.clamp_min(vector_norm(b, 2, dim, True), eps)
    return _reductions.sum(_pointwise.mul(_pointwise.div(a, na), _pointwise.div(b, nb)), dim)


@public(method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps along the last dim (0-d and 1-d inputs: the whole)."""
    a, b = _args._tensor(x1, "pairwise_distance", "x1"), _args._tensor(x2, "pairwise_distance", "x2", 2)
    nd = max(a.ndim, b.ndim)
    diff = _pointwise.add(_pointwise.sub(a, b), eps)
    if nd == 0:
        return vector_norm(diff, p, None, keepdim)
    return vector_norm(diff, p, nd - 1, keepdim)


_INF = math.inf


def _dims_arg(dim, nd):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(_args._dim(d, nd) for d in dim)
    return (_args._dim(dim, nd),)


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
    t = _args._tensor(x, "linalg.vector_norm")
    if dtype is not None:
        t = t.to(dtype)
    if t.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_args._tname(t.dtype)}")
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
    t = _args._tensor(A, "linalg.svdvals")
    if t.ndim < 2:
        raise RuntimeError("linalg.svdvals: The input tensor A must have at least 2 "
                           "dimensions.")
    if t.dtype.kind != "f":
        raise RuntimeError("linalg.svd: Expected a floating point or complex tensor as "
                           f"input. Got {_args._tname(t.dtype)}")
    return apply(LX.svdvals, t)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro', 'nuc', inf, -inf, 1, -1, 2, -2 norms of the matrices in dims `dim`."""
    t = _args._tensor(A, "linalg.matrix_norm")
    if dtype is not None:
        t = t.to(dtype)
    if t.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if t.dtype.kind != "f":
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_args._tname(t.dtype)}")
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if len(dims) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           + " ".join(str(d) for d in dims))
    d0, d1 = _args._dim(dims[0], t.ndim), _args._dim(dims[1], t.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if ord == "fro":
        return vector_norm(t, 2, (d0, d1), keepdim)
    if ord == "nuc" or (not isinstance(ord, str) and builtins.abs(float(ord)) == 2):
        # the singular values of the matrices moved to the last two dims
        m = _shape.permute(t, [k for k in range(t.ndim) if k not in (d0, d1)] + [d0, d1])
        s = svdvals(m)
        if ord == "nuc":
            out = _reductions.sum(s, -1)
        else:
            # (the largest of no singular values is 0 for torch, without history)
            out = _reductions.amin(s, -1) if float(ord) < 0 else \
                _reductions.amax(s, -1) if s.shape[-1] else _reductions.sum(s, -1).detach()
        return _keep(out, t.ndim, d0, d1) if keepdim else out
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    p = float(ord)
    if p not in (1.0, -1.0, _INF, -_INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1 / -1: column sums (over d0) then max / min over d1; inf / -inf: the other way
    inner, outer = (d0, d1) if builtins.abs(p) == 1 else (d1, d0)
    sums = _reductions.sum(_pointwise.abs(t), inner, keepdim=True)
    if p < 0:
        out = _reductions.amin(sums, outer, keepdim=True)
    elif sums.shape[outer]:
        out = _reductions.amax(sums, outer, keepdim=True)
    else:  # the largest of no sums is 0 for torch, a result without history
        out = _reductions.sum(sums, outer, keepdim=True).detach()
    return out if keepdim else _shape.reshape(out, tuple(
        s for k, s in enumerate(t.shape) if k not in (d0, d1)))


def _keep(out, nd, d0, d1):
    shape = list(out.shape)
    for d in sorted((d0, d1)):
        shape.insert(d, 1)
    return _shape.reshape(out, tuple(shape))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm or a matrix norm, chosen as torch does: with
    ord=None and dim=None the 2-norm of all elements; else a 2-tuple dim (or a 2-D input
    without dim) means a matrix norm, an int dim (or 1-D input) a vector norm."""
    t = _args._tensor(A, "linalg.norm")
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


@public
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm / Tensor.norm (the older interface): p 'fro' or a number is a vector
    norm over `dim` (all elements by default); 'nuc' a matrix norm."""
    t = _args._tensor(input, "norm")
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


linalg_slogdet_result = structseq("linalg_slogdet", ["sign", "logabsdet"])
slogdet_result = structseq("slogdet", ["sign", "logabsdet"])


def check_matrices(name, A, *, square=True, half=None):
    """torch's checks of a (batch of) matrices: 2+ dims, floating point, (square).
    `half`: the error torch gives for float16 (its kernel's, or a sentence)."""
    t = _args._tensor(A, name)
    if t.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if t.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_args._tname(t.dtype)}")
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
    x = _args._tensor(input, "linalg.cross")
    y = _args._tensor(other, "linalg.cross")
    if x.ndim != y.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _args._dim(dim, x.ndim)
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[d]} and {y.shape[d]}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {_args._tname(x.dtype)} but found "
                           f"{_args._tname(y.dtype)}")
    if x.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    _args._check_broadcast("linalg.cross", x, y)
    return apply(LS.cross, x, y, axis=d)


_cross_warned = []


@public
def cross(input, other, dim=None):
    """torch.cross / Tensor.cross: without `dim`, the first dim of size 3 (deprecated:
    torch warns once per process, as TORCH_WARN_ONCE)."""
    x = _args._tensor(input, "cross")
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


@public
def det(input):
    return linalg_det(input)


def _slogdet(name, A, result):
    t = check_matrices(name, A, half=_LOW)
    logabs, saved = apply_saved(LS.logabsdet, t)
    sign = like(t, saved["sign"].astype(t.dtype, copy=False))
    if t._rg and state.grad_enabled:
        # torch's sign requires grad too (its gradient is 0): the constant, joined to A by
        # a branch `where` never takes (sign(sum A): a zero gradient, never NaN)
        sign = _pointwise.where(np.ones(sign.shape, dtype=bool), sign, _pointwise.sign(
            _reductions.sum(t, (-2, -1))))
    return result(sign, logabs)


def linalg_slogdet(A):
    """(sign, logabsdet): det(A) = sign * exp(logabsdet); only logabsdet has a
    gradient (the sign of a real matrix is piecewise constant)."""
    return _slogdet("linalg.slogdet", A, linalg_slogdet_result)


@public
def slogdet(input):
    return _slogdet("linalg.slogdet", input, slogdet_result)


@public
def logdet(input):
    """log(det(A)): nan where det < 0, -inf where it is 0 (torch's)."""
    sign, logabs = _slogdet("logdet", input, slogdet_result)
    return _pointwise.where(sign._data < 0, float("nan"), logabs)


# ---- inverse, solve ----------------------------------------------------------------------
def linalg_inv(A):
    """The inverse of every matrix of the batch A (LinAlgError for a singular one)."""
    t = check_matrices("linalg.inv", A, half=_LOW)
    return apply(LS.inv, t)


@public
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
    b = _args._tensor(B, "linalg.solve")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_args._tname(a.dtype)} and B of type {_args._tname(b.dtype)} "
                           "instead")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.solve: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    b2 = _shape.unsqueeze(b, -1) if vector else b
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
        x = _shape.transpose(apply(LS.solve, _shape.transpose(a, -2, -1), _shape.transpose(b2, -2, -1)),
                        -2, -1)
    return _shape.squeeze(x, -1) if vector else x


linalg_svd_result = structseq("linalg_svd", ["U", "S", "Vh"])
svd_result = structseq("svd", ["U", "S", "V"])
linalg_qr_result = structseq("linalg_qr", ["Q", "R"])
linalg_eigh_result = structseq("linalg_eigh", ["eigenvalues", "eigenvectors"])


# ---- SVD ----------------------------------------------------------------------------------
def _svd(t, full_matrices):
    s, saved = apply_saved(LD.svd_S, t, full_matrices=bool(full_matrices))
    kw = {"u": saved["u"], "s": s._data, "vh": saved["vh"], "full_matrices": bool(full_matrices)}
    return apply(LD.svd_U, t, **kw), s, apply(LD.svd_Vh, t, **kw)


def linalg_svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh; S decreasing. The singular vectors are defined up
    to sign: functions of them that do not depend on it have torch's gradients."""
    t = check_matrices("linalg.svd", A, square=False, half='"linalg_svd_cpu"')
    return linalg_svd_result(*_svd(t, full_matrices))


@public
def svd(input, some=True, compute_uv=True):
    """torch.svd / Tensor.svd: (U, S, V), V = Vh^T; some=False gives the full U and V;
    compute_uv=False gives zero U and V (no gradient)."""
    t = _args._tensor(input, "svd")
    if t.ndim < 2:
        raise RuntimeError("linalg.svd: input should have at least 2 dimensions, but has "
                           f"{t.ndim} dimensions instead")
    t = check_matrices("linalg.svd", t, square=False, half='"linalg_svd_cpu"')
    m, n = t.shape[-2], t.shape[-1]
    if not compute_uv:
        s = apply(LD.svd_S, t, full_matrices=False)
        lead = tuple(t.shape[:-2])
        return svd_result(like(t, np.zeros(lead + (m, m), t.dtype)), s,
                          like(t, np.zeros(lead + (n, n), t.dtype)))
    u, s, vh = _svd(t, not some)
    return svd_result(u, s, _shape.transpose(vh, -2, -1))


# ---- QR -----------------------------------------------------------------------------------
def linalg_qr(A, mode="reduced"):
    """(Q, R) with A = Q R, R upper triangular; mode 'reduced', 'complete' or 'r' (Q
    empty). Differentiable for 'reduced', and for 'complete' when rows <= columns."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    t = check_matrices("linalg.qr", A, square=False, half='"geqrf_cpu"')
    q, saved = apply_saved(LD.qr_Q, t, mode=mode)
    r = apply(LD.qr_R, t, q=q._data, r=saved["r"], mode=mode)
    if mode == "r":  # R only (Q was computed for R's entry, whose rule refuses by name)
        q = like(t, np.zeros((0,), t.dtype))
    return linalg_qr_result(q, r)


# ---- eigh ---------------------------------------------------------------------------------
def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("L", "l")


def linalg_eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors) of the symmetric matrices A, read from the
    lower (UPLO='L') or upper triangle. The gradient is torch's: A taken as symmetric."""
    lower = _uplo(UPLO)
    t = check_matrices("linalg.eigh", A, half='"linalg_eigh_cpu"')
    w, saved = apply_saved(LD.eigh_L, t, lower=lower)
    q = apply(LD.eigh_Q, t, w=w._data, q=saved["q"], lower=lower)
    return linalg_eigh_result(w, q)


def eigvalsh(A, UPLO="L"):
    lower = _uplo(UPLO)
    t = check_matrices("linalg.eigh", A, half='"linalg_eigh_cpu"')
    return apply(LD.eigh_L, t, lower=lower)


# ---- Cholesky -----------------------------------------------------------------------------
def cholesky(A, *, upper=False):
    """L (lower, A = L L^T) or, with upper=True, U = L^T; LinAlgError with torch's words
    for a matrix that is not positive definite."""
    t = check_matrices("linalg.cholesky", A, half='"cholesky_cpu"')
    return apply(LD.cholesky, t, upper=bool(upper))


# ---- pseudo-inverse ---------------------------------------------------------------------
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """torch.linalg.pinv: V diag(1/S) U^T over the singular values above
    max(atol, rtol * S.max()) (rtol defaults to eps * max(m, n), or to 0 when only a
    positive atol is given). A composite of the svd entries: for a full-rank A with
    distinct singular values its gradient is torch's (pinv_backward); where the tolerance
    drops singular values torch's differs (its formula assumes the full pseudo-inverse)."""
    t = _args._tensor(A, "linalg.pinv")
    if t.ndim < 2 or t.dtype.kind != "f" or t.dtype == np.float16:
        raise RuntimeError(f"linalg.pinv({_args._tname(t.dtype)}{{{list(t.shape)}}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")
    m, n = t.shape[-2], t.shape[-1]
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else np.finfo(t.dtype).eps * max(m, n)
    # hermitian=True: torch computes with eigh, which reads the lower triangle only; the
    # SVD of that symmetric matrix gives the same pinv. Its gradient is torch's general
    # formula (pinv_backward) taken at A: the symmetrization passes the gradient straight.
    if hermitian:
        if m != n:
            raise RuntimeError("linalg.eigh: A must be batches of square matrices, but they "
                               f"are {m} by {n} matrices")
        low = _shape.tril(t.detach())
        sym = low + _shape.transpose(_shape.tril(t.detach(), -1), -2, -1)
        t = t + (sym - t.detach())
    left, s, right = _svd(t, False)
    tol = _reductions.amax(s.detach(), -1, keepdim=True) * float(rtol) if s.shape[-1] else s.detach()
    if atol is not None:
        tol = _pointwise.clamp_min(tol, float(atol))
    keep = s > tol
    # 1/s only where kept: the masked-out branch never divides by 0 (no 0 * inf = nan)
    inv_s = _pointwise.where(keep, 1.0 / _pointwise.where(keep, s, 1.0), 0.0)
    # pinv = Vh^T diag(1/s) U^T
    return _products.matmul(_shape.transpose(right, -2, -1) * _shape.unsqueeze(inv_s, -2),
                    _shape.transpose(left, -2, -1))


renorm_ = public_inplace(renorm, function=False)

"""The functions behind tg.linalg (norms, det/slogdet/inv/solve, svd/qr/eigh/cholesky/
pinv, cross; the matrix functions: matrix_power, multi_dot, vecdot, vander, matrix_rank,
cond, matrix_exp, tensorinv/tensorsolve; the solvers: solve_triangular, cholesky_solve,
lu_solve, lstsq, the _ex forms; the factorizations: LU, LDL, the Householder form,
the randomized low-rank SVD) and their torch.* names. Derivatives: rules/linalg*.py."""
import builtins
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..core.grad_mode import no_grad
from ..core.record import apply, apply_saved
from ..core.tensor_base import like
from . import (_args, conversion as _conversion, pointwise as _pointwise, products as _products,
               random as _sampling,
               reductions as _reductions, shape as _shape)
from .public import public, public_inplace
from .return_types import structseq
from .rules import linalg as LX, linalg_decomp as LD, linalg_lu as LUF, linalg_solve as LS


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
            out = _max_min(s, -1, float(ord) > 0)
        return _keep(out, t.ndim, d0, d1) if keepdim else out
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    p = float(ord)
    if p not in (1.0, -1.0, _INF, -_INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1 / -1: column sums (over d0) then max / min over d1; inf / -inf: the other way
    inner, outer = (d0, d1) if builtins.abs(p) == 1 else (d1, d0)
    sums = _reductions.sum(_pointwise.abs(t), inner, keepdim=True)
    out = _max_min(sums, outer, p > 0, keepdim=True)
    return out if keepdim else _shape.reshape(out, tuple(
        s for k, s in enumerate(t.shape) if k not in (d0, d1)))


def _max_min(t, dim, largest, keepdim=False):
    """amax / amin of the nonnegative sums or singular values over dim. Over an empty dim
    torch's max is 0 (a norm's identity: the sum of nothing), a result without history,
    and its min raises IndexError."""
    if t.shape[dim] == 0:
        if largest:
            return _reductions.sum(t, dim, keepdim=keepdim).detach()
        raise IndexError(f"amin(): Expected reduction dim {dim} to have non-zero size.")
    return _reductions.amax(t, dim, keepdim=keepdim) if largest else _reductions.amin(
        t, dim, keepdim=keepdim)


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


def _same_dtype(prefix, a, a_name, b, b_name, end=""):
    """torch's refusal of two operands of different dtypes (the message names them in the
    op's own order)."""
    if a.dtype != b.dtype:
        raise RuntimeError(f"{prefix}Expected {a_name} and {b_name} to have the same dtype, but "
                           f"found {a_name} of type {_args._tname(a.dtype)} and {b_name} of type "
                           f"{_args._tname(b.dtype)} instead{end}")


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
    return result(apply(LS.slogdet_sign, t, sign=saved["sign"]), logabs)


def linalg_slogdet(A):
    """(sign, logabsdet): det(A) = sign * exp(logabsdet); the sign's gradient is 0 (the
    sign of a real matrix is piecewise constant)."""
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
    _same_dtype("linalg.solve: ", a, "A", b, "B")
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


# ==== matrix functions: powers, products, exponential, rank, condition number =============
# (torch.linalg.matrix_power / multi_dot / vecdot / vander / diagonal / matrix_rank / cond /
# tensorinv / tensorsolve, torch.matrix_exp / pinverse: composites of the entries above,
# except matrix_exp, whose rule is in rules/linalg_lu.py)
def _eye_like(t):
    """The identity in t's batch shape and dtype (a constant)."""
    n = t.shape[-1]
    return like(t, np.broadcast_to(np.eye(n, dtype=t.dtype), tuple(t.shape)).copy())


def linalg_matrix_power(A, n):
    """A^n by binary exponentiation (torch's order of products); n < 0: inv(A)^-n;
    n = 0: the identity (A's gradient is zero, as torch's)."""
    t = _args._tensor(A, "linalg.matrix_power")
    if t.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if t.shape[-1] != t.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {t.shape[-2]} by {t.shape[-1]} matrices")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    n = int(n)
    if n == 0:
        return _pointwise.where(like(t, np.ones(tuple(t.shape), bool)), _eye_like(t), t)
    z = linalg_inv(t) if n < 0 else t
    n = builtins.abs(n)
    if n == 1:
        return _conversion.clone(z)
    result = None
    while n:
        if n & 1:
            result = z if result is None else _products.matmul(result, z)
        n >>= 1
        if n:
            z = _products.matmul(z, z)
    return result


@public(out=True)
def matrix_power(input, n):
    return linalg_matrix_power(input, n)


def _chain_order(shapes):
    """The optimal parenthesization of a matrix chain (the classic dynamic program, as
    torch's multi_dot): split[i][j] = where the product of matrices i..j splits."""
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    """The product of a chain of matrices in the cheapest order; the first and last may be
    vectors (a row, a column: the result drops that dimension)."""
    ts = [_args._tensor(x, "linalg.multi_dot") for x in tensors]
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(ts):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, n - 1))
        if not ok:
            where = "first" if i == 0 else "last" if i == n - 1 else None
            if where:
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                                   f"{t.ndim}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype != ts[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_args._tname(ts[0].dtype)} and tensor {i} "
                               f"{_args._tname(t.dtype)}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = _shape.unsqueeze(ts[0], 0)
    if last_vec:
        ts[-1] = _shape.unsqueeze(ts[-1], 1)
    for i in range(n - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    split = _chain_order([tuple(t.shape) for t in ts])
    # the products in the chain's order, innermost first (an explicit stack: no recursion)
    done = {}
    todo = [(0, n - 1)]
    while todo:
        i, j = todo[-1]
        if i == j:
            done[i, j] = ts[i]
            todo.pop()
            continue
        k = split[i][j]
        parts = [(i, k), (k + 1, j)]
        missing = [p for p in parts if p not in done]
        if missing:
            todo.extend(missing)
            continue
        done[i, j] = _products.matmul(done[i, k], done[k + 1, j])
        todo.pop()
    out = done[0, n - 1]
    if first_vec:
        out = _shape.squeeze(out, 0)
    if last_vec:
        out = _shape.squeeze(out, -1)
    return out


def vecdot(x, y, *, dim=-1):
    """sum(x * y) along dim (inputs broadcast; the same dtype, as torch requires)."""
    a, b = _args._tensor(x, "linalg.vecdot", "x"), _args._tensor(y, "linalg.vecdot", "y", 2)
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        bad = a if a.dtype.kind != "f" else b
        raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_args._tname(bad.dtype)}")
    _same_dtype("linalg.vecdot: ", a, "x", b, "y")
    return _reductions.sum(_pointwise.mul(a, b), dim)


def vander(x, *, N=None):
    """(..., n, N): the powers x^0 .. x^(N-1) of each element (N defaults to n), as a
    cumulative product (no 0 * inf at x = 0)."""
    t = _args._tensor(x, "linalg.vander")
    if t.ndim == 0:
        t = _shape.reshape(t, (1,))
    if t.dtype in (np.bool_, np.float16):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_args._tname(t.dtype)}")
    n = t.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    cols = _shape.expand(_shape.unsqueeze(t, -1), tuple(t.shape) + (n - 1,))
    ones = like(t, np.ones(tuple(t.shape) + (1,), t.dtype))
    return _shape.cat([ones, _reductions.cumprod(cols, -1)], -1)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.diagonal with the last two dims as the default."""
    return _shape.diagonal(A, offset, dim1, dim2)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (|eigenvalues| with hermitian=True) above
    max(atol, rtol * largest); rtol defaults to eps * max(m, n) unless a positive atol is
    given (then 0). `tol` (torch's older overload) is atol with rtol 0."""
    t = _args._tensor(A, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    t = check_matrices("linalg.matrix_rank", t, square=bool(hermitian), half=_LOW)
    with no_grad():
        s = _pointwise.abs(eigvalsh(t)) if hermitian else svdvals(t)
    s = s._data
    m, n = t.shape[-2], t.shape[-1]
    # atol / rtol: numbers or tensors broadcasting with the batch shape
    atol_a = None if atol is None else np.asarray(getattr(atol, "_data", atol), t.dtype)
    if rtol is None:
        rtol_a = np.asarray(np.finfo(t.dtype).eps * max(m, n), t.dtype)
        if atol_a is not None:
            rtol_a = np.where(atol_a > 0, 0.0, rtol_a).astype(t.dtype)
    else:
        rtol_a = np.asarray(getattr(rtol, "_data", rtol), t.dtype)
    smax = s.max(axis=-1) if s.shape[-1] else np.zeros(s.shape[:-1], s.dtype)
    thr = rtol_a * smax if atol_a is None else np.maximum(atol_a, rtol_a * smax)
    return like(t, np.sum(s > thr[..., None], axis=-1).astype(np.int64))


def cond(A, p=None):
    """The condition number in the p-norm: smax / smin for p None/2 (smin / smax for -2);
    else norm(A, p) * norm(inv(A), p) (square A)."""
    t = _args._tensor(A, "linalg.cond")
    if t.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    two = p is None or (not isinstance(p, str) and builtins.abs(float(p)) == 2)
    if not two and p not in ("fro", "nuc") and (
            isinstance(p, str) or float(p) not in (1, -1, _INF, -_INF)):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    t = check_matrices("linalg.cond", t, square=not two,
                       half='"linalg_svd_cpu"' if two else _LOW)
    if t.shape[-1] == 0 or t.shape[-2] == 0:  # empty matrices: 0, as torch
        return like(t, np.zeros(tuple(t.shape[:-2]), t.dtype))
    if two:
        s = svdvals(t)
        big, small = _shape.narrow(s, -1, 0, 1), _shape.narrow(s, -1, s.shape[-1] - 1, 1)
        out = big / small if p is None or float(p) > 0 else small / big
        return _shape.squeeze(out, -1)
    # norm(A) * norm(inv(A)); a singular matrix's condition number is inf (torch's)
    info = _lu_infos(t)
    if (info > 0).any():
        reg, bad = _regular(t, info)
        out = matrix_norm(reg, p) * matrix_norm(linalg_inv(reg), p)
        return _pointwise.where(bad[..., 0, 0], _INF, out)
    return matrix_norm(t, p) * matrix_norm(linalg_inv(t), p)


def tensorinv(A, ind=2):
    """The inverse of A read as a matrix of prod(shape[:ind]) rows: shape[ind:] + shape[:ind]."""
    t = _args._tensor(A, "linalg.tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(t.shape[:ind]), tuple(t.shape[ind:])
    p, q = int(np.prod(rows)), int(np.prod(cols))
    if p != q:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {q} != {p}")
    return _shape.reshape(linalg_inv(_shape.reshape(t, (p, q))), cols + rows)


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B: A's `dims` moved last, A read as a matrix of
    B.numel() rows."""
    a, b = _args._tensor(A, "linalg.tensorsolve"), _args._tensor(B, "linalg.tensorsolve", "B", 2)
    if dims is not None:
        ds = [_args._dim(d, a.ndim) for d in dims]
        a = _shape.movedim(a, ds, list(range(a.ndim - len(ds), a.ndim)))
    out_shape = tuple(a.shape[b.ndim:])
    rows, cols = int(np.prod(b.shape)), int(np.prod(out_shape))
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    x = apply(LS.solve, _shape.reshape(a, (rows, cols)), _shape.reshape(b, (rows, 1)))
    return _shape.reshape(x, out_shape)


@public
def matrix_exp(input):
    """exp(A) = sum A^k / k! of every matrix of the batch (scipy.linalg.expm)."""
    t = _args._tensor(input, "matrix_exp")
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions." if t.ndim < 2 else
                           f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {t.shape[-2]} by {t.shape[-1]} matrices")
    if t.dtype.kind != "f":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {_args._tname(t.dtype)}")
    return apply(LUF.matrix_exp, t)


@public
def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with rtol = rcond."""
    return pinv(input, atol=0.0, rtol=rcond)


# ==== solvers: triangular, Cholesky, LU, least squares, the _ex forms ========================
linalg_lu_factor_result = structseq("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex_result = structseq("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu_result = structseq("linalg_lu", ["P", "L", "U"])
lu_unpack_result = structseq("lu_unpack", ["P", "L", "U"])
linalg_cholesky_ex_result = structseq("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex_result = structseq("linalg_inv_ex", ["inverse", "info"])
linalg_solve_ex_result = structseq("linalg_solve_ex", ["result", "info"])
linalg_lstsq_result = structseq("linalg_lstsq",
                                ["solution", "residuals", "rank", "singular_values"])
triangular_solve_result = structseq("triangular_solve", ["solution", "cloned_coefficient"])
qr_result = structseq("qr", ["Q", "R"])


def _triangular(a, b, upper, unitriangular):
    """X with A X = B for the triangle of A that `upper` names (its diagonal taken as 1
    if unitriangular); the gradient of A is masked to that triangle, as torch's."""
    _batch_broadcast(tuple(b.shape[:-2]), tuple(a.shape[:-2]))
    return apply(LS.solve_triangular, a, b, upper=bool(upper), unitriangular=bool(unitriangular))


def _broadcast_solve(a, b):
    """X with A X = B, batch dims broadcast (B a matrix)."""
    _batch_broadcast(tuple(b.shape[:-2]), tuple(a.shape[:-2]))
    return apply(LS.solve, a, b)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (left) or X A = B, A upper or lower triangular (the other triangle
    is not read; unitriangular: neither is the diagonal)."""
    a = check_matrices("linalg.solve_triangular", A, half='"triangular_solve_cpu"')
    b = _args._tensor(B, "linalg.solve_triangular", "B", 2)
    if b.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if b.dtype != a.dtype:  # torch computes in A's dtype, whichever is wider
        b = b.to(a.dtype)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    if left:
        return _triangular(a, b, upper, unitriangular)
    mT = lambda m: _shape.transpose(m, -2, -1)  # noqa: E731  X A = B <=> A^T X^T = B^T
    return mT(_triangular(mT(a), mT(b), not upper, unitriangular))


@public
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """(X, A.clone()) with A X = b (A^T X = b with transpose=True): the older interface."""
    _deprecated("triangular_solve")
    b = _args._tensor(input, "triangular_solve")
    a = _args._tensor(A, "triangular_solve", "A", 2)
    for t, nm in ((b, "self"), (a, "A")):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead"
                               if nm == "self" else
                               f"torch.triangular_solve: Expected A to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    check_matrices("triangular_solve", a, half='"triangular_solve_cpu"')
    _same_dtype("triangular_solve: ", b, "b", a, "A", ".")
    if b.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{a.shape[-1]} by {a.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    if transpose:  # A^T X = b: A^T's triangle is the other one
        x = _triangular(_shape.transpose(a, -2, -1), b, not upper, unitriangular)
    else:
        x = _triangular(a, b, upper, unitriangular)
    # the coefficient comes back broadcast to the solution's batch shape, as torch's
    batch = tuple(x.shape[:-2]) + tuple(a.shape[-2:])
    return triangular_solve_result(x, _conversion.clone(_shape.expand(a, batch)))


def _llt(L, upper):
    """L L^T (U^T U when upper): the matrix whose Cholesky factor L is."""
    mT = _shape.transpose(L, -2, -1)
    return _products.matmul(mT, L) if upper else _products.matmul(L, mT)


@public(out=True)
def cholesky_solve(input, input2, upper=False):
    """X with (L L^T) X = B. Differentiated as a function of the whole L (torch's
    cholesky_solve_backward does not mask to the triangle)."""
    b = _args._tensor(input, "cholesky_solve")
    L = _args._tensor(input2, "cholesky_solve", "input2", 2)
    if b.ndim < 2 or L.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead" if b.ndim < 2 else
                           f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           "instead")
    _same_dtype("", b, "b", L, "A", ".")
    L = check_matrices("cholesky_solve", L, half='"cholesky_solve_cpu"')
    if b.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-1]} by {L.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    return _broadcast_solve(_llt(L, bool(upper)), b)


@public(out=True)
def cholesky_inverse(input, upper=False):
    """(L L^T)^-1 from the Cholesky factor L (U^T U with upper=True)."""
    L = _args._tensor(input, "cholesky_inverse")
    if L.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    L = check_matrices("cholesky_inverse", L, half='"cholesky_inverse_out_cpu"')
    return linalg_inv(_llt(L, bool(upper)))


def _lu_factor(name, A):
    t = check_matrices(name, A, square=False, half='"lu_cpu"')
    lu, saved = apply_saved(LUF.lu_factor, t)
    return t, lu, like(t, saved["pivots"]), like(t, saved["info"])


def _pivot_arg(name, pivot):
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def lu_factor(A, *, pivot=True):
    """(LU, pivots): the compact LU of A = P L U (LAPACK's getrf; pivots 1-based int32);
    LinAlgError for a singular A (lu_factor_ex reports it in `info` instead)."""
    _pivot_arg("linalg.lu_factor", pivot)
    t, lu, piv, info = _lu_factor("linalg.lu_factor", A)
    bad = np.flatnonzero(info._data > 0)
    if bad.size:  # torch's words (a RuntimeError, not LinAlgError)
        where = f"(Batch element {bad[0]}): " if t.ndim > 2 else ""
        k = int(info._data.reshape(-1)[bad[0]])
        raise RuntimeError(f"torch.linalg.lu_factor: {where}U[{k},{k}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to "
                           "perform the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    return linalg_lu_factor_result(lu, piv)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): info > 0 marks a singular matrix (U's first zero diagonal)."""
    _pivot_arg("linalg.lu_factor_ex", pivot)
    t, lu, piv, info = _lu_factor("linalg.lu_factor_ex", A)
    if check_errors and (info._data > 0).any():
        raise LS.singular_error("linalg.lu_factor_ex", t._data)
    return linalg_lu_factor_ex_result(lu, piv, info)


@public
def lu(A, pivot=True, get_infos=False):
    """torch.lu / Tensor.lu (deprecated in torch for linalg.lu_factor): (LU, pivots) or,
    with get_infos, (LU, pivots, infos); a plain tuple, as torch's."""
    _deprecated("lu")
    lu_, piv, info = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return (lu_, piv, info) if get_infos else (lu_, piv)


def _unpack(lu_data, pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) of the compact LU (..., m, n) with its pivots; empty tensors for what was
    not asked."""
    m, n = lu_data.shape[-2], lu_data.shape[-1]
    k = min(m, n)
    empty = like(lu_data, np.zeros((0,), lu_data.dtype))
    L = U = P = empty
    if unpack_data:
        eye = like(lu_data, np.eye(m, k, dtype=lu_data.dtype))
        L = _shape.narrow(_shape.tril(lu_data, -1), -1, 0, k) + eye
        U = _shape.narrow(_shape.triu(lu_data), -2, 0, k)
    if unpack_pivots:
        piv = np.asarray(pivots._data)
        lead = tuple(lu_data.shape[:-2])
        P = like(lu_data, LUF.permutation(np.broadcast_to(piv, lead + (piv.shape[-1],)), m,
                                         lu_data.dtype))
    return P, L, U


@public(method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's (LU, pivots)."""
    a = _args._tensor(LU_data, "lu_unpack", "LU_data")
    p = _args._tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    if a.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(a.shape)} instead")
    if p.dtype != np.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    return lu_unpack_result(*_unpack(a, p, unpack_data, unpack_pivots))


def linalg_lu(A, *, pivot=True):
    """(P, L, U) with A = P L U: L (m, k) unit lower, U (k, n) upper."""
    _pivot_arg("linalg.lu", pivot)
    _, lu_, piv, _ = _lu_factor("linalg.lu", A)
    return linalg_lu_result(*_unpack(lu_, piv))


def _lu_apply(LU_, pivots, B, adjoint):
    """A^-1 B (adjoint: A^-T B) with A = P L U given as its compact LU."""
    P, L, U = _unpack(LU_, pivots)
    mT = lambda m: _shape.transpose(m, -2, -1)  # noqa: E731
    if not adjoint:  # U^-1 L^-1 P^T B
        return _triangular(U, _triangular(L, _products.matmul(mT(P), B), False, True), True, False)
    return _products.matmul(P, _triangular(mT(L), _triangular(mT(U), B, False, False), True, True))


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (A^T X = B with adjoint; X A = B with left=False) from A's compact LU
    and pivots."""
    a = check_matrices("linalg.lu_solve", LU, half=_LOW)
    p = _args._tensor(pivots, "linalg.lu_solve", "pivots", 2)
    b = _args._tensor(B, "linalg.lu_solve", "B", 3)
    if b.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if p.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: Expected pivots to be of type int32. Got "
                           f"{_args._tname(p.dtype)}")
    _same_dtype("linalg.lu_solve: ", a, "LU", b, "B")
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    if tuple(p.shape[:-1]) != tuple(a.shape[:-2]) or p.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be "
                           f"the same, but got pivots with shape {list(p.shape)} instead")
    if left:
        return _lu_apply(a, p, b, bool(adjoint))
    # X A = B  <=>  A^T X^T = B^T (X A^T = B  <=>  A X^T = B^T)
    mT = lambda m: _shape.transpose(m, -2, -1)  # noqa: E731
    return mT(_lu_apply(a, p, mT(b), not adjoint))


@public(out=True)
def lu_solve(input, LU_data, LU_pivots):
    """torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU, pivots, b)."""
    _deprecated("lu_solve")
    return linalg_lu_solve(LU_data, LU_pivots, input)


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||: the solution is
    pinv(A) B (the minimum-norm one, as every LAPACK driver for a full-rank A), so its
    gradient is torch's (linalg_lstsq_backward differentiates pinv(A) B). residuals (the
    squared column norms of A X - B) only for m > n and driver != 'gelsy'; rank for every
    driver but 'gels'; singular values for 'gelsd'/'gelss' (torch's rules)."""
    a = check_matrices("torch.linalg.lstsq", A, square=False, half=_LOW)
    b = _args._tensor(B, "linalg.lstsq", "B", 2)
    drivers = ("gels", "gelsy", "gelsd", "gelss")
    if driver is None:
        driver = "gelsy"
    if driver not in drivers:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_args._tname(a.dtype)} and "
                           f"other's dtype {_args._tname(b.dtype)}")
    vector = b.ndim == a.ndim - 1
    b2 = _shape.unsqueeze(b, -1) if vector else b
    if b2.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    m, n = a.shape[-2], a.shape[-1]
    if b2.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2). "
                           f"Got {m} and {b2.shape[-2]}" if not vector else
                           "torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
    _batch_broadcast(tuple(b2.shape[:-2]), tuple(a.shape[:-2]))
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    x = _products.matmul(pinv(a, rtol=rcond), b2)
    with no_grad():
        s = svdvals(a.detach())._data
    smax = s.max(axis=-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    rank_arr = np.sum(s > rcond * smax, axis=-1).astype(np.int64)
    empty = like(a, np.zeros((0,), a.dtype))
    # an empty residuals tensor still belongs to the graph, as torch's (zero gradient)
    residuals = _shape.narrow(_shape.reshape(x, (-1,)), 0, 0, 0)
    if m > n and driver != "gelsy" and (rank_arr == n).all():
        r = _products.matmul(a, x) - b2
        residuals = _reductions.sum(r * r, -2)  # (..., k): a vector B keeps k = 1, as torch
    rank = like(a, np.zeros((0,), np.int64)) if driver == "gels" else like(a, rank_arr)
    sv = like(a, s) if driver in ("gelsd", "gelss") else empty
    return linalg_lstsq_result(_shape.squeeze(x, -1) if vector else x, residuals, rank, sv)


def _info(t, bad):
    """The int32 info tensor of a batch: 0 where the matrix was fine."""
    return like(t, np.asarray(bad, np.int32).reshape(tuple(t.shape[:-2])))


def _lu_infos(t):
    if not t._data.size:
        return np.zeros(tuple(t.shape[:-2]), np.int32)
    return LUF._lu_forward(t._data)[1]["info"]


def _regular(t, info):
    """t with its singular matrices (info > 0) replaced by the identity (a constant), and
    the mask of those matrices as (..., 1, 1): the _ex forms give NaN there."""
    bad = np.asarray(info > 0)[..., None, None]
    eye = np.broadcast_to(np.eye(t.shape[-1], dtype=t.dtype), tuple(t.shape))
    mask = like(t, np.broadcast_to(bad, tuple(t.shape)))
    return _pointwise.where(mask, like(t, eye.copy()), t), bad


def inv_ex(A, *, check_errors=False):
    """(inverse, info): info > 0 marks a singular matrix (U's first zero diagonal element
    of its LU), whose inverse is then NaN."""
    t = check_matrices("linalg.inv_ex", A, half=_LOW)
    info = _lu_infos(t)
    if (info > 0).any():
        if check_errors:
            raise LS.singular_error("linalg.inv_ex", t._data)
        t, bad = _regular(t, info)
        inverse = _pointwise.where(bad, float("nan"), linalg_inv(t))
        return linalg_inv_ex_result(inverse, _info(t, info))
    return linalg_inv_ex_result(linalg_inv(t), _info(t, info))


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): linalg.solve, with info > 0 for a singular A (its result NaN)
    instead of an error."""
    t = check_matrices("linalg.solve_ex", A, square=False, half='"lu_cpu"')
    info = _lu_infos(t) if t.shape[-1] == t.shape[-2] else np.zeros(tuple(t.shape[:-2]), np.int32)
    if (info > 0).any():
        if check_errors:
            raise LS.singular_error("linalg.solve_ex", t._data, solver=True)
        t, bad = _regular(t, info)
        x = solve(t, B, left=left)
        if x.ndim == t.ndim - 1:  # a vector B
            bad = bad[..., 0]
        return linalg_solve_ex_result(_pointwise.where(bad, float("nan"), x), _info(t, info))
    x = solve(t, B, left=left)
    return linalg_solve_ex_result(x, _info(t, info))


# ==== factorizations: the _ex forms and torch's older names ===================================
def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info = k > 0 when the leading minor of order k is not positive-definite
    (L is then NaN)."""
    t = check_matrices("linalg.cholesky_ex", A, half='"cholesky_cpu"')
    bad = np.zeros(tuple(t.shape[:-2]), np.int32)
    for i in np.ndindex(*bad.shape):  # potrf's info: the first leading minor that fails
        m = t._data[i]
        if np.all(np.isfinite(m)) and _is_pd(m):
            continue
        bad[i] = next((k for k in range(1, m.shape[-1] + 1) if not _is_pd(m[:k, :k])),
                      m.shape[-1])
    if (bad > 0).any():
        if check_errors:
            cholesky(t)  # raises torch's LinAlgError
        t, mask = _regular(t, bad)
        L = _pointwise.where(mask, float("nan"), cholesky(t, upper=upper))
    else:
        L = cholesky(t, upper=upper)
    return linalg_cholesky_ex_result(L, _info(t, bad))


def _is_pd(m):
    try:
        np.linalg.cholesky(m)
        return True
    except np.linalg.LinAlgError:
        return False


_DEPRECATED = {
    "triangular_solve": "torch.triangular_solve is deprecated in favor of "
    "torch.linalg.solve_triangularand will be removed in a future PyTorch release.\n"
    "torch.linalg.solve_triangular has its arguments reversed and does not return a copy of "
    "one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced "
    "with\nX = torch.linalg.solve_triangular(A, B).",
    "lu": "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
    "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\nLU, pivots "
    "= torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
    "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
    "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
    "torch.linalg.lu_factor_ex(A, compute_pivots)",
    "lu_solve": "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
    "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
    "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
    "torch.linalg.lu_solve(LU, pivots, B)",
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
    "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
    "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
    "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent "
    "results for all valid (symmetric positive definite) inputs.",
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
    "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string parameter "
    "'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, "
    "'reduced' if some else 'complete')",
}
_deprecation_warned = set()


def _deprecated(name):
    """torch's deprecation warning of an older linalg function, once per process (as its
    TORCH_WARN_ONCE)."""
    if name not in _deprecation_warned:
        _deprecation_warned.add(name)
        warnings.warn(_DEPRECATED[name], UserWarning, stacklevel=3)


@public(name="cholesky", out=True)
def torch_cholesky(input, upper=False):
    """torch.cholesky / Tensor.cholesky (deprecated in torch for linalg.cholesky)."""
    _deprecated("cholesky")
    return cholesky(input, upper=upper)


@public
def qr(input, some=True):
    """torch.qr / Tensor.qr: (Q, R), reduced (some=True) or complete."""
    _deprecated("qr")
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return qr_result(Q, R)


# ==== the Householder representation: geqrf, householder_product (orgqr), ormqr =============
geqrf_result = structseq("geqrf", ["a", "tau"])


@public
def geqrf(input):
    """(a, tau): LAPACK geqrf's QR in Householder form (R on and above a's diagonal, the
    reflectors' vectors below it). Not differentiable, as torch's."""
    t = _args._tensor(input, "geqrf")
    if t.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    t = check_matrices("geqrf", t, square=False, half='"geqrf_cpu"')
    m, n = t.shape[-2], t.shape[-1]
    lead = tuple(t.shape[:-2])
    a = np.array(t._data, copy=True)
    tau = np.zeros(lead + (min(m, n),), t.dtype)
    if a.size and min(m, n):
        from scipy.linalg import get_lapack_funcs
        fn, = get_lapack_funcs(("geqrf",), (a,))
        for i in np.ndindex(*lead):
            qr_, tau_, _, _ = fn(a[i])
            a[i], tau[i] = qr_, tau_[:min(m, n)]
    return geqrf_result(like(t, a), like(t, tau))


def _reflect(V, tau, C, left, order):
    """C multiplied by the reflectors H_i = I - tau_i v_i v_i^T in `order` (left: H_i C,
    else C H_i); differentiable ops, so every order of derivative follows."""
    for i in order:
        v = _shape.select(V, -1, i)
        s = _shape.unsqueeze(_shape.unsqueeze(_shape.select(tau, -1, i), -1), -1)
        if left:  # C - tau v (v^T C)
            C = C - s * _products.matmul(_shape.unsqueeze(v, -1),
                                         _products.matmul(_shape.unsqueeze(v, -2), C))
        else:  # C - tau (C v) v^T
            C = C - s * _products.matmul(_products.matmul(C, _shape.unsqueeze(v, -1)),
                                         _shape.unsqueeze(v, -2))
    return C


def _householder_vectors(a, k):
    """The reflectors' vectors (..., m, k): a's columns below the diagonal, 1 on it."""
    m = a.shape[-2]
    return (_shape.narrow(_shape.tril(a, -1), -1, 0, k)
            + like(a, np.eye(m, k, dtype=a.dtype)))


def householder_product(A, tau):
    """The first n columns of H_1 ... H_k (orgqr): Q of a QR given in geqrf's form."""
    a = _args._tensor(A, "linalg.householder_product")
    t = _args._tensor(tau, "linalg.householder_product", "tau", 2)
    name = "torch.linalg.householder_product"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if a.ndim - t.ndim != 1 or tuple(a.shape[:-2]) != tuple(t.shape[:-1]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           "input.shape[:-2]")
    if a.dtype != t.dtype:
        raise RuntimeError(f"{name}: tau dtype {_args._tname(t.dtype)} does not match input "
                           f"dtype {_args._tname(a.dtype)}")
    a = check_matrices(name, a, square=False, half='"orgqr_cpu"')
    m, n, k = a.shape[-2], a.shape[-1], t.shape[-1]
    eye = like(a, np.broadcast_to(np.eye(m, n, dtype=a.dtype), tuple(a.shape)).copy())
    if k == 0:  # no reflector: the identity, still a function of A (zero gradient), as torch's
        return _pointwise.where(like(a, np.ones(tuple(a.shape), bool)), eye, a)
    return _reflect(_householder_vectors(a, k), t, eye, True, range(k - 1, -1, -1))


@public(out=True)
def ormqr(input, input2, input3, left=True, transpose=False):
    """Q C, Q^T C, C Q or C Q^T for Q = H_1 ... H_k (m x m) given in geqrf's form."""
    a = _args._tensor(input, "ormqr")
    t = _args._tensor(input2, "ormqr", "input2", 2)
    c = _args._tensor(input3, "ormqr", "input3", 3)
    if a.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    k = t.shape[-1] if t.ndim else 0
    if k != min(c.shape[side], a.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape["
                           f"{side}], input.shape[-1])")
    if c.shape[side] != a.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if a.dtype != t.dtype or a.dtype != c.dtype:
        raise RuntimeError(f"torch.ormqr: Expected input, input2 and input3 to have the same "
                           f"dtype, but got {_args._tname(a.dtype)}, {_args._tname(t.dtype)} "
                           f"and {_args._tname(c.dtype)}")
    a = check_matrices("torch.ormqr", a, square=False, half='"ormqr_cpu"')
    # Q C = H_1 (... (H_k C)); Q^T C = H_k ... H_1 C; C Q = (C H_1) ... H_k; C Q^T: H_k first
    forward = left == bool(transpose)
    order = range(k) if forward else range(k - 1, -1, -1)
    return _reflect(_householder_vectors(a, k), t, c, left, order)


# ==== LDL: ldl_factor(_ex), ldl_solve (LAPACK sytrf / sytrs; not differentiable, as torch's) ==
linalg_ldl_factor_result = structseq("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex_result = structseq("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _ldl(name, A, hermitian):
    """(LD, pivots, info) of A's lower triangle: L unit lower below LD's diagonal, D's 1x1
    and 2x2 blocks on and just below it; pivots LAPACK's (1-based; negative for a 2x2
    block). Constants: torch does not differentiate the LDL factorization."""
    t = check_matrices(name, A, half='"ldl_factor_kernel_cpu"')
    n = t.shape[-1]
    lead = tuple(t.shape[:-2])
    a = np.array(t._data, copy=True)
    piv = np.zeros(lead + (n,), np.int32)
    info = np.zeros(lead, np.int32)
    if a.size:
        from scipy.linalg import get_lapack_funcs
        sytrf, = get_lapack_funcs(("sytrf",), (a,))
        for i in np.ndindex(*lead):
            ldu, p, inf = sytrf(a[i], lower=1)
            a[i], piv[i], info[i] = np.tril(ldu), p, max(int(inf), 0)
    return like(t, a), like(t, piv), like(t, info)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info) with A = P L D L^T P^T (info > 0: D is singular)."""
    LD, piv, info = _ldl("torch.linalg.ldl_factor_ex", A, hermitian)
    if check_errors and (info._data > 0).any():
        raise LS.LinAlgError("torch.linalg.ldl_factor_ex: The factorization could not be "
                             "completed because the input is singular.")
    return linalg_ldl_factor_ex_result(LD, piv, info)


def ldl_factor(A, *, hermitian=False):
    """(LD, pivots): ldl_factor_ex, raising for a singular D."""
    LD, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return linalg_ldl_factor_result(LD, piv)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from ldl_factor's (LD, pivots); batch dims broadcast."""
    ld = check_matrices("torch.linalg.ldl_solve", LD, half=_LOW)
    p = _args._tensor(pivots, "linalg.ldl_solve", "pivots", 2)
    b = _args._tensor(B, "linalg.ldl_solve", "B", 3)
    if b.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, "
                           f"but it has {b.ndim} dimensions instead")
    if p.dtype != np.int32:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{_args._tname(p.dtype)}")
    if ld.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.ldl_solve: LD dtype {_args._tname(ld.dtype)} does not "
                           f"match b dtype {_args._tname(b.dtype)}")
    n = ld.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the "
                           f"equation AX = B ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    lead = _batch_broadcast(tuple(b.shape[:-2]), tuple(ld.shape[:-2]))
    lda = np.broadcast_to(ld._data, lead + (n, n))
    pa = np.broadcast_to(p._data, lead + (n,))
    ba = np.broadcast_to(b._data, lead + tuple(b.shape[-2:]))
    out = np.zeros(ba.shape, ld.dtype)
    if out.size:
        from scipy.linalg import get_lapack_funcs
        sytrs, = get_lapack_funcs(("sytrs",), (lda,))
        for i in np.ndindex(*lead):
            out[i] = sytrs(lda[i], pa[i], ba[i], lower=1)[0]
    return like(ld, out)


# ==== randomized low-rank SVD and PCA (Halko, Martinsson & Tropp 2009) ========================
def _approximate_basis(A, q, niter, M):
    """Q (..., m, q) with orthonormal columns whose span approximates A's range (of A - M):
    a Gaussian sketch A R refined by `niter` subspace iterations, each re-orthonormalized
    by QR (the paper's Algorithm 4.4). Differentiable: matmul and QR."""
    mT = lambda t: _shape.transpose(t, -2, -1)  # noqa: E731
    R = _sampling.randn(A.shape[-1], q, dtype=A.dtype)

    def times(X, transpose=False):
        Y = _products.matmul(mT(A) if transpose else A, X)
        return Y if M is None else Y - _products.matmul(mT(M) if transpose else M, X)
    Q = linalg_qr(times(R)).Q
    for _ in range(niter):
        Q = linalg_qr(times(Q, True)).Q
        Q = linalg_qr(times(Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    """(U, S, V) of the SVD of Q^T (A - M) lifted by Q (the paper's Algorithm 5.1), on the
    tall orientation of A."""
    mT = lambda t: _shape.transpose(t, -2, -1)  # noqa: E731
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = _shape.expand(M, tuple(A.shape))
    wide = m < n
    if wide:
        A = mT(A)
        M = None if M is None else mT(M)
    Q = _approximate_basis(A, q, niter, M)
    B = _products.matmul(mT(Q), A)
    if M is not None:
        B = B - _products.matmul(mT(Q), M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    U, V = _products.matmul(Q, U), mT(Vh)
    return (V, S, U) if wide else (U, S, V)


@public(method=False)
def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^T of rank q, by a randomized range finder: exact
    (up to the singular vectors' signs) when rank(A - M) <= q; else its values depend on
    the random sketch, as torch's do on torch's generator."""
    t = _args._tensor(A, "svd_lowrank", "A")
    m, n = t.shape[-2:]  # a ValueError for a 1-D A, as torch's unpacking gives
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m = None if M is None else _args._tensor(M, "svd_lowrank", "M", 4)
    return _svd_lowrank(t, q, niter, m)


@public(method=False)
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): svd_lowrank of A with its column means subtracted (center=True);
    q defaults to min(6, m, n)."""
    t = _args._tensor(A, "pca_lowrank", "A")
    m, n = t.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        t = t - _reductions.mean(t, -2, keepdim=True)
    return _svd_lowrank(t, q, niter, None)

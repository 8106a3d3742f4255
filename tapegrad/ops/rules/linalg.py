"""Table entries for norms, singular values and diagonals.

vector_norm(x, ord, axis, keepdims): one entry for every order; its rule is PyTorch's
  (linalg_vector_norm_backward), including the 0 subgradient where the norm is 0
  (a plain sqrt(sum(x**2)) would give 0 * inf = nan there).
svdvals(x): the singular values of a (batch of) matrices; rule U diag(g) V^T. Only
  first order (and forward mode): its second derivative needs the derivative of the
  singular vectors, which is not in the table (refused by name under create_graph).
diagonal(x, offset, dim1, dim2) and diagonal_backward(g, shape, offset, dim1, dim2):
  each is the other's adjoint (both linear), so every order is covered.
"""
import numpy as np

from ._within_rule import within_rule
from .pointwise import _sign
from .reductions import _0d, _axes, _unreduce
from ..registry import defop


def _raw(a):
    """Masks and counts are constants: computed on arrays in both modes."""
    return a.detach().numpy() if hasattr(a, "detach") else a


# ---- vector norms ---------------------------------------------------------------------
@_0d
def _vector_norm_forward(x, axis=None, ord=2.0, keepdims=False):
    a = np.abs(x)
    if ord == np.inf:
        return np.amax(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.amin(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
    if ord == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
    return np.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _norm_partial(xp, g, ans, x, axis, ord, keepdims):
    """g times d norm / d x, broadcast to x (torch's cases, one per order)."""
    if x.ndim == 0:
        axis = None
    g = _unreduce(xp, g, x, axis, keepdims)
    n = _unreduce(xp, ans, x, axis, keepdims)
    xr, nr = _raw(x), _raw(n)
    sgn = _sign(xr)  # a constant: sign'(x) = 0
    if ord == 0:
        return xp.zeros_like(x) * g
    if ord == 1:
        return sgn * g
    if ord in (np.inf, -np.inf):
        ax = np.abs(xr)
        hit = (ax == nr) | np.isnan(ax)
        count = np.sum(hit, axis=_axes(x.ndim, axis), keepdims=True).astype(xr.dtype)
        return (sgn * hit / count) * g
    zero = nr == 0
    safe_n = xp.where(zero, 1.0, n)
    if ord == 2:
        return x * xp.where(zero, 0.0, g / safe_n)
    if ord < 1:
        # |x|**(ord-1) is infinite at x = 0: torch masks it to 0 there
        xz = xr == 0
        ax = xp.where(xz, 1.0, xp.abs(x))
        return xp.where(xz, 0.0, sgn * ax ** (ord - 1.0)) * g * safe_n ** (1.0 - ord)
    return sgn * xp.abs(x) ** (ord - 1.0) * xp.where(zero, 0.0, g / safe_n ** (ord - 1.0))


def _norm_vjp(xp, g, ans, x, axis=None, ord=2.0, keepdims=False):
    return _norm_partial(xp, g, ans, x, axis, ord, keepdims)


def _norm_jvp(xp, t, ans, x, axis=None, ord=2.0, keepdims=False):
    d = _norm_partial(xp, xp.ones_like(ans), ans, x, axis, ord, keepdims)
    return xp.sum(t[0] * d, axis=None if x.ndim == 0 else _axes(x.ndim, axis),
                  keepdims=keepdims)


vector_norm = defop(
    "vector_norm", _vector_norm_forward, vjp=[_norm_vjp], jvp=_norm_jvp, reads=["ans x"],
    text="dx = g*x/ans (ord 2; g*sign(x)*|x|**(p-1)/ans**(p-1) for ord p)",
    hint=("the p-norm's derivative x/||x|| is undefined at x = 0: the rule gives 0 there "
          "(PyTorch's subgradient); for ord < 1 it is infinite near zero entries"),
    node="LinalgVectorNormBackward0")


# ---- singular values ------------------------------------------------------------------
def _svdvals_forward(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return s, {"u": u, "vh": vh}


def _first_order_only(xp):
    if xp is not np:
        raise NotImplementedError(
            "svdvals (matrix_norm ord='nuc'/2/-2): the second derivative of singular values "
            "is not supported (create_graph=True)")


def _svdvals_vjp(xp, g, ans, x, u, vh):
    _first_order_only(xp)
    return np.matmul(u * g[..., None, :], vh)


def _svdvals_jvp(xp, t, ans, x, u, vh):
    _first_order_only(xp)
    return np.einsum("...ik,...ij,...kj->...k", u, t[0], vh)


svdvals = defop("svdvals", _svdvals_forward, extra=True, vjp=[_svdvals_vjp],
                jvp=_svdvals_jvp, reads=["x"],
                text="dA = U @ diag(g) @ V^T",
                hint=("the singular values' derivative U V^T is finite; it is not unique "
                      "where two singular values are equal (repeated or zero ones)"),
                node="LinalgSvdBackward0")


# ---- diagonals ------------------------------------------------------------------------
def _diag_index(shape, offset, dim1, dim2):
    """Index arrays picking the diagonal of dims dim1, dim2 (the diagonal last)."""
    n1, n2 = shape[dim1], shape[dim2]
    if offset >= 0:
        n = max(min(n1, n2 - offset), 0)
        i, j = np.arange(n), np.arange(n) + offset
    else:
        n = max(min(n1 + offset, n2), 0)
        i, j = np.arange(n) - offset, np.arange(n)
    return i, j


def _diagonal_forward(x, offset=0, dim1=0, dim2=1):
    d = np.diagonal(x, offset, dim1, dim2)
    if x.flags.writeable:
        d.flags.writeable = True  # NumPy's diagonal is a read-only view; torch's writes
    return d


def _diagonal_backward_forward(g, shape, offset=0, dim1=0, dim2=1):
    """Zeros of `shape` with g (diagonal last) written onto the diagonal of dim1, dim2."""
    out = np.zeros(shape, dtype=g.dtype)
    i, j = _diag_index(shape, offset, dim1, dim2)
    np.moveaxis(out, (dim1, dim2), (-2, -1))[..., i, j] = g  # a view of `out`
    return out


diagonal = defop(
    "diagonal", _diagonal_forward, linear=True, promote=False,
    vjp=[lambda xp, g, ans, x, offset=0, dim1=0, dim2=1: within_rule(
        xp, diagonal_backward, g, shape=tuple(x.shape), offset=offset, dim1=dim1,
        dim2=dim2)],
    text="dx = zeros with g written on the diagonal",
    hint="linear: the rule only places g on a diagonal, so it is finite whenever g is")
diagonal_backward = defop(
    "diagonal_backward", _diagonal_backward_forward, linear=True, promote=False,
    vjp=[lambda xp, g, ans, x, shape, offset=0, dim1=0, dim2=1: within_rule(
        xp, diagonal, g, offset=offset, dim1=dim1, dim2=dim2)],
    text="dg = the diagonal of g",
    hint="linear: the rule only reads a diagonal of g, so it is finite whenever g is",
    node="DiagEmbedBackward0")

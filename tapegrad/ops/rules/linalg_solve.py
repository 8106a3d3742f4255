"""Table entries for the cross product, determinants, inverses and linear solves.

Shapes are (..., n, n) batches of square matrices (cross: vectors of length 3 along
`axis`, both inputs broadcast). The rules are the closed forms PyTorch uses, written
with `xp` so that create_graph=True differentiates them again:

cross(x, y):   dx = y x g ; dy = g x x   (the product is antisymmetric and bilinear)
det(A):        dA = g * det * A^-T       (for a singular A: the cofactor matrix, via SVD)
logabsdet(A):  dA = g * A^-T             (slogdet's second output; its sign is constant)
inv(A):        dA = -A^-T g A^-T
solve(A, B):   X = A^-1 B; dB = A^-T g ; dA = -dB X^T
solve_triangular(A, B): the same with A's triangle (scipy/LAPACK trtrs), dA masked to it

The singular-matrix errors carry torch's words (LAPACK's first zero pivot of the LU).
"""
import numpy as np

from ._within_rule import within_rule
from ..registry import defop


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a RuntimeError subclass."""


LinAlgError.__module__ = "tapegrad.linalg"


def _mT(xp, a):
    return xp.swapaxes(a, -1, -2)


def _mat(xp, g):
    """A batch of numbers as (..., 1, 1): it scales whole matrices."""
    return xp.expand_dims(xp.expand_dims(g, -1), -1)


# ---- cross ----------------------------------------------------------------------------
def _cross_forward(x, y, axis=-1):
    return np.cross(x, y, axis=axis)


def _cross_jvp(xp, t, ans, x, y, axis=-1):
    out = 0
    if t[0] is not None:
        out = out + within_rule(xp, cross, t[0], y, axis=axis)
    if t[1] is not None:
        out = out + within_rule(xp, cross, x, t[1], axis=axis)
    return out


cross = defop("cross", _cross_forward, inputs=("x", "y"), promote=False,
              vjp=[lambda xp, g, ans, x, y, axis=-1: within_rule(xp, cross, y, g, axis=axis),
                   lambda xp, g, ans, x, y, axis=-1: within_rule(xp, cross, g, x, axis=axis)],
              jvp=_cross_jvp, reads=["y", "x"],
              text="dx = cross(y, g) ; dy = cross(g, x)",
              hint="bilinear: the rule is finite wherever the inputs and g are")


# ---- errors of singular matrices ------------------------------------------------------
def _first_zero_pivot(a):
    """LAPACK getrf's `info` for one matrix: the 1-based index of the first exactly zero
    pivot of the LU with partial pivoting (0: none). Only on the error path."""
    a = np.array(a, dtype=np.float64)
    n = a.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return 0


def singular_error(name, a, solver=False):
    """torch's LinAlgError for the first singular matrix of the batch `a`."""
    batch = a.reshape((-1,) + a.shape[-2:])
    for b, m in enumerate(batch):
        info = _first_zero_pivot(m)
        if info:
            where = f"(Batch element {b}): " if a.ndim > 2 else ""
            if solver:
                return LinAlgError(f"torch.{name}: {where}The solver failed because the input "
                                   "matrix is singular.")
            return LinAlgError(f"{name}: {where}The diagonal element {info} is zero, the "
                               "inversion could not be completed because the input matrix "
                               "is singular.")
    return LinAlgError(f"{name}: the input matrix is singular.")


def _inv_kernel(a, name="linalg.inv"):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise singular_error(name, a) from None


# ---- det, logabsdet ---------------------------------------------------------------------
def _cofactor(a):
    """The cofactor matrix det(A) A^-T, also for singular A: with A = U S Vh it is
    det(U) det(Vh) U diag(prod of the other singular values) Vh."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], -1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return (u * (others * sign[..., None])[..., None, :]) @ vh


def _det_vjp(xp, g, ans, x):
    if xp is np:
        with np.errstate(all="ignore"):
            try:
                cof = ans[..., None, None] * np.swapaxes(np.linalg.inv(x), -1, -2)
            except np.linalg.LinAlgError:
                cof = None
        if cof is None or not np.isfinite(cof).all():
            cof = _cofactor(x)  # a singular matrix in the batch: its derivative is finite
        return g[..., None, None] * cof
    ai = within_rule(xp, inv, x)
    return _mat(xp, g * ans) * _mT(xp, ai)


def _det_jvp(xp, t, ans, x):
    ai = within_rule(xp, inv, x)
    return ans * xp.sum(_mT(xp, ai) * t[0], axis=(-2, -1))


det = defop("det", lambda x: np.linalg.det(x), vjp=[_det_vjp], jvp=_det_jvp,
            reads=["ans x"], text="dA = g * det(A) * inv(A)^T",
            hint=("det's derivative is the cofactor matrix, finite everywhere; its second "
                  "derivative uses inv(A), infinite for a singular A"))


def _slogdet_forward(x):
    sign, logabs = np.linalg.slogdet(x)
    return logabs, {"sign": sign}


def _logabsdet_vjp(xp, g, ans, x, sign=None):
    return _mat(xp, g) * _mT(xp, within_rule(xp, inv, x))


def _logabsdet_jvp(xp, t, ans, x, sign=None):
    return xp.sum(_mT(xp, within_rule(xp, inv, x)) * t[0], axis=(-2, -1))


logabsdet = defop("logabsdet", _slogdet_forward, extra=True, vjp=[_logabsdet_vjp],
                  jvp=_logabsdet_jvp, reads=["x"], text="dA = g * inv(A)^T",
                  hint="log|det A|'s derivative inv(A)^T is infinite for a singular A")


# slogdet's sign output: torch gives it a node whose derivative is 0 (the sign of a real
# determinant is piecewise constant), so a loss through it still backpropagates
slogdet_sign = defop("slogdet_sign", lambda x, sign: sign.astype(x.dtype, copy=False),
                     promote=False, vjp=[lambda xp, g, ans, x, sign: xp.zeros_like(x)],
                     jvp=lambda xp, t, ans, x, sign: xp.zeros_like(ans), reads=["x"],
                     text="dA = 0",
                     hint="the sign of det(A) is piecewise constant: its derivative is 0")


# ---- inverse, solve -------------------------------------------------------------------
def _inv_vjp(xp, g, ans, x):
    it = _mT(xp, ans)
    return -xp.matmul(xp.matmul(it, g), it)


inv = defop("inv", _inv_kernel, vjp=[_inv_vjp],
               jvp=lambda xp, t, ans, x: -xp.matmul(xp.matmul(ans, t[0]), ans),
               reads=["ans"], text="dA = -inv(A)^T @ g @ inv(A)^T",
               hint="the inverse and its derivative are infinite for a singular A")


def _solve_forward(a, b):
    """X with A X = B for (..., n, n) A and (..., n, k) B (batch dims broadcast)."""
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise singular_error("linalg.solve", a, solver=True) from None


def _solve_db(xp, g, ans, a, b):
    return within_rule(xp, solve, _mT(xp, a), g)


def _solve_da(xp, g, ans, a, b):
    return -xp.matmul(_solve_db(xp, g, ans, a, b), _mT(xp, ans))


def _solve_jvp(xp, t, ans, a, b):
    # d(A^-1 B) = A^-1 (dB - dA X)
    rhs = t[1]
    if t[0] is not None:
        d = xp.matmul(t[0], ans)
        rhs = -d if rhs is None else rhs - d
    return within_rule(xp, solve, a, rhs)


solve = defop("solve", _solve_forward, inputs=("a", "b"), vjp=[_solve_da, _solve_db],
              jvp=_solve_jvp, reads=["ans a", "a"],
              text="X = solve(A, B): dB = solve(A^T, g) ; dA = -dB @ X^T",
              hint="the solution and its derivative are infinite for a singular A")


# ---- triangular solve ---------------------------------------------------------------------
def _substitute(a, b, upper, unit):
    """Forward/back substitution without LAPACK's singularity check: a zero diagonal gives
    inf/nan, as torch's trsm does (LAPACK trtrs refuses such a matrix)."""
    n = a.shape[-1]
    x = np.zeros(b.shape, np.result_type(a, b))
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):
        for i in rows:
            done = slice(i + 1, n) if upper else slice(0, i)
            r = b[i] - a[i, done] @ x[done]
            x[i] = r if unit else r / a[i, i]
    return x


def _solve_triangular_forward(a, b, upper=False, unitriangular=False):
    """X with A X = B, A (..., n, n) read in one triangle only (unitriangular: its diagonal
    taken as 1); batch dims broadcast."""
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, lead + a.shape[-2:])
    b = np.broadcast_to(b, lead + b.shape[-2:])
    out = np.zeros(b.shape, a.dtype)
    if out.size == 0:
        return out
    from scipy.linalg import solve_triangular as trs
    for i in np.ndindex(*lead):
        try:
            out[i] = trs(a[i], b[i], lower=not upper, unit_diagonal=unitriangular,
                         check_finite=False)
        except np.linalg.LinAlgError:
            out[i] = _substitute(a[i], b[i], upper, unitriangular)
    return out


def _triangle_mask(xp, m, upper, unitriangular):
    """m restricted to the triangle a triangular solve reads."""
    from .shape import tril, triu
    if upper:
        return within_rule(xp, triu, m, k=1 if unitriangular else 0)
    return within_rule(xp, tril, m, k=-1 if unitriangular else 0)


def _solve_triangular_db(xp, g, ans, a, b, upper=False, unitriangular=False):
    return within_rule(xp, solve_triangular, _mT(xp, a), g, upper=not upper,
                       unitriangular=unitriangular)


def _solve_triangular_da(xp, g, ans, a, b, upper=False, unitriangular=False):
    gb = _solve_triangular_db(xp, g, ans, a, b, upper, unitriangular)
    return _triangle_mask(xp, -xp.matmul(gb, _mT(xp, ans)), upper, unitriangular)


def _solve_triangular_jvp(xp, t, ans, a, b, upper=False, unitriangular=False):
    rhs = t[1]
    if t[0] is not None:  # d(A^-1 B) = A^-1 (dB - dA X), dA within the read triangle
        d = xp.matmul(_triangle_mask(xp, t[0], upper, unitriangular), ans)
        rhs = -d if rhs is None else rhs - d
    return within_rule(xp, solve_triangular, a, rhs, upper=upper, unitriangular=unitriangular)


solve_triangular = defop(
    "solve_triangular", _solve_triangular_forward, inputs=("a", "b"),
    vjp=[_solve_triangular_da, _solve_triangular_db], jvp=_solve_triangular_jvp,
    reads=["ans a", "a"], node="LinalgSolveTriangularBackward0",
    text="X = A^-1 B (A triangular): dB = solve_triangular(A^T, g) ; dA = tri(-dB @ X^T)",
    hint="the solution and its derivative are infinite when A's diagonal has a zero")

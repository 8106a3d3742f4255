"""Table entries of torch.special's orthogonal polynomials: chebyshev_polynomial_t/u/v/w,
their shifted forms on [0, 1], hermite_polynomial_h/he, laguerre_polynomial_l and
legendre_polynomial_p, each `f(x, n)`.

torch's definitions, vectorized: the degree n is truncated to an integer (n < 0 gives 0),
the three-term recurrence runs in the input's dtype with torch's fused multiply-subtract
(float32 emulated exactly in float64: torch's float32 values to the bit), and where
torch switches to a closed form (the Chebyshev kinds inside (-1, 1) above a small degree:
cos(n*acos(x)) and its siblings) or to an exact value (x = +-1; Hermite degrees beyond
128 in float32 / 512 in float64: nan) so does this. A NaN x gives NaN (torch's kernels
return an unset value there for degrees >= 2). torch gives none of them a derivative: the results carry no grad_fn."""
import numpy as np

from ..registry import defop


def _degrees(x, n):
    x, n = np.broadcast_arrays(x, n)
    with np.errstate(invalid="ignore"):
        k = np.where(np.isfinite(n), n, 0).astype(np.int64)  # torch's static_cast
    return x, k


def _fms(a, b, c):
    """a*b - c rounded once, as the fused multiply-add torch's compiled CPU kernels use:
    exact for float32 (a float32 product is exact in float64, then one rounding); float64
    has no wider type in NumPy, so a*b - c there (off by an ulp at most per step)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b.astype(np.float64) - c).astype(np.float32)
    return a * b - c


def _recur(x, k, p1, step, todo):
    """Degree k at the elements of mask `todo` (k >= 2 there): p_0 = 1, p_1 = p1, then
    p_{j+1} = step(j, x, p_{j-1}, p_j) for j = 1 .. k-1. Elementwise arrays, one pass
    per degree up to the largest k asked."""
    xs, ks = x[todo], k[todo]
    p, q = np.ones_like(xs), p1[todo]
    one = xs.dtype.type
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(1, int(ks.max(initial=1))):
            live = j < ks
            r = step(one(j), xs, p, q)
            p, q = np.where(live, q, p), np.where(live, r, q)
    return q


def _poly(x, n, p1, step, special=None):
    """The polynomial of degree n at x: 0 for n < 0, 1 for n = 0, p1(x) for n = 1, the
    recurrence above, in the input's dtype; `special(x, k)` -> (mask, values) where
    torch returns a closed form instead (checked first, as torch's kernels do, after
    n < 0)."""
    x, k = _degrees(x, n)
    one = np.ones((), x.dtype)
    first = p1(x)
    out = np.where(k == 0, one, first).astype(x.dtype)
    done = k < 2
    if special is not None:
        mask, values = special(x, k)
        mask = mask & (k >= 0)
        out = np.where(mask, values, out)
        done = done | mask
    todo = ~done
    if todo.any():
        out[todo] = _recur(x, k, first, step, todo)
    return np.where(k < 0, np.zeros((), x.dtype), out).astype(x.dtype, copy=False)


def _parity(k, even, odd):
    return np.where(k % 2 == 0, even, odd)


def _chebyshev(kind, shifted):
    """T, U, V, W (kind) at x, or at 2x - 1 (shifted): the endpoints exactly, the
    trigonometric closed form inside (-1, 1) above torch's degree threshold."""
    threshold = {"t": 6, "u": 8, "v": 8, "w": 8}[kind] if not shifted else \
        {"t": 6, "u": 6, "v": 6, "w": 4}[kind]

    def special(x, k):
        y = x + x - 1 if shifted else x
        hi = (x == 1) if shifted else (np.abs(x) == 1) & (x > 0)
        lo = (x == 0) if shifted else (np.abs(x) == 1) & (x < 0)
        kf = k.astype(x.dtype)
        sign = _parity(k, 1, -1).astype(x.dtype)
        # each elementary function in float64 and rounded to the dtype (float32's acos,
        # cos, sin correctly rounded, close to the C library's that torch calls)
        r, w = (lambda v: v.astype(x.dtype)), np.float64
        with np.errstate(invalid="ignore", divide="ignore"):
            th = r(np.arccos(np.clip(y, -1, 1).astype(w)))
            if kind == "t":
                ends = np.where(hi, 1, sign)
                trig = r(np.cos(w(r(kf * th))))
            elif kind == "u":
                ends = np.where(hi, kf + 1, sign * (kf + 1))
                s = r(np.sin(w(th)))
                a = r((kf + 1) * th)
                trig = np.where(s != 0, r(np.sin(w(a))) / s, (kf + 1) * r(np.cos(w(a))) / y)
            elif kind == "v":
                ends = np.where(hi, 1, sign * (2 * kf + 1))
                half = r(th / 2)
                trig = np.where(r(np.sin(w(half))) != 1,
                                r(np.cos(w(r((kf + 0.5) * th)))) / r(np.cos(w(half))),
                                sign * (2 * kf + 1))
            else:
                ends = np.where(hi, 2 * kf + 1, sign)
                half = r(th / 2)
                trig = np.where(r(np.cos(w(half))) != 1,
                                r(np.sin(w(r((kf + 0.5) * th)))) / r(np.sin(w(half))),
                                np.where(y > 0, 2 * kf + 1, sign))
        inside = (k > threshold) & (np.abs(y) < 1)
        return hi | lo | inside, np.where(hi | lo, ends, trig).astype(x.dtype)

    def p1(x):
        y = x + x - 1 if shifted else x
        return {"t": y, "u": y + y, "v": y + y - 1, "w": y + y + 1}[kind]

    def step(j, x, p, q):
        y = x + x - 1 if shifted else x
        return _fms(y + y, q, p)
    return lambda x, n: _poly(x, n, p1, step, special)


def _hermite_limit(x, k):
    limit = 128 if x.dtype.itemsize <= 4 else 512  # torch's, by the dtype
    return k > limit, np.full(x.shape, np.nan, x.dtype)


def _hermite_h(x, n):
    return _poly(x, n, lambda x: x + x, lambda j, x, p, q: _fms(x + x, q, (j + j) * p),
                 _hermite_limit)


def _hermite_he(x, n):
    return _poly(x, n, lambda x: x, lambda j, x, p, q: _fms(x, q, j * p), _hermite_limit)


def _laguerre_l(x, n):
    # torch: L_n(0) = 1 for every n >= 0
    return _poly(x, n, lambda x: 1 - x,
                 lambda j, x, p, q: _fms((j + j) + (1 - x), q, j * p) / (j + 1),
                 lambda x, k: (x == 0, np.ones(x.shape, x.dtype)))


def _legendre_p(x, n):
    def ends(x, k):
        return np.abs(x) == 1, np.where((x > 0) | (k % 2 == 0), 1, -1).astype(x.dtype)
    return _poly(x, n, lambda x: x,
                 lambda j, x, p, q: _fms((j + j + 1) * x, q, j * p) / (j + 1), ends)


def _entry(name, forward):
    return defop(name, forward, promote="float", inputs=("x", "n"),
                 text="no derivative (torch has none)",
                 hint="torch gives no derivative: the result does not require grad")


chebyshev_polynomial_t = _entry("chebyshev_polynomial_t", _chebyshev("t", False))
chebyshev_polynomial_u = _entry("chebyshev_polynomial_u", _chebyshev("u", False))
chebyshev_polynomial_v = _entry("chebyshev_polynomial_v", _chebyshev("v", False))
chebyshev_polynomial_w = _entry("chebyshev_polynomial_w", _chebyshev("w", False))
shifted_chebyshev_polynomial_t = _entry("shifted_chebyshev_polynomial_t", _chebyshev("t", True))
shifted_chebyshev_polynomial_u = _entry("shifted_chebyshev_polynomial_u", _chebyshev("u", True))
shifted_chebyshev_polynomial_v = _entry("shifted_chebyshev_polynomial_v", _chebyshev("v", True))
shifted_chebyshev_polynomial_w = _entry("shifted_chebyshev_polynomial_w", _chebyshev("w", True))
hermite_polynomial_h = _entry("hermite_polynomial_h", _hermite_h)
hermite_polynomial_he = _entry("hermite_polynomial_he", _hermite_he)
laguerre_polynomial_l = _entry("laguerre_polynomial_l", _laguerre_l)
legendre_polynomial_p = _entry("legendre_polynomial_p", _legendre_p)

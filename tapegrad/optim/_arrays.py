"""Small in-place array helpers shared by the optimizer update functions."""
import numpy as np

from .. import _ckernels

_AXPY = {}


def add_scaled_(y, a, x):
    """y <- y + a * x in place, each element rounded once: PyTorch's `y.add_(x, alpha=a)`
    (its CPU kernel fuses the multiply-add; `y -= a * x` rounds the product first and
    differs in the last bit of ~2% of the elements). float32 and float64 go through
    BLAS axpy (one pass, ~3x faster than NumPy's two on a 784x256 float32 update,
    measured), whose Haswell kernel rounds a short tail twice (its SkylakeX one gave
    torch's bits everywhere, measured); float16 as torch: a rounded to float16, the sum
    in float32. Returns y."""
    blas = _AXPY.get(y.dtype)
    if blas is None and y.dtype in (np.float32, np.float64):
        from scipy.linalg.blas import get_blas_funcs
        blas = _AXPY[y.dtype] = get_blas_funcs("axpy", dtype=y.dtype)
    if blas is None:  # float16 (complex: the same formula, in its own precision)
        wide = np.float32 if y.dtype == np.float16 else y.dtype
        y[...] = y.astype(wide) + np.asarray(a, y.dtype).astype(wide) * x.astype(wide)
        return y
    flat = y.reshape(-1) if y.flags.c_contiguous else np.ascontiguousarray(y).reshape(-1)
    xs = np.ascontiguousarray(x, dtype=y.dtype).reshape(-1)
    out = blas(xs, flat, a=a)
    if not np.shares_memory(out, y):  # updated a copy (y not C-contiguous): write back
        y[...] = out.reshape(y.shape)
    return y


def adam_moments_(g, m, v, tmp, upd, beta1, beta2, step_size, bc2_sqrt, eps):
    """Adam's update of its moments and its step, in place: m <- m + (1 - beta1) (g - m)
    (torch's lerp_, its branch for weights below 0.5), v <- beta2 v + (1 - beta2) g g,
    upd <- -step_size m / (sqrt(v) / bc2_sqrt + eps); tmp: scratch. One pass of
    tapegrad's C kernel for float32 when it is built (104,600 elements: 13 NumPy passes
    ~150 us, one C pass ~65 us, 1 thread, measured), else `adam_moments_numpy`: the same
    bits."""
    if _ckernels.LIB is not None and _ckernels.adam_moments_f32(
            g, m, v, upd, 1 - beta1, beta2, 1 - beta2, bc2_sqrt, eps, -step_size):
        return
    adam_moments_numpy(g, m, v, tmp, upd, beta1, beta2, step_size, bc2_sqrt, eps)


def adam_moments_numpy(g, m, v, tmp, upd, beta1, beta2, step_size, bc2_sqrt, eps):
    """`adam_moments_`'s NumPy form, torch's operations in its order (each Python float
    a scalar of the arrays' dtype)."""
    np.subtract(g, m, out=tmp)  # m += (1 - b1) (g - m)
    tmp *= 1 - beta1
    m += tmp
    v *= beta2  # v = b2 v + (1 - b2) g g, (1 - b2) g g left to right
    np.multiply(g, 1 - beta2, out=tmp)
    tmp *= g
    v += tmp
    np.sqrt(v, out=tmp)  # denominator: sqrt(v) / sqrt(1 - b2^t) + eps
    tmp /= bc2_sqrt
    tmp += eps
    np.multiply(m, -step_size, out=upd)  # -lr / (1 - b1^t) m / denominator
    upd /= tmp


def lerp_(a, b, w):
    """a <- a + w * (b - a), in place, with PyTorch's two-branch formula (exact at w=1)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        np.subtract(b, (b - a) * (1 - w), out=a)
    return a


def scalar_dtype():
    """The dtype of 0-d optimizer state (`step`, NAdam's `mu_product`): float64 when the
    default dtype is float64, else float32 (PyTorch's `_get_scalar_dtype`). It matters:
    NAdam's running product is rounded to this dtype every step."""
    from ..dtypes import float64, get_default_dtype
    return np.dtype(np.float64) if get_default_dtype() == float64 else np.dtype(np.float32)

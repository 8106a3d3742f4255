"""torch.masked's reductions and normalizations on strided tensors.

Each op replaces the masked-out elements of its input (`mask` False, broadcast to the
input's shape) by the identity of the reduction it runs (0 for sums, 1 for products,
-inf for maxima and logsumexp, +inf for minima, NaN for nanmedian) and runs the
ordinary op: a fully masked-out row gives the identity (or NaN where there is none:
mean, var, std). Built from differentiable ops (`where` and the reduction), so
gradients, second order included, follow; masked-out elements get a zero gradient,
as in torch. `mask=None` means every element is in. MaskedTensor and sparse layouts
are not supported.
"""
import builtins
import math

from .. import dtypes as _dt
from ..ops import (comparison as _comparison, creation as _creation, linalg as _linalg,
                   pointwise as _pointwise, reductions as _reductions, shape as _shape)
from ..type_info import iinfo as _iinfo

# the dtypes whose sums and products torch.masked computes in int64 by default
_SMALL_INTS = (_dt.uint8, _dt.bool, _dt.int8, _dt.int16, _dt.int32)


def _canonical_dim(dim, ndim):
    """The reduced dims as a sorted tuple (None or (): all of them), checked as torch's."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    n = builtins.max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= n or d < -n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        dims.append(d % n)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """`mask` as a bool tensor of the input's shape (broadcast; never of more dims)."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask "
                             "dimensionality higher than of the input)")
        mask = _shape.broadcast_to(mask, tuple(input.shape))
    return mask.to(_dt.bool)


def _identity(op, input, ord=2.0):
    """The value that leaves the reduction `op` unchanged, as a 0-d tensor of the
    input's dtype (None: the op has none)."""
    dt = input.dtype
    floating = dt.is_floating_point
    if op in ("sum", "cumsum"):
        v = 0
    elif op in ("prod", "cumprod"):
        v = 1
    elif op in ("amax", "argmax", "logaddexp", "logsumexp"):
        v = -math.inf if floating else _int_limits(op, dt).min
    elif op in ("amin", "argmin"):
        v = math.inf if floating else _int_limits(op, dt).max
    elif op == "norm":
        v = math.inf if ord == -math.inf else 0
    elif op == "median":
        v = math.nan
    else:
        return None
    return _creation.full((), v, dtype=dt)


def _int_limits(op, dt):
    # torch defines the integer identities for signed dtypes and uint8 only (bool: none)
    if dt == _dt.bool or (not dt.is_signed and dt != _dt.uint8):
        raise NotImplementedError(f"identity of {op} on {dt} input")
    return _iinfo(dt)


def _where_in(op, input, mask, ord=2.0):
    """The input with its masked-out elements replaced by `op`'s identity."""
    if mask is None:
        return input
    return _pointwise.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _int64_if_small_int(input, dtype):
    if dtype is None:
        dtype = input.dtype
        if dtype in _SMALL_INTS:
            dtype = _dt.int64
    return dtype


def _dims_arg(dims):
    return dims if dims else None  # a 0-d input: the whole tensor


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The sum of the masked-in elements (identity 0); small integers sum to int64."""
    dtype = _int64_if_small_int(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _reductions.sum(_where_in("sum", input, mask), _dims_arg(dims), bool(keepdim),
                           dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The product of the masked-in elements (identity 1), one dim at a time as torch."""
    dtype = _int64_if_small_int(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    res = _where_in("prod", input, mask).to(dtype)
    for d in reversed(dims):
        res = _reductions.prod(res, d, keepdim=bool(keepdim))
    return res


def cumsum(input, dim, *, dtype=None, mask=None):
    """The running sum along `dim`, masked-out elements counting as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _reductions.cumsum(_where_in("sum", input, mask), d, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """The running product along `dim`, masked-out elements counting as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _reductions.cumprod(_where_in("prod", input, mask), d, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The largest masked-in element (identity -inf, or the dtype's minimum)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _reductions.amax(_where_in("amax", input, mask), dims, bool(keepdim)).to(dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The smallest masked-in element (identity +inf, or the dtype's maximum)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _reductions.amin(_where_in("amin", input, mask), dims, bool(keepdim)).to(dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the largest masked-in element, cast to `dtype` (default: the
    input's dtype, as torch's)."""
    dtype = input.dtype if dtype is None else dtype
    return _reductions.argmax(_where_in("argmax", input, mask), dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the smallest masked-in element, cast to `dtype`."""
    dtype = input.dtype if dtype is None else dtype
    return _reductions.argmin(_where_in("argmin", input, mask), dim, bool(keepdim)).to(dtype)


def _count(input, dim, keepdim, mask):
    """How many elements are masked in along `dim` (int64)."""
    ones = _creation.ones(tuple(input.shape), dtype=_dt.int64) if mask is None \
        else _input_mask(input, mask)
    return sum(ones, dim, keepdim=keepdim)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The mean of the masked-in elements: NaN where every element is masked out."""
    source = "Input" if dtype is None else "Optional"
    dtype = input.dtype if dtype is None else dtype
    if not dtype.is_floating_point:
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return _pointwise.true_divide(total, _count(input, dim, bool(keepdim), mask))


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The median of the masked-in elements along one dim (torch.nanmedian of the input
    with NaN in the masked-out places); integer inputs are computed in float32."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(_dt.float32)
    out = _reductions.nanmedian(_where_in("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if _comparison.isnan(out).any().item():
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp)) of the masked-in elements (identity -inf)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _reductions.logsumexp(_where_in("logsumexp", input, mask), _dims_arg(dims),
                                 keepdim=keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """logaddexp of two tensors, each with its own mask (masked out: -inf)."""
    dtype = input.dtype if dtype is None else dtype
    return _pointwise.logaddexp(_where_in("logaddexp", input, input_mask),
                                _where_in("logaddexp", other, other_mask)).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector `ord`-norm of the masked-in elements (identity 0; +inf for ord=-inf)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _linalg.vector_norm(_where_in("norm", input, mask, ord), ord, _dims_arg(dims),
                               bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _dt.float32
    compute = dtype if dtype.is_floating_point else _dt.float32
    count = _count(input, dim, True, mask)
    sample_mean = _pointwise.true_divide(sum(input, dim, keepdim=True, dtype=dtype, mask=mask),
                                         count)
    x = _pointwise.sub(input, sample_mean)
    total = sum(_pointwise.mul(x, x), dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if corr != 0:
        count = _pointwise.sub(count.to(compute), corr)
        count = _pointwise.clamp_min(count, 0)
    out = _pointwise.true_divide(total, count).to(dtype)
    return _pointwise.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The variance of the masked-in elements (NaN/inf where too few are in)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The standard deviation of the masked-in elements."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax along `dim` over the masked-in elements (masked out: -inf, so 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _reductions.softmax(_where_in("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax along `dim` over the masked-in elements (masked out: -inf)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _reductions.log_softmax(_where_in("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin along `dim` over the masked-in elements (masked out: +inf, so 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _reductions.softmax(_pointwise.neg(_where_in("amin", input, mask)), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """The input divided by the masked `ord`-norm along `dim` (at least eps); masked-out
    elements are 0."""
    dtype = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = _comparison.maximum(nrm, _creation.full((), eps, dtype=nrm.dtype))
    return _pointwise.true_divide(_where_in("sum", input, mask), denom)

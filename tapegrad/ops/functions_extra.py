"""More public op functions (issue 12 item 4): special functions, rounding, square,
reciprocal, histograms,
einsum, diagonals, cumprod, median, nan_to_num, meshgrid, bernoulli.

PyTorch's names, arguments, dtypes and error messages; derivatives live in the table
(special.py, einsum.py, linalg_extra.py, scan.py, indexing.py's gather, elementwise's
where); the composites here (trace, diag_embed, median, nan_to_num, meshgrid) are
differentiable because their parts are.
"""
import builtins
import warnings

import numpy as np

from .. import dtypes as _dt
from .. import random as _random
from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from .rules import einsum as ES
from .rules import pointwise as E
from . import functions as F
from .return_types import structseq
from .rules import indexing as IX
from . import inplace as IP
from .rules import linalg as LX
from .rules import reductions as SC
from .rules import special as SP
from .shape_functions import _dim


def _np(t):
    """A tensor's values as an array (shares memory; no graph)."""
    return t.detach().numpy()


_tname = _dt.torch_name  # 'Float' for float32: the names in PyTorch's messages


# ---- special functions and rounding -----------------------------------------------------
erf = F._unary(SP.erf)
erfc = F._unary(SP.erfc)
erfinv = F._unary(SP.erfinv)


def round(input, *, decimals=0):
    """Half to even (torch.round); `decimals` as torch computes it. Integer tensors are
    returned as they are (a copy); the gradient is 0."""
    x = F._tensor(input, "round")
    if x.dtype.kind in "biu":
        return like(x, _np(x).copy())
    return apply(SP.round, x, decimals=int(decimals))


def square(input):
    """input * input as torch.square: pow(input, 2) (PowBackward0); bool gives int64."""
    x = F._tensor(input, "square")
    if x.dtype.kind == "b":
        x = x.to(_dt.int64)
    return F.pow(x, 2)


def reciprocal(input):
    """1 / input; integer and bool tensors give the default float dtype (torch)."""
    x = F._tensor(input, "reciprocal")
    if x.dtype.kind in "biu":
        x = x.to(_dt.get_default_dtype())
    return apply(E.reciprocal, x)


# ---- histograms (no gradient) -------------------------------------------------------------
histogram_result = structseq("histogram", ["hist", "bin_edges"])


def _float_input(name, x, kernel):
    if x.dtype.kind != "f":
        raise RuntimeError(f'"{kernel}" not implemented for \'{_tname(x.dtype)}\'')


def histc(input, bins=100, min=0, max=0):
    """Counts in `bins` equal bins over [min, max] (the data's range when min == max);
    values outside are ignored, a value equal to max counts in the last bin."""
    x = F._tensor(input, "histc")
    _float_input("histc", x, "histogram_cpu")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0, but got " + str(bins))
    a = _np(x).reshape(-1)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and a.size:
        finite = a[np.isfinite(a)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep = (a >= lo) & (a <= hi)
    v = a[keep]
    pos = ((v - a.dtype.type(lo)) * bins / a.dtype.type(hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)  # x == max goes into the last bin
    return like(x, np.bincount(pos, minlength=bins).astype(a.dtype))


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in a 1-d non-negative integer tensor (at least
    `minlength` bins); with `weights`, the sum of the weights per value (float32 weights
    give float32, any other dtype float64, as torch). Not differentiable: torch has no
    derivative for it either, so no graph is recorded."""
    x = F._tensor(input, "bincount")
    a = x._data
    if a.dtype.kind == "f":
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_tname(a.dtype)}\'')
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    minlength = int(minlength)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return like(x, np.bincount(a, minlength=minlength).astype(np.int64))
    w = _np(F._tensor(weights, "bincount"))
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
    return like(x, out.astype(np.float32 if w.dtype == np.float32 else np.float64))


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges): `bins` equal bins over `range` (default the data's min..max;
    a constant input gets [v - 0.5, v + 0.5]) or the given increasing edges tensor."""
    x = F._tensor(input, "histogram")
    _float_input("histogram", x, "histogram_cpu")
    a = _np(x).reshape(-1)
    if isinstance(bins, TensorBase):
        edges = _np(bins).astype(a.dtype)
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension")
    else:
        n = int(bins)
        if n <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got " + str(n))
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif a.size:
            lo, hi = float(a.min()), float(a.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError("torch.histogram(): max must be larger than min")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, n + 1).astype(a.dtype)
    w = None if weight is None else _np(weight).reshape(-1)
    hist, _ = np.histogram(a, bins=edges, weights=w)
    hist = hist.astype(a.dtype)
    if density:
        hist = hist / (hist.sum() * np.diff(edges))
    return histogram_result(like(x, hist.astype(a.dtype)), like(x, edges))


# ---- einsum ---------------------------------------------------------------------------------
def einsum(equation, *operands):
    """torch.einsum(eq, a, b, ...), einsum(eq, [a, b, ...]) and the sublist form
    einsum(a, [0, 1], b, [1, 2], [0, 2]); ellipsis, implicit output, repeated letters (diagonals) and size-1 broadcasting as in torch."""
    if not isinstance(equation, str):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = [F._tensor(o, "einsum") for o in operands]
    if not xs:
        raise RuntimeError("einsum(): must provide at least one operand")
    eq, specs, _ = ES.normalize(equation, [tuple(x.shape) for x in xs])
    for k, (s, x) in enumerate(zip(specs, xs)):
        for c in set(s):
            sizes = {x.shape[p] for p in builtins.range(len(s)) if s[p] == c}
            if len(sizes) > 1:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but "
                                   f"the sizes don't match, {min(sizes)} != {max(sizes)}")
    kinds = {x.dtype for x in xs}
    if len(kinds) > 1:  # torch: operands must have one dtype
        raise RuntimeError("expected scalar type " + _tname(xs[0].dtype) + " but found "
                           + _tname(next(d for d in (x.dtype for x in xs) if d != xs[0].dtype)))
    return apply(ES.einsum, *xs, eq=eq)


def _sublist_letters(sub):
    # torch: subscript k in [0, 26) is 'A' + k, in [26, 52) 'a' + k - 26; Ellipsis is '...'
    out = []
    for k in sub:
        if k is Ellipsis:
            out.append("...")
            continue
        if not 0 <= k < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
        out.append(chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26))
    return "".join(out)


def _sublist_equation(args):
    """(equation, operands) of einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])."""
    ops, specs = list(args[0::2][:len(args) // 2]), list(args[1::2][:len(args) // 2])
    for o in ops:
        if not isinstance(o, TensorBase):
            raise TypeError(f"einsum(): expected a Tensor operand, got {type(o).__name__}")
    eq = ",".join(_sublist_letters(s) for s in specs)
    if len(args) % 2:  # the output sublist
        eq += "->" + _sublist_letters(args[-1])
    return eq, tuple(ops)


# ---- diagonals ----------------------------------------------------------------------------
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1, dim2 (offset > 0 above it), as the last dim."""
    x = F._tensor(input, "diagonal")
    nd = x.ndim
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(LX.diagonal, x, offset=int(offset), dim1=d1, dim2=d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (of dims dim1, dim2 of the result) hold input's last dim."""
    x = F._tensor(input, "diag_embed")
    nd = x.ndim + 1
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (x.shape[-1] if x.ndim else 1) + builtins.abs(int(offset))
    rest = list(x.shape[:-1])
    shape = [0] * nd
    lo, hi = sorted((d1, d2))
    it = iter(rest)
    for k in builtins.range(nd):
        shape[k] = n if k in (d1, d2) else next(it)
    # the table's diagonal_backward writes the LAST dim of g onto (dim1, dim2)
    g = x if x.ndim else F.reshape(x, (1,))
    return apply(LX.diagonal_backward, g, shape=tuple(shape), offset=int(offset),
                 dim1=d1, dim2=d2)


def diag(input, diagonal=0):
    """1-D -> a 2-D matrix with input on the given diagonal; 2-D -> that diagonal."""
    x = F._tensor(input, "diag")
    if x.ndim == 1:
        return diag_embed(x, diagonal, 0, 1)
    if x.ndim == 2:
        return apply(LX.diagonal, x, offset=int(diagonal), dim1=0, dim2=1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


def trace(input):
    """The sum of the main diagonal of a matrix."""
    x = F._tensor(input, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    s = F.sum(apply(LX.diagonal, x, offset=0, dim1=0, dim2=1))
    return s


# ---- cumprod --------------------------------------------------------------------------------
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along dim (bool/int tensors give int64, as PyTorch); the
    gradient is exact with zeros in the input."""
    x = F._tensor(input, "cumprod")
    if dtype is not None:
        x = x.to(dtype)
    elif x.dtype.kind in "biu":
        x = x.to(_dt.int64)
    d = _dim(dim, x.ndim)
    return apply(SC.cumprod, x, axis=d)


# ---- median ---------------------------------------------------------------------------------
median_result = structseq("median", ["values", "indices"])
nanmedian_result = structseq("nanmedian", ["values", "indices"])


def _median(name, x, dim, keepdim, skip_nan):
    a = _np(x)
    if dim is None:
        flat = F.reshape(x, (-1,))
        if flat.shape[0] == 0:
            return like(x, np.array(np.nan, dtype=a.dtype))
        v, _ = _median(name, flat, 0, False, skip_nan)
        return v
    nd = x.ndim
    d = _dim(dim, nd)
    if nd == 0:
        x, a = F.reshape(x, (1,)), a.reshape(1)
    if a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    order = np.argsort(a, axis=d, kind="stable")  # NaNs sort last
    nan = np.isnan(a)
    if skip_nan:
        count = a.shape[d] - nan.sum(axis=d, keepdims=True)
        k = np.maximum(count - 1, 0) // 2  # all NaN: the first NaN
    else:
        has_nan = nan.any(axis=d, keepdims=True)
        first_nan = a.shape[d] - nan.sum(axis=d, keepdims=True)  # where the NaNs start
        k = np.where(has_nan, first_nan, (a.shape[d] - 1) // 2)
    idx = np.take_along_axis(order, k, axis=d).astype(np.int64)
    vals = apply(IX.gather, x, axis=d, index=idx)
    if not keepdim or nd == 0:
        shape = tuple(s for i, s in enumerate(idx.shape) if i != d) if nd else ()
        vals, idx = F.reshape(vals, shape), idx.reshape(shape)
    return vals, like(x, idx)


def median(input, dim=None, keepdim=False):
    """The lower median (of all elements: a 0-d tensor; along dim: (values, indices)).
    A slice holding NaN has median NaN. The gradient goes to the selected element."""
    x = F._tensor(input, "median")
    if dim is None:
        return _median("median", x, None, False, False)
    return median_result(*_median("median", x, dim, keepdim, False))


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaNs (NaN only where a slice is all NaN)."""
    x = F._tensor(input, "nanmedian")
    if dim is None:
        return _median("nanmedian", x, None, False, True)
    return nanmedian_result(*_median("nanmedian", x, dim, keepdim, True))


# ---- nan_to_num ---------------------------------------------------------------------------
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf (default: the dtype's max), -inf -> neginf (its min).
    The gradient is 0 at the replaced elements (they no longer depend on x)."""
    x = F._tensor(input, "nan_to_num")
    if x.dtype.kind != "f":
        return like(x, _np(x).copy())
    a = _np(x)
    info = np.finfo(a.dtype)
    pos = info.max if posinf is None else posinf
    neg = info.min if neginf is None else neginf
    out = x
    for mask, value in ((np.isnan(a), nan), (np.isposinf(a), pos), (np.isneginf(a), neg)):
        if mask.any():
            out = apply(E.where, mask, like(x, np.asarray(value, dtype=a.dtype)), out)
    return out if out is not x else F.clone(x)


# ---- meshgrid -------------------------------------------------------------------------------
def meshgrid(*tensors, indexing=None):
    """Grids from 1-D tensors: 'ij' (matrix indexing, torch's default, with its warning
    when `indexing` is omitted) or 'xy' (Cartesian: the first two dims swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    ts = [F._tensor(t, "meshgrid") for t in tensors]
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    ts = [F.reshape(t, (-1,)) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * n
        view[i] = shape[i]
        out.append(F.expand(F.reshape(t, tuple(view)), shape))
    if swap:  # 'xy' is 'ij' of (y, x, ...) with the first two grids swapped back
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ---- random sampling ------------------------------------------------------------------------
def bernoulli(input, p=None, *, generator=None):
    """0/1 draws with probabilities `input` (or the number `p`), input's dtype."""
    x = F._tensor(input, "bernoulli")
    if p is None and x.dtype.kind != "f":
        raise RuntimeError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_tname(x.dtype)}\'')
    probs = _np(x) if p is None else np.full(x.shape, float(p))
    if probs.size and (np.any(probs < 0) or np.any(probs > 1) or np.isnan(probs).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = _random.rng(generator).random(x.shape)
    if p is None and x.dtype.kind == "f":
        # recorded (gradient 0) when input requires grad, as torch's BernoulliBackward0
        return apply(SP.bernoulli, x, draws=u)
    dt = x.dtype if x.dtype.kind == "f" else _dt.get_default_dtype()
    return like(x, (u < probs).astype(dt))


def bernoulli_(self, p=0.5, *, generator=None):
    """In place: each element becomes 1 with probability p (a number or a tensor)."""
    probs = _np(p) if isinstance(p, TensorBase) else p
    probs = np.broadcast_to(np.asarray(probs, dtype=np.float64), self.shape)
    if probs.size and (np.any(probs < 0) or np.any(probs > 1)):
        raise RuntimeError("bernoulli_ expects p to be in [0, 1], but got p="
                           + str(p if not isinstance(p, TensorBase) else "a tensor"))
    draws = (_random.rng(generator).random(self.shape) < probs).astype(self.dtype)
    return IP.copy_(self, like(self, draws))


relu_ = IP.relu_

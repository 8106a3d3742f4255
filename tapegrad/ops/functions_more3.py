"""Products, distances and shape helpers that are formulas of existing ops: addmv, addr,
baddbmm, addbmm, inner, vdot, tensordot, dist, renorm, diagflat, block_diag,
cosine_similarity, pairwise_distance, combinations, split_with_sizes, atleast_1d/2d/3d.

No table entries of their own: products go through matmul/mm, selections through
index_select and cat, so gradients, second derivatives and forward mode are their parts'.
PyTorch's names, arguments and error messages (tests/test_methods_more2.py).
"""
import itertools

import numpy as np

from .. import dtypes as _dt
from ..core.tensor_base import TensorBase, like
from . import functions as F
from . import functions_extra as FX
from . import index_functions as I
from . import linalg_functions as LF
from . import shape_functions as S
from .shape_functions import _dim


def _t(x, name, arg="input", pos=1):
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                    f"{type(x).__name__}")


def _tname(t):
    return _dt.torch_name(t._data.dtype)


def _add_scaled(name, input, prod, beta, alpha):
    """beta * input + alpha * prod; beta == 0 ignores input's values (nan does not
    propagate), as torch's addmm family does. input must expand to prod's shape."""
    x = _t(input, name)
    want, have = tuple(prod.shape), tuple(x.shape)
    if have != want:  # input broadcasts one way, to the product's shape
        pad = (1,) * (len(want) - len(have)) + have
        for i, (w, h) in enumerate(zip(want, pad)):
            if len(have) > len(want) or (h != w and h != 1):
                raise RuntimeError(f"The expanded size of the tensor ({w}) must match the "
                                   f"existing size ({h}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {list(want)}.  Tensor sizes: {list(have)}")
    p = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return F.where(like(x, np.ones(tuple(p.shape), dtype=bool)), p, x)
    return (x if beta == 1 else x * beta) + p


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    m, v, x = _t(mat, "addmv", "mat", 2), _t(vec, "addmv", "vec", 3), _t(input, "addmv")
    if m.ndim != 2 or v.ndim != 1 or m.shape[1] != v.shape[0] or x.ndim > 1 or (
            x.ndim == 1 and x.shape[0] not in (1, m.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({'x'.join(map(str, x.shape))}), mat "
                           f"({'x'.join(map(str, m.shape))}), vec "
                           f"({'x'.join(map(str, v.shape))})")
    if not x._data.dtype == m._data.dtype == v._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_tname(x)}, {_tname(m)}, and {_tname(v)}")
    return _add_scaled("addmv", x, F.matmul(m, v), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    a, b = _t(vec1, "addr", "vec1", 2), _t(vec2, "addr", "vec2", 3)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {a.ndim}-D"
                           if a.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {b.ndim}-D")
    return _add_scaled("addr", input, F.outer(a, b), beta, alpha)


def _batches(name, input, b1, b2):
    x, a, b = _t(input, name), _t(b1, name, "batch1", 2), _t(b2, name, "batch2", 3)
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if a.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_tname(a)} but found {_tname(b)}")
    if x._data.dtype != a._data.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_tname(x).lower()}, batch1: "
            f"{_tname(a).lower()}, batch2: {_tname(b).lower()}" if name == "baddbmm" else
            f"self and mat2 must have the same dtype, but got {_tname(x)} and {_tname(a)}")
    return F.bmm(a, b)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    return _add_scaled("baddbmm", input, _batches("baddbmm", input, batch1, batch2), beta,
                       alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b(batch1[b] @ batch2[b])."""
    return _add_scaled("addbmm", input, F.sum(_batches("addbmm", input, batch1, batch2), 0),
                       beta, alpha)


def tensordot(a, b, dims=2, out=None):
    """Contract dims `dims` of a with those of b (an int n: a's last n with b's first n; a
    pair of lists; a tensor of either): permute, reshape to matrices, one mm."""
    a, b = _t(a, "tensordot", "a"), _t(b, "tensordot", "b", 2)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, TensorBase):
        dims = dims._data.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [_dim(d, a.ndim) for d in da]
    db = [_dim(d, b.ndim) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} "
                               f"in dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    ma = F.reshape(F.permute(a, fa + da), (-1, k))
    mb = F.reshape(F.permute(b, db + fb), (k, -1))
    out_shape = tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb)
    return F.reshape(F.mm(ma, mb), out_shape)


def inner(input, other):
    """Sum over the last dims: a[..., k] b[..., k] -> a.shape[:-1] + b.shape[:-1]; a
    product when either is 0-d."""
    a, b = _t(input, "inner"), _t(other, "inner", "other", 2)
    if a.ndim == 0 or b.ndim == 0:
        return F.mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors "
                           f"but got shapes {list(a.shape)} and {list(b.shape)}")
    return tensordot(a, b, ([-1], [-1]))


def vdot(input, other):
    """The dot product of two 1-D tensors of one dtype (real: torch.dot)."""
    a, b = _t(input, "vdot"), _t(other, "vdot", "other", 2)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dt.torch_name(a._data.dtype)} and "
                           f"{_dt.torch_name(b._data.dtype)}")
    return F.dot(a, b)


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    a, b = _t(input, "dist"), _t(other, "dist", "other", 2)
    if _dt.as_dtype(F.promote_types(a._data.dtype, b._data.dtype)).kind != "f":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_dt.torch_name(F.promote_types(a._data.dtype, b._data.dtype))}"
                           f" instead.")
    return LF.vector_norm(F.sub(a, b), p)


def renorm(input, p, dim, maxnorm):
    """Each slice along `dim` whose p-norm exceeds maxnorm scaled to norm maxnorm (by
    maxnorm / (norm + 1e-7), torch's factor); the factor is differentiated too, as
    torch's renorm_backward does."""
    x = _t(input, "renorm")
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} "
                           f"dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _dim(dim, x.ndim)
    others = tuple(i for i in range(x.ndim) if i != d)
    norm = LF.vector_norm(x, p, others, True)
    big = like(x, norm._data > maxnorm)
    factor = F.where(big, F.div(maxnorm, F.add(norm, 1e-7)),
                     like(x, np.ones((), x._data.dtype)))
    return F.mul(x, factor)


def diagflat(input, offset=0):
    """The flattened input on the offset-th diagonal of a square matrix."""
    x = _t(input, "diagflat")
    return FX.diag(F.reshape(x, (-1,)), offset)


def block_diag(*tensors):
    """The tensors (0-d: 1x1, 1-d: one row, 2-d) along the diagonal of one matrix, zeros
    elsewhere, in their promoted dtype. Each block row is cat([zeros, block, zeros])."""
    ts = []
    for i, t in enumerate(tensors):
        t = _t(t, "block_diag", "tensors")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        ts.append(F.reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not ts:  # torch gives a (1, 0) tensor; here a result needs an input to copy
        raise RuntimeError("block_diag(): tapegrad needs at least one tensor")
    dt = ts[0]._data.dtype
    for t in ts[1:]:
        dt = _dt.as_dtype(F.promote_types(dt, t._data.dtype))
    ts = [t if t._data.dtype == dt else t.to(dt) for t in ts]
    width = sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        r, c = t.shape
        z = [like(t, np.zeros((r, w), dt)) for w in (left, width - left - c)]
        rows.append(S.cat([z[0], t, z[1]], 1))
        left += c
    return S.cat(rows, 0)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/|x1| * x2/|x2|) along dim, each norm clamped to at least eps (torch clamps
    without recording, so the gradient is the unclamped one; they agree for norms > eps)."""
    a, b = _t(x1, "cosine_similarity", "x1"), _t(x2, "cosine_similarity", "x2", 2)
    common = _dt.as_dtype(F.promote_types(a._data.dtype, b._data.dtype))
    if common.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dt.torch_name(common)}")
    if a.shape != b.shape:
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            F._check_broadcast("cosine_similarity", a, b)
            raise
        a, b = F.expand(a, shape), F.expand(b, shape)
    na = F.clamp_min(LF.vector_norm(a, 2, dim, True), eps)
    nb = F.clamp_min(LF.vector_norm(b, 2, dim, True), eps)
    return F.sum(F.mul(F.div(a, na), F.div(b, nb)), dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps along the last dim (0-d and 1-d inputs: the whole)."""
    a, b = _t(x1, "pairwise_distance", "x1"), _t(x2, "pairwise_distance", "x2", 2)
    nd = max(a.ndim, b.ndim)
    diff = F.add(F.sub(a, b), eps)
    if nd == 0:
        return LF.vector_norm(diff, p, None, keepdim)
    return LF.vector_norm(diff, p, nd - 1, keepdim)


def combinations(input, r=2, with_replacement=False):
    """Every length-r combination of a 1-D tensor's elements, one per row (itertools'
    order), by one index_select."""
    x = _t(input, "combinations")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return like(x, np.zeros((0,), x._data.dtype))
    make = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(make(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    flat = I.index_select(x, 0, like(x, idx.reshape(-1)))
    return F.reshape(flat, idx.shape)


def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes along dim (they must add up to its length)."""
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}")
    return S.split(_t(input, "split_with_sizes"), sizes, dim)


def _atleast(n, name, tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], TensorBase)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        t = _t(t, name, "tensors")
        if t.ndim < n:
            if n == 3 and t.ndim == 2:
                t = S.unsqueeze(t, 2)
            elif n == 3 and t.ndim == 1:
                t = F.reshape(t, (1, -1, 1))
            else:
                t = F.reshape(t, (1,) * (n - t.ndim) + tuple(t.shape))
        out.append(t)
    return out[0] if one else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (0-d -> (1,)); one tensor in, one out."""
    return _atleast(1, "atleast_1d", tensors)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims ((n,) -> (1, n))."""
    return _atleast(2, "atleast_2d", tensors)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast(3, "atleast_3d", tensors)

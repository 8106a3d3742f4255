"""Shape ops: views and reshapes, joins and splits, flips and rolls, diagonals and
triangles (reshape, view, permute, cat, stack, split, flip, tril, diagonal, ...).
Derivatives: rules/shape.py."""
import builtins
import functools
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .._size import Size
from ..core import grad_mode, tape as _tape
from ..core.node import Node
from ..core.record import apply
from ..core.rebase import share_view_version
from ..core.state import state
from ..core.tensor_base import TensorBase, like, make
from . import _args, conversion as _conversion, promotion as _promotion
from .inplace import LEAF_ERROR, _rebase
from .public import public, public_copy, public_inplace
from .rules import indexing as I, linalg as LX, shape as S


@public
def reshape(input, *shape):
    x = _args._tensor(input)
    shape = _args._shape_arg(shape)
    if shape == x._data.shape:
        # NOTE: without history, x itself (torch: a new view); a tensor made outside
        # `apply` would break tg.compile's capture (core/tape.py)
        return x if not x._rg else apply(S.reshape, x, shape=shape)
    if shape and builtins.min(shape) < -1:  # NumPy reads any negative size as -1 (infer)
        bad = builtins.min(shape)
        raise RuntimeError(f"invalid shape dimension {bad} at index {shape.index(bad)} of "
                           f"shape {list(shape)}")
    return apply(S.reshape, x, shape=shape)


@public(function=False)
def view(input, *shape):
    """x.view(*shape): reshape where x's strides allow it without a copy (torch refuses
    the others); x.view(dtype) reads the same bytes as another dtype."""
    if len(shape) == 1 and isinstance(shape[0], (_dt.dtype, np.dtype)):
        return _conversion._view_dtype(_args._tensor(input), shape[0])
    a = _args._tensor(input)._data
    if not a.flags.c_contiguous:
        _args._check_viewable(a, _args._shape_arg(shape))
    return reshape(input, *shape)


@public
def expand(input, *sizes):
    x = _args._tensor(input)
    sizes = _args._shape_arg(sizes)
    nd = len(sizes) - x._data.ndim
    if nd < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({x._data.ndim})")
    shape = tuple(x._data.shape[i - nd] if s == -1 else s for i, s in enumerate(sizes))
    return apply(S.expand, x, shape=shape)


@public
def broadcast_to(input, shape):
    return expand(input, tuple(shape))


@public
def permute(input, *dims):
    x = _args._tensor(input)
    dims = _args._shape_arg(dims)
    nd = x._data.ndim
    if sorted(d % nd for d in dims) != list(range(nd)) if nd else dims != ():
        raise RuntimeError(f"permute: dims {dims} are not a permutation of the {nd} dims of "
                           f"shape {tuple(x._data.shape)}")
    return apply(S.permute, x, dims=tuple(d % nd for d in dims))


@public(aliases=('swapaxes', 'swapdims'))
def transpose(input, dim0, dim1):
    x = _args._tensor(input)
    nd = x._data.ndim
    if nd < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return apply(S.permute, x, dims=tuple(range(nd)))  # a view of x, as torch's
    dims = list(range(nd))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return apply(S.permute, x, dims=tuple(dims))


swapaxes = swapdims = transpose


@public
def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else transpose(input, 0, -1)


@public
def ravel(input):
    """The elements as a 1-D tensor (a view when possible)."""
    return reshape(_args._tensor(input, "ravel"), (-1,))


@public
def tile(input, dims):
    """repeat() with dims padded by leading 1s to the tensor's rank (and vice versa)."""
    x = _args._tensor(input, "tile")
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) < x.ndim:
        dims = (1,) * (x.ndim - len(dims)) + dims
    return repeat(x, *dims)


@public(method=False)
def broadcast_tensors(*tensors):
    """Each tensor expanded to the common broadcast shape."""
    ts = [_args._tensor(t, "broadcast_tensors") for t in tensors]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in ts))
    return tuple(expand(t, shape) for t in ts)


# ---- diagonals ----------------------------------------------------------------------------
@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1, dim2 (offset > 0 above it), as the last dim."""
    x = _args._tensor(input, "diagonal")
    nd = x.ndim
    d1, d2 = _args._dim(dim1, nd), _args._dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(LX.diagonal, x, offset=int(offset), dim1=d1, dim2=d2)


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (of dims dim1, dim2 of the result) hold input's last dim."""
    x = _args._tensor(input, "diag_embed")
    nd = x.ndim + 1
    d1, d2 = _args._dim(dim1, nd), _args._dim(dim2, nd)
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
    g = x if x.ndim else reshape(x, (1,))
    return apply(LX.diagonal_backward, g, shape=tuple(shape), offset=int(offset),
                 dim1=d1, dim2=d2)


@public
def diag(input, diagonal=0):
    """1-D -> a 2-D matrix with input on the given diagonal; 2-D -> that diagonal."""
    x = _args._tensor(input, "diag")
    if x.ndim == 1:
        return diag_embed(x, diagonal, 0, 1)
    if x.ndim == 2:  # a copy (torch's DiagonalBackward0_copy), where diagonal() is a view
        return _conversion.clone(apply(LX.diagonal, x, offset=int(diagonal), dim1=0, dim2=1))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


# ---- meshgrid -------------------------------------------------------------------------------
@public(method=False)
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
    ts = [_args._tensor(t, "meshgrid") for t in tensors]
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    ts = [reshape(t, (-1,)) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * n
        view[i] = shape[i]
        out.append(expand(reshape(t, tuple(view)), shape))
    if swap:  # 'xy' is 'ij' of (y, x, ...) with the first two grids swapped back
        out[0], out[1] = out[1], out[0]
    return tuple(out)


@public
def rot90(input, k=1, dims=(0, 1)):
    """Rotation by 90 degrees k times in the plane of dims (from dims[0] toward dims[1]):
    flips and a transpose."""
    x = _args._tensor(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = x._data.ndim
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _args._dim(dims[0], nd), _args._dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k = k % 4
    if k == 1:
        return transpose(flip(x, d1), d0, d1)
    if k == 2:
        return flip(x, d0, d1)
    if k == 3:
        return flip(transpose(x, d0, d1), d1)
    return reshape(x, tuple(x._data.shape))  # a new tensor (torch: a clone)


@public
def diagflat(input, offset=0):
    """The flattened input on the offset-th diagonal of a square matrix."""
    x = _args._tensor(input, "diagflat")
    return diag(reshape(x, (-1,)), offset)


@public(method=False)
def block_diag(*tensors):
    """The tensors (0-d: 1x1, 1-d: one row, 2-d) along the diagonal of one matrix, zeros
    elsewhere, in their promoted dtype. Each block row is cat([zeros, block, zeros])."""
    ts = []
    for i, t in enumerate(tensors):
        t = _args._tensor(t, "block_diag", "tensors")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        ts.append(reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not ts:  # torch gives a (1, 0) tensor; here a result needs an input to copy
        raise RuntimeError("block_diag(): tapegrad needs at least one tensor")
    dt = ts[0]._data.dtype
    for t in ts[1:]:
        dt = _dt.as_dtype(_conversion.promote_types(dt, t._data.dtype))
    ts = [t if t._data.dtype == dt else t.to(dt) for t in ts]
    width = sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        r, c = t.shape
        z = [like(t, np.zeros((r, w), dt)) for w in (left, width - left - c)]
        rows.append(cat([z[0], t, z[1]], 1))
        left += c
    return cat(rows, 0)


@public
def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes along dim (they must add up to its length)."""
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}")
    return split(_args._tensor(input, "split_with_sizes"), sizes, dim)


def _atleast(n, name, tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], TensorBase)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        t = _args._tensor(t, name, "tensors")
        if t.ndim < n:
            if n == 3 and t.ndim == 2:
                t = unsqueeze(t, 2)
            elif n == 3 and t.ndim == 1:
                t = reshape(t, (1, -1, 1))
            else:
                t = reshape(t, (1,) * (n - t.ndim) + tuple(t.shape))
        out.append(t)
    return out[0] if one else tuple(out)


@public(method=False)
def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (0-d -> (1,)); one tensor in, one out."""
    return _atleast(1, "atleast_1d", tensors)


@public(method=False)
def atleast_2d(*tensors):
    """Each tensor with at least 2 dims ((n,) -> (1, n))."""
    return _atleast(2, "atleast_2d", tensors)


@public(method=False)
def atleast_3d(*tensors):
    """Each tensor with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast(3, "atleast_3d", tensors)


@public(function=False)
def resize_(self, *sizes, memory_format=None):
    """self reshaped to `sizes` in place, keeping its first elements in row-major order
    (see the module docstring for growing). No gradient: torch refuses tensors that
    require grad."""
    x = _args._tensor(self, "resize_")
    if x._rg:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(int(v) for v in (sizes[0] if len(sizes) == 1 and isinstance(
        sizes[0], (tuple, list)) else sizes))
    if any(v < 0 for v in shape):
        raise RuntimeError("numel: integer multiplication overflow")  # torch's message
    n = math.prod(shape)
    a = x._data
    store = _storage(a)
    if store is not None and store.size >= n:
        new = store[:n]  # the same memory: a later grow gets the old values back
    else:
        new = np.zeros(n, a.dtype)
        k = min(n, a.size)
        new[:k] = a.reshape(-1)[:k]
    x._data = new.reshape(shape)
    x._version_counter[0] += 1
    return x


def _storage(a):
    """The 1-D array `a` is the start of (a resized tensor's old memory), else `a`
    flattened when it is contiguous, else None."""
    base = a.base
    if (isinstance(base, np.ndarray) and base.flags.c_contiguous and a.flags.c_contiguous
            and base.dtype == a.dtype
            and base.__array_interface__["data"][0] == a.__array_interface__["data"][0]):
        return base.reshape(-1)
    return a.reshape(-1) if a.flags.c_contiguous else None


@public
def resize_as_(self, the_template, memory_format=None):
    """resize_ to the_template's shape."""
    return resize_(self, tuple(_args._tensor(the_template, "resize_as_", "the_template", 2).shape))


def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(int(s) for s in args[0])
    return tuple(int(s) for s in args)


# ---- reshapes --------------------------------------------------------------------
@public
def flatten(input, start_dim=0, end_dim=-1):
    x = _args._tensor(input)
    nd = x._data.ndim
    s, e = _args._dim(start_dim, nd), _args._dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if nd and s == e:
        return x
    return apply(S.flatten, x, start=s, end=e)


@public
def unflatten(input, dim, sizes):
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    sizes = tuple(int(s) for s in sizes)
    n = x._data.shape[d] if x._data.ndim else 1
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    if -1 in sizes and known and n % known == 0:
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif math.prod(sizes) != n or -1 in sizes:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({n}) in the input tensor")
    return apply(S.unflatten, x, axis=d, sizes=sizes)


@public
def squeeze(input, dim=None):
    x = _args._tensor(input)
    shape = x._data.shape
    nd = len(shape)
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        # NOTE: dims whose size is not 1 are left alone, as in PyTorch (no error).
        axes = tuple(sorted({a for a in (_args._dim(d, nd) for d in dims) if nd and shape[a] == 1}))
    return apply(S.squeeze, x, axis=axes)


@public
def unsqueeze(input, dim):
    x = _args._tensor(input)
    return apply(S.unsqueeze, x, axis=_args._dim(dim, x._data.ndim, extra=1))


@public
def repeat(input, *sizes):
    x = _args._tensor(input)
    reps = _sizes(sizes)
    if len(reps) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if builtins.any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(reps)}")
    return apply(S.repeat, x, reps=reps)


@public(aliases=('moveaxis',))
def movedim(input, source, destination):
    x = _args._tensor(input)
    nd = x._data.ndim
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    for name, given in (("source", src), ("destination", dst)):
        dims = [_args._dim(d, nd) for d in given]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    src = [_args._dim(d, nd) for d in src]
    dst = [_args._dim(d, nd) for d in dst]
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, tuple(order))


moveaxis = movedim


# ---- joining ---------------------------------------------------------------------
def _tensor_list(name, tensors):
    if isinstance(tensors, TensorBase):  # (not read as the sequence of its slices)
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of "
                        "Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:  # torch: cat's Python binding says ValueError, the others RuntimeError
        if name == "cat":
            raise ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, but found "
                            f"element of type {type(t).__name__} at pos {i}")
    return tensors


@public(out=("disjoint",), method=False, aliases=('concat', 'concatenate'))
def cat(tensors, dim=0, *, axis=None):
    """Join tensors along an existing dim: one node, each input gets its slice of g."""
    ts = _tensor_list("cat", tensors)
    # NOTE: PyTorch still skips legacy empty 1-D tensors (shape (0,)) in cat.
    if len(ts) > 1:
        kept = [t for t in ts if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
        ts = kept or ts[:1]
    first = ts[0]._data.shape
    nd = len(first)
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _args._dim(dim if axis is None else axis, nd)
    for i, t in enumerate(ts[1:], 1):
        s = t._data.shape
        if len(s) != nd:
            # torch's sentence first (programs print it), then the op and the shapes
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{len(s)} (cat: shapes {tuple(first)} and {tuple(s)})")
        for k in range(nd):
            if k != d and s[k] != first[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{first[k]} but got size {s[k]} for tensor number {i} in the list. "
                    f"(cat: shapes {tuple(first)} and {tuple(s)})")
    if len(ts) == 1:
        return apply(S.cat, ts[0], axis=d)
    # torch's result dtype, not NumPy's (which widens float16 with int16/32/64 to float32)
    want = functools.reduce(_dt.promote_types, [t._data.dtype for t in ts])
    ts = [t if t._data.dtype == want else _promotion._cast(t, want) for t in ts]
    return apply(S.cat, *ts, axis=d)


concat = concatenate = cat


@public(out=True, method=False)
def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim: input i gets g[..., i, ...]."""
    ts = _tensor_list("stack", tensors)
    first = ts[0]._data.shape
    for i, t in enumerate(ts[1:], 1):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t._data.shape)} at entry {i}")
    d = _args._dim(dim, len(first), extra=1)
    return apply(S.stack, *ts, axis=d)


@public(method=False)
def hstack(tensors):
    ts = _tensor_list("hstack", tensors)
    ts = [t.reshape(1) if t.ndim == 0 else t for t in ts]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@public(method=False)
def vstack(tensors):
    ts = _tensor_list("vstack", tensors)
    ts = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    return cat(ts, 0)


@public(out=True, method=False)
def dstack(tensors):
    """Stack along the third dim (1-D (n,) -> (1, n, 1), 2-D (m, n) -> (m, n, 1))."""
    ts = _tensor_list("dstack", tensors)
    ts = [t.reshape(1, -1, 1) if t.ndim < 2 else t.unsqueeze(-1) if t.ndim == 2 else t
          for t in ts]
    return cat(ts, 2)


@public(out=True, method=False)
def column_stack(tensors):
    """Columns side by side: 0-D and 1-D tensors become columns (n, 1), then cat on dim 1."""
    ts = _tensor_list("column_stack", tensors)
    ts = [t.reshape(-1, 1) if t.ndim < 2 else t for t in ts]
    return cat(ts, 1)


# ---- splitting (pieces are `narrow` / `select` nodes) ---------------------------------
@public
def narrow(input, dim, start, length):
    x = _args._tensor(input)
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _args._dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(start, TensorBase) and (start._data.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start, length = int(start), int(length)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply(S.narrow, x, axis=d, start=start, length=length)


@public
def select(input, dim, index):
    x = _args._tensor(input)
    if x._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _args._dim(dim, x._data.ndim)
    n = x._data.shape[d]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(x._data.shape)} at dimension {d}")
    return apply(S.select, x, axis=d, index=i % n)


@public(method=False)
def split(tensor, split_size_or_sections, dim=0):
    x = _args._tensor(tensor)
    d = _args._dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n or builtins.any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    else:
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
        if not sizes:
            sizes = [0]
    return _pieces(x, d, sizes, False, isinstance(split_size_or_sections, (list, tuple)))


def _pieces(x, d, sizes, squeeze, sizes_given=False):
    """The pieces of a split (unbind: squeeze), recorded as ONE node with an output per
    piece (shape.py `pieces_op`: its backward is linear in the number of pieces).
    Without recording, in forward mode (whose rules see one output per op), or for one
    piece, each piece is its own narrow/select."""
    if not sizes:  # unbind of an empty dim
        return ()
    if len(sizes) == 1 or not (x._rg and state.grad_enabled and state.dual is None):
        if squeeze:
            return tuple(apply(S.select, x, axis=d, index=i) for i in range(len(sizes)))
        out, start = [], 0
        for s in sizes:
            out.append(apply(S.narrow, x, axis=d, start=start, length=s))
            start += s
        return tuple(out)
    arrays = S._pieces_forward(x._data, d, sizes, squeeze)
    v = x._version_counter[0]
    # the pieces are views of x: they share its version counter (an in-place change of
    # x is a change of every piece), as narrow/select views do
    node = Node(S.pieces_op(len(sizes), squeeze, sizes_given), (x,),
                {"axis": d, "sizes": tuple(sizes), "squeeze": squeeze}, None, arrays,
                (v, v) if v else None, x._version_counter)
    out = []
    for k, a in enumerate(arrays):
        t = make(x._result_type, a, True, node)
        t._out = k + 1  # output k of a node with several (core/tensor_base.py)
        share_view_version(t, (x,), (x._data,))  # its version counter, `_base`; an
        out.append(t)  # in-place change of x gives it a stale history (ops/inplace.py)
    _tape.built(node, out)
    return tuple(out)


def _split_method(self, split_size, dim=0):
    """Tensor.split(split_size, dim): the method's argument is named split_size."""
    return split(self, split_size, dim)


def _split_along(name, dim, min_ndim):
    def split(input, indices_or_sections):
        x = _args._tensor(input, name)
        if x.ndim < min_ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} "
                               f"dimension, but got a tensor with {x.ndim} dimensions!")
        d = 0 if name == "hsplit" and x.ndim == 1 else dim
        if not isinstance(indices_or_sections, (int, list, tuple)):
            raise TypeError(f"{name}() received an invalid combination of arguments.")
        if isinstance(indices_or_sections, int) and (
                indices_or_sections == 0 or x.shape[d] % indices_or_sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {x.shape[d]} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return tensor_split(x, indices_or_sections, d)
    split.__doc__ = f"torch.{name}: tensor_split along dim {dim} (sections must divide it)."
    return split


hsplit = public(_split_along("hsplit", 1, 1), name="hsplit")
vsplit = public(_split_along("vsplit", 0, 2), name="vsplit")
dsplit = public(_split_along("dsplit", 2, 3), name="dsplit")


@public
def tensor_split(input, indices_or_sections, dim=0):
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(indices_or_sections, TensorBase):  # a 0-d tensor is a section count
        v = indices_or_sections._data
        indices_or_sections = int(v) if v.ndim == 0 else [int(i) for i in v.reshape(-1)]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [builtins.max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    out, start = [], 0
    for s in sizes:
        s = builtins.min(s, n - start)
        out.append(apply(S.narrow, x, axis=d, start=start, length=s))
        start += s
    return tuple(out)


@public
def chunk(input, chunks, dim=0):
    x = _args._tensor(input)
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _args._dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if n == 0:
        return tuple(apply(S.narrow, x, axis=d, start=0, length=0) for _ in range(chunks))
    return split(x, -(-n // chunks), d)


@public
def unbind(input, dim=0):
    x = _args._tensor(input)
    if x._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _args._dim(dim, x._data.ndim)
    return _pieces(x, d, [1] * x._data.shape[d], True)


# ---- reordering / masking ----------------------------------------------------------
@public
def flip(input, *dims_, dims=None):
    x = _args._tensor(input)
    if dims is not None and dims_:
        raise TypeError("flip() received an invalid combination of arguments: dims given "
                        "both by position and by keyword")
    dims = _sizes(dims_ if dims is None else (dims,))
    nd = x._data.ndim
    axes = tuple(_args._dim(d, nd) for d in dims)
    if len(set(axes)) != len(axes):
        dup = next(a for i, a in enumerate(axes) if a in axes[:i])
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    if nd == 0:
        return apply(S.flip, x, axis=())
    return apply(S.flip, x, axis=axes)


@public
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@public
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@public
def roll(input, shifts, dims=None):
    x = _args._tensor(input)
    nd = x._data.ndim
    if dims is None:
        if isinstance(shifts, (tuple, list)):
            if len(shifts) != 1:
                raise RuntimeError(f"roll: shifts ({len(shifts)}) and dims (0) must align")
            shifts = shifts[0]
        return apply(S.roll, x, shifts=int(shifts), axis=None)
    sh = tuple(int(s) for s in shifts) if isinstance(shifts, (tuple, list)) else (int(shifts),)
    dm = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(sh) != len(dm):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dm)}")
    return apply(S.roll, x, shifts=sh, axis=tuple(_args._dim(d, nd) for d in dm))


def _tri(op, name):
    def f(input, diagonal=0):
        x = _args._tensor(input)
        if x._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return apply(op, x, k=int(diagonal))
    f.__name__ = name
    f.__doc__ = (f"{'Lower' if name == 'tril' else 'Upper'} triangle of the last two dims "
                 f"(others zeroed); `diagonal` shifts the boundary. Its VJP is {name}(g).")
    return f


tril = public(_tri(S.tril, "tril"), name="tril")
triu = public(_tri(S.triu, "triu"), name="triu")


# ---- padding (torch.nn.functional.pad) -----------------------------------------------
_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """F.pad: `pad` lists (left, right) pairs starting from the LAST dim.

    constant mode is one table entry (negative widths crop). reflect / replicate /
    circular are gathers with a computed index per dim (`index_select`), so their
    backward adds the gradient of every copy back to its source element.
    """
    x = _args._tensor(input)
    pad = [int(p) for p in pad]
    nd = x._data.ndim
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    widths = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        widths[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        for (b, a), n in zip(widths, x._data.shape):
            if n + b + a < 0:
                raise RuntimeError(f"pad: the padding {tuple(pad)} crops dimension of size {n} "
                                   f"below zero (input shape {tuple(x._data.shape)})")
        return apply(S.pad, x, widths=tuple(widths), value=0 if value is None else value)
    if mode not in _NP_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (constant, reflect, "
                                  "replicate, circular)")
    if value not in (None, 0):
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    for d, (b, a) in enumerate(widths):
        if b == 0 and a == 0:
            continue
        n = x._data.shape[d]
        if mode == "reflect" and (b >= n or a >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({b}, {a}) at dimension {d} "
                               f"of input {list(x._data.shape)}")
        if mode == "circular":  # torch crops first, then wraps what remains
            idx = np.arange(n)[builtins.max(-b, 0):n - builtins.max(-a, 0)]
            idx = np.pad(idx, (builtins.max(b, 0), builtins.max(a, 0)), mode="wrap")
        else:
            idx = np.pad(np.arange(n), (builtins.max(b, 0), builtins.max(a, 0)),
                         mode=_NP_MODES[mode])
            idx = idx[builtins.max(-b, 0):len(idx) - builtins.max(-a, 0)]
        x = apply(I.index_select, x, axis=d, index=idx)
    return x


tril_ = public_inplace(tril, function=False)


triu_ = public_inplace(triu, function=False)


# ---- in-place shape changes: the tensor becomes a view of its own memory -----------------
def _restride(self, view):
    """`self` takes the shape `view(self)` gives (a view: no data moves). Under grad mode
    a tensor with history gets the view's node with the old value as its input (as
    torch's TBackward1 / UnsqueezeBackward1); that node is linear and shares memory with
    its input, so a later in-place change follows it back to the memory's owner."""
    tracked = state.grad_enabled and self._rg
    if tracked and self.grad_fn is None:
        raise RuntimeError(LEAF_ERROR)
    if not tracked:
        with grad_mode.recording_off():
            self._data = view(self)._data
        self._version_counter[0] += 1
        return self
    old = like(self, self._data, self._rg, self.grad_fn)
    old._out, old._fw = self._out, self._fw
    res = view(old)
    self._data = res._data
    self._version_counter[0] += 1
    _rebase(self, old, res.grad_fn, res)
    return self


@public(function=False)
def t_(self):
    """In-place t(): self becomes its transpose (a 0-d, 1-d or 2-d tensor)."""
    return _restride(self, t)


@public(function=False)
def transpose_(self, dim0, dim1):
    """In-place transpose of dims dim0, dim1."""
    return _restride(self, lambda x: transpose(x, dim0, dim1))


@public(function=False)
def squeeze_(self, dim=None):
    """In-place squeeze (all size-1 dims, or the given dim(s))."""
    return _restride(self, lambda x: squeeze(x, dim))


@public(function=False)
def unsqueeze_(self, dim):
    """In-place unsqueeze: a size-1 dim at `dim`."""
    return _restride(self, lambda x: unsqueeze(x, dim))


@public(method=False)
def broadcast_shapes(*shapes):
    """The broadcast shape of `shapes` (each a sequence of ints, or an int for (n,))."""
    res = []
    for i, shape in enumerate(shapes):
        shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        res = [1] * (len(shape) - len(res)) + res
        for k in range(-1, -len(shape) - 1, -1):
            a, b = res[k], shape[k]
            if a == 1:
                res[k] = b
            elif b != 1 and b != a:
                # torch names the argument by its tuple repr: (4,)
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b} at "
                                   f"{k}! Mismatching argument at index {i} had {shape}; but "
                                   f"expected shape should be broadcastable to {res}")
    return Size(res)


# ---- the copying twins of the views (torch.<view>_copy: the view, then a copy) ----------
@public(method=False)
def alias(input):
    """torch.alias: a view of the whole tensor (same shape, same memory)."""
    x = _args._tensor(input, "alias")
    return apply(S.reshape, x, shape=x._data.shape)


alias_copy = public_copy(alias)


def _view_any_strides(input, size):
    # torch.view_copy(input, size) takes any strides (it computes the view's values, never
    # a view), where view refuses a shape the strides cannot give
    if isinstance(size, (_dt.dtype, np.dtype)):
        return view(input, size)
    return reshape(input, size)


def _expand_to(input, size, *, implicit=False):
    return expand(input, size)  # torch.expand_copy's signature (implicit: no meaning here)


def _permute_to(input, dims):
    return permute(input, dims)  # torch.permute_copy's signature


def _split_by(input, split_size, dim=0):
    return split(input, split_size, dim)  # torch.split_copy's signature


view_copy = public_copy(_view_any_strides, name="view_copy")
expand_copy = public_copy(_expand_to, name="expand_copy")
permute_copy = public_copy(_permute_to, name="permute_copy")
transpose_copy = public_copy(transpose)
t_copy = public_copy(t)
diagonal_copy = public_copy(diagonal)
squeeze_copy = public_copy(squeeze)
unsqueeze_copy = public_copy(unsqueeze)


def _narrow_checked(input, dim, start, length):
    # torch's narrow_copy checks dim < ndim on its own (a RuntimeError) before narrow's
    # dim wrapping, which still answers a dim below -ndim (an IndexError)
    x = _args._tensor(input, "narrow_copy")
    if x._data.ndim and dim >= x._data.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.")
    return narrow(x, dim, start, length)


narrow_copy = public_copy(_narrow_checked, name="narrow_copy", method=True)
select_copy = public_copy(select)
split_copy = public_copy(_split_by, name="split_copy")
split_with_sizes_copy = public_copy(split_with_sizes)
unbind_copy = public_copy(unbind)


# ---- cartesian_prod, constant_pad_nd, unsafe_split/unsafe_chunk -----------------------------
@public(method=False)
def cartesian_prod(*tensors):
    """Every combination of one element from each 1-d tensor, one per row (itertools.
    product's order): the 'ij' meshgrid flattened and stacked; a single tensor is
    returned as it is."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    ts = [_args._tensor(t, "cartesian_prod") for t in tensors]
    for t in ts:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len({t._data.dtype for t in ts}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([flatten(g) for g in grids], 1)


_pad = pad  # (constant_pad_nd's argument `pad` hides the function)


@public(method=False)
def constant_pad_nd(input, pad, value=0):
    """Constant padding (negative widths crop): `pad` lists (before, after) pairs from
    the last dim, as F.pad's constant mode."""
    x = _args._tensor(input, "constant_pad_nd")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * x._data.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of "
                           "dimensions of the input. Pad length is {} while the input has {} "
                           "dimensions.".format(len(pad), x._data.ndim))
    return _pad(x, pad, "constant", value)


@public
def unsafe_split(input, split_size, dim=0):
    """split without torch's view tracking of the pieces (here: split itself)."""
    return split(_args._tensor(input, "unsafe_split"), int(split_size), dim)


@public
def unsafe_chunk(input, chunks, dim=0):
    """chunk without torch's view tracking of the pieces (here: chunk itself)."""
    return chunk(_args._tensor(input, "unsafe_chunk"), chunks, dim)

"""Public shape functions (PyTorch names and arguments) over the table in shape.py.

    flatten, unflatten, squeeze, unsqueeze, repeat, cat/concat, stack, split, chunk,
    unbind, narrow, select, flip, roll, tril, triu, movedim, pad (F.pad: constant,
    reflect, replicate, circular)

Each function checks its arguments the way PyTorch does (same error types, messages
naming the op and the shapes), translates `dim` to the table's non-negative `axis`,
and calls `apply`. reshape/view, expand, permute and transpose live in functions.py.
"""
import builtins
import functools
import math

import numpy as np

from .. import dtypes as _dt
from ..core import tape as _tape
from ..core.node import Node
from ..core.record import apply
from ..core.state import state
from ..core.tensor_base import TensorBase, make
from . import functions as F
from . import indexing as I
from . import promotion as P
from . import shape as S


def _dim(d, nd, extra=0):
    """Normalize a dim index for a tensor of `nd` dims (+`extra` for unsqueeze/stack)."""
    n = builtins.max(nd + extra, 1)
    d = int(d)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n if nd + extra else 0


def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(int(s) for s in args[0])
    return tuple(int(s) for s in args)


# ---- reshapes --------------------------------------------------------------------
def flatten(input, start_dim=0, end_dim=-1):
    x = F._tensor(input)
    nd = x._data.ndim
    s, e = _dim(start_dim, nd), _dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if nd and s == e:
        return x
    return apply(S.flatten, x, start=s, end=e)


def unflatten(input, dim, sizes):
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
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


def squeeze(input, dim=None):
    x = F._tensor(input)
    shape = x._data.shape
    nd = len(shape)
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        # NOTE: dims whose size is not 1 are left alone, as in PyTorch (no error).
        axes = tuple(sorted({a for a in (_dim(d, nd) for d in dims) if nd and shape[a] == 1}))
    return apply(S.squeeze, x, axis=axes)


def unsqueeze(input, dim):
    x = F._tensor(input)
    return apply(S.unsqueeze, x, axis=_dim(dim, x._data.ndim, extra=1))


def repeat(input, *sizes):
    x = F._tensor(input)
    reps = _sizes(sizes)
    if len(reps) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if builtins.any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(reps)}")
    return apply(S.repeat, x, reps=reps)


def movedim(input, source, destination):
    x = F._tensor(input)
    nd = x._data.ndim
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src = [_dim(d, nd) for d in src]
    dst = [_dim(d, nd) for d in dst]
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return F.permute(x, tuple(order))


moveaxis = movedim


# ---- joining ---------------------------------------------------------------------
def _tensor_list(name, tensors):
    if isinstance(tensors, TensorBase):
        tensors = list(tensors)  # a tensor is a sequence of its slices, as in PyTorch
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, but found "
                            f"element of type {type(t).__name__} at pos {i}")
    return tensors


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
    d = _dim(dim if axis is None else axis, nd)
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
    ts = [t if t._data.dtype == want else P._cast(t, want) for t in ts]
    return apply(S.cat, *ts, axis=d)


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim: input i gets g[..., i, ...]."""
    ts = _tensor_list("stack", tensors)
    first = ts[0]._data.shape
    for i, t in enumerate(ts[1:], 1):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t._data.shape)} at entry {i}")
    d = _dim(dim, len(first), extra=1)
    return apply(S.stack, *ts, axis=d)


def hstack(tensors):
    ts = _tensor_list("hstack", tensors)
    ts = [t.reshape(1) if t.ndim == 0 else t for t in ts]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    ts = _tensor_list("vstack", tensors)
    ts = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    return cat(ts, 0)


# ---- splitting (pieces are `narrow` / `select` nodes) ---------------------------------
def narrow(input, dim, start, length):
    x = F._tensor(input)
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d]
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


def select(input, dim, index):
    x = F._tensor(input)
    if x._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(x._data.shape)} at dimension {d}")
    return apply(S.select, x, axis=d, index=i % n)


def split(tensor, split_size_or_sections, dim=0):
    x = F._tensor(tensor)
    d = _dim(dim, x._data.ndim)
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
    return _pieces(x, d, sizes, False)


def _pieces(x, d, sizes, squeeze):
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
    v = x._version[0]
    # the pieces are views of x: they share its version counter (an in-place change of
    # x is a change of every piece), as narrow/select views do
    node = Node(S.pieces_op(len(sizes), squeeze), (x,),
                {"axis": d, "sizes": tuple(sizes), "squeeze": squeeze}, None, arrays,
                (v, v) if v else None, x._version)
    out = []
    for k, a in enumerate(arrays):
        t = make(x._result_type, a, True, node)
        t._out = k + 1  # output k of a node with several (core/tensor_base.py)
        t._version = x._version
        out.append(t)
    _tape.built(node, out)
    return tuple(out)


def _split_method(self, split_size, dim=0):
    """Tensor.split(split_size, dim): the method's argument is named split_size."""
    return split(self, split_size, dim)


def tensor_split(input, indices_or_sections, dim=0):
    x = F._tensor(input)
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d]
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


def chunk(input, chunks, dim=0):
    x = F._tensor(input)
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if n == 0:
        return tuple(apply(S.narrow, x, axis=d, start=0, length=0) for _ in range(chunks))
    return split(x, -(-n // chunks), d)


def unbind(input, dim=0):
    x = F._tensor(input)
    if x._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _dim(dim, x._data.ndim)
    return _pieces(x, d, [1] * x._data.shape[d], True)


# ---- reordering / masking ----------------------------------------------------------
def flip(input, *dims):
    x = F._tensor(input)
    dims = _sizes(dims)
    nd = x._data.ndim
    axes = tuple(_dim(d, nd) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}, but "
                           f"unique flip dims size={len(set(axes))}")
    if nd == 0:
        return apply(S.flip, x, axis=())
    return apply(S.flip, x, axis=axes)


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def roll(input, shifts, dims=None):
    x = F._tensor(input)
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
    return apply(S.roll, x, shifts=sh, axis=tuple(_dim(d, nd) for d in dm))


def _tri(op, name):
    def f(input, diagonal=0):
        x = F._tensor(input)
        if x._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return apply(op, x, k=int(diagonal))
    f.__name__ = name
    f.__doc__ = (f"{'Lower' if name == 'tril' else 'Upper'} triangle of the last two dims "
                 f"(others zeroed); `diagonal` shifts the boundary. Its VJP is {name}(g).")
    return f


tril = _tri(S.tril, "tril")
triu = _tri(S.triu, "triu")


# ---- padding (torch.nn.functional.pad) -----------------------------------------------
_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """F.pad: `pad` lists (left, right) pairs starting from the LAST dim.

    constant mode is one table entry (negative widths crop). reflect / replicate /
    circular are gathers with a computed index per dim (`index_select`), so their
    backward adds the gradient of every copy back to its source element.
    """
    x = F._tensor(input)
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
        idx = np.pad(np.arange(n), (builtins.max(b, 0), builtins.max(a, 0)), mode=_NP_MODES[mode])
        idx = idx[builtins.max(-b, 0):len(idx) - builtins.max(-a, 0)]
        x = apply(I.index_select, x, axis=d, index=idx)
    return x

"""Indexing ops: reading and writing parts of a tensor, each one table entry.

Reading (`getitem`, `gather`, `index_select`) is linear: out = P x for a 0/1 selection
matrix P. Its VJP is the transpose P^T g: scatter g into zeros of the input's shape,
ADDING where an element was read more than once (x[[0, 0]] sends 2 g to x[0]; this
is `np.add.at`, vectorized, no Python loop). That scatter is itself a table entry
(`getitem_backward`, `scatter_add`, `index_add`) whose VJP is the read again, so
create_graph=True works through indexing.

Writing (`setitem`, `scatter`, `masked_fill`) is linear in (input, value) jointly:
    out = x with out[key] = v
    dL/dx = g with zeros at the overwritten positions     dL/dv = g[key] (summed over
                                                          v's broadcasting by the engine)
Keyword `key` is a normalized index: ints, slices, None, Ellipsis and integer or
boolean ndarrays (ops/indexing.py normalize_key makes it from Tensors and lists).
"""
import numpy as np

from ...core.tensor_base import TensorBase
from ..registry import defop
from ._within_rule import within_rule as run
from .repeats import scatter_writes_twice, setitem_writes_twice
from .shape import pad


class SplitKey(tuple):
    """(basic, advanced): a key that mixes ints with index arrays, applied in two steps.

    PyTorch applies ints (and slices, None) first and the index arrays to the result;
    NumPy treats an int next to an array as one more advanced index, which moves the
    result's dims differently (x[1, ..., [0, 2]]). Reading x[basic][advanced] gives
    PyTorch's result; `basic` alone is a view, so writing through it works too.
    """

    __slots__ = ()


def read(a, key):
    """a[key] for arrays and Tensors (a SplitKey in its two steps). An index array gives
    a new contiguous array, as torch's (NumPy may lay its copy out otherwise, and `.view`
    of it would then be refused)."""
    if type(key) is SplitKey:
        out = a[key[0]][key[1]]
        return _dense(out)
    out = a[key]
    if type(out) is np.ndarray:
        return out if out.flags.c_contiguous or not is_advanced(key) else _dense(out)
    if type(a) is np.ndarray:
        # every index an int: NumPy returns a copied scalar; torch a 0-d view (x[0].add_(1)
        # changes x), which NumPy gives for the same key with `...` appended
        return a[(key if type(key) is tuple else (key,)) + (Ellipsis,)]
    return out


def _dense(out):
    # (a copy in C order; not np.ascontiguousarray, which makes a 0-d array 1-d)
    return out.copy() if type(out) is np.ndarray and not out.flags.c_contiguous else out


def write(a, key, v):
    """a[key] = v in place (a is an ndarray)."""
    if type(key) is SplitKey:
        a[key[0]][key[1]] = v
    else:
        a[key] = v


def add_at(a, key, v):
    """a[key] += v in place, adding once per occurrence of a repeated index."""
    if type(key) is SplitKey:
        np.add.at(a[key[0]], key[1], v)
    else:
        np.add.at(a, key, v)


def is_advanced(key):
    """Does the index contain arrays (so one element may be read more than once)?"""
    tk = type(key)
    if tk is SplitKey:
        return True
    if tk is tuple:
        for k in key:
            if type(k) is np.ndarray:
                return True
        return False
    return tk is np.ndarray


def _scatter_into_zeros(g, shape, key):
    out = np.zeros(shape, dtype=g.dtype)
    rows = _row_index(key)
    if rows is not None:
        add_rows(out, rows, g)  # x[idx] with one integer array (Embedding): fast path
    elif is_advanced(key):
        add_at(out, key, g)  # repeated indices add up
    else:
        out[key] = g  # basic indexing selects each element at most once
    return out


def _row_index(key):
    """The integer array of a key that picks whole rows (x[idx], x[idx, :]), else None."""
    if type(key) is tuple:
        if not key:
            return None
        for k in key[1:]:
            if not (k is Ellipsis or (type(k) is slice and k == slice(None))):
                return None
        key = key[0]
    if type(key) is np.ndarray and key.dtype.kind in "iu":
        return key
    return None


_MAX_ROUNDS = 32  # beyond this many repeats of one index, rounds stop paying off


def add_rows(out, idx, rows):
    """out[idx[k]] += rows[k] for every k, repeated indices adding up, in place.

    The reference is `np.add.at(out, idx, rows)`, which is exact but slow per element.
    Same result, vectorized: sort the indices and split them into rounds, round r
    holding the r-th occurrence of each index. Within a round the indices are
    distinct, so `out[idx_r] += rows_r` is one fancy-indexed add; the number of rounds
    is the largest multiplicity. Many repeats (a small vocabulary): one bincount over
    (row, column) pairs, summed in float64.
    """
    n = idx.size
    width = int(np.prod(out.shape[1:], dtype=np.int64))
    idx = idx.reshape(n)
    rows = rows.reshape((n,) + out.shape[1:])
    if n * width <= 4096:  # small: the sorting would cost more than it saves
        np.add.at(out, idx, rows)
        return out
    idx = np.where(idx < 0, idx + out.shape[0], idx)  # -1 and V-1 are the same row
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    rank = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    counts = np.bincount(rank)
    if len(counts) <= _MAX_ROUNDS:
        by_round = order[np.argsort(rank, kind="stable")]
        lo = 0
        for c in counts:
            sel = by_round[lo:lo + c]
            out[idx[sel]] += rows[sel]
            lo += c
        return out
    if out.dtype.kind == "f" and out.shape[0] * width <= 8_000_000:
        flat = (idx[:, None] * width + np.arange(width)).reshape(-1)
        total = np.bincount(flat, weights=rows.reshape(-1), minlength=out.shape[0] * width)
        out += total.reshape(out.shape).astype(out.dtype, copy=False)
        return out
    np.add.at(out, idx, rows)
    return out


# ---- x[key] and its transpose ----------------------------------------------------
def _getitem_node(node):
    # torch indexes left to right; the node is that of the last step that did something
    key = node.args.get("key")
    parts = key if isinstance(key, tuple) else (key,)
    last = "AliasBackward0"
    for k in parts:
        if isinstance(k, (bool, np.bool_)) or isinstance(k, (np.ndarray, list, TensorBase)):
            return "IndexBackward0"
        if isinstance(k, (int, np.integer)):
            last = "SelectBackward0"
        elif k is None:
            last = "UnsqueezeBackward0"
        elif isinstance(k, slice):
            last = "SliceBackward0"
    return last


getitem = defop("getitem", read, linear=True, promote=False, vjp=[
    lambda xp, g, ans, x, key: run(xp, getitem_backward, g, shape=tuple(x.shape), key=key)
],
    text="dx = zeros, g scatter-ADDED at the indices (repeats add)",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is",
    node=_getitem_node)

getitem_backward = defop(
    "getitem_backward", lambda g, shape, key: _scatter_into_zeros(g, shape, key),
    linear=True, promote=False, inputs=("g",),
    vjp=[lambda xp, gg, ans, g, shape, key: run(xp, getitem, gg, key=key)],
    doc="zeros(shape) with g added at key: the VJP of getitem",
    text="dg = g[key] (the forward of getitem)",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is")


# ---- x[key] = v (also index_put with accumulate) ---------------------------------
def _setitem_forward(x, v, key, accumulate=False):
    out = x.copy()
    if accumulate:
        add_at(out, key, v)
    else:
        write(out, key, v)
    return out


def _zero_at_forward(g, key):
    out = g.copy()
    write(out, key, 0)
    return out


# g with zeros at key: the VJP of an overwrite. It is a projection (its own adjoint).
zero_at = defop("zero_at", _zero_at_forward, linear=True, promote=False, inputs=("g",),
                vjp=[lambda xp, u, ans, g, key: run(xp, zero_at, u, key=key)],
                doc="g with zeros at key: the gradient of what a write overwrote",
                text="dg = g with zeros at key (a projection: its own adjoint)",
                hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is")


def _setitem_vjp_x(xp, g, ans, x, v, key, accumulate=False):
    if accumulate:
        return g
    # the old values at key were overwritten: no gradient reaches them
    return run(xp, zero_at, g, key=key)


def _setitem_vjp_v(xp, g, ans, x, v, key, accumulate=False):
    gv = read(g, key)
    nd = len(v.shape)
    if len(gv.shape) < nd:  # v had extra leading 1-dims (allowed, as in PyTorch)
        gv = xp.reshape(gv, (1,) * (nd - len(gv.shape)) + tuple(gv.shape))
    return gv


setitem = defop("setitem", _setitem_forward, linear=True, inputs=("x", "value"),
                vjp=[_setitem_vjp_x, _setitem_vjp_v],
                text="dx = g with x[key] zeroed (all of g if accumulate) ; dvalue = g[key]",
                hint=("linear: the rule only moves, copies or sums g, so it is finite whenever"
                      " g is"),
                strict=setitem_writes_twice,
                node="CopySlices")


# ---- gather / scatter along one dim ----------------------------------------------
def along(index, axis):
    """Full index tuple for `out[i][j][k] = x[index[i][j][k]][j][k]` (axis 0).

    The other positions range over index's own shape, so an index smaller than x in
    the other dims reads (or writes) only that corner, as PyTorch's gather does.
    """
    idx = list(np.indices(index.shape, sparse=True))
    idx[axis] = index
    return tuple(idx)


def _corner(a, shape):
    """a[:s0, :s1, ...]: the part of src that scatter reads."""
    if tuple(a.shape) == tuple(shape):
        return a
    return a[tuple(slice(0, s) for s in shape)]


def _src_vjp(xp, g, axis, index, src):
    """g for scatter's src: gather g back, zero-padded if src is larger than index."""
    gs = run(xp, gather, g, axis=axis, index=index)
    if tuple(src.shape) != tuple(index.shape):
        widths = tuple((0, s - i) for s, i in zip(src.shape, index.shape))
        gs = run(xp, pad, gs, widths=widths, value=0)
    return gs


def _gather_backward_forward(g, shape, axis, index):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, along(index, axis), g)  # repeated indices add up
    return out


gather = defop("gather", lambda x, axis, index: x[along(index, axis)], linear=True,
               promote=False, vjp=[lambda xp, g, ans, x, axis, index: run(
                   xp, gather_backward, g, shape=tuple(x.shape), axis=axis, index=index)],
               text="dx = zeros, g scatter-added at the gathered positions",
               hint=("linear: the rule only moves, copies or sums g, so it is finite whenever "
                     "g is"))

gather_backward = defop(
    "gather_backward", _gather_backward_forward, linear=True, promote=False, inputs=("g",),
    vjp=[lambda xp, u, ans, g, shape, axis, index: run(xp, gather, u, axis=axis, index=index)],
    doc="zeros(shape) with g added along index: the VJP of gather",
    text="dg = gather(g, axis, index)",
    hint=("linear: the rule only moves, copies or sums g, so it is finite whenever "
          "g is"))


def _scatter_add_forward(x, src, axis, index):
    out = x.copy()
    np.add.at(out, along(index, axis), _corner(src, index.shape))
    return out


scatter_add = defop("scatter_add", _scatter_add_forward, linear=True, inputs=("x", "src"), vjp=[
    lambda xp, g, ans, x, src, axis, index: g,
    lambda xp, g, ans, x, src, axis, index: _src_vjp(xp, g, axis, index, src),
],
    text="dx = g ; dsrc = g gathered at index",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is")


def _scatter_forward(x, src, axis, index):
    # NOTE: with repeated indices the value written is one of the candidates (here the
    # last); PyTorch leaves the choice unspecified.
    out = x.copy()
    out[along(index, axis)] = src if np.ndim(src) == 0 else _corner(src, index.shape)
    return out


def _scatter_vjp_x(xp, g, ans, x, src, axis, index):
    return run(xp, zero_at, g, key=along(index, axis))  # overwritten: no gradient


scatter = defop("scatter", _scatter_forward, linear=True, inputs=("x", "src"), vjp=[
    _scatter_vjp_x,
    lambda xp, g, ans, x, src, axis, index: _src_vjp(xp, g, axis, index, src),
],
    text="dx = g with the written positions zeroed ; dsrc = g gathered at index",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is",
    strict=scatter_writes_twice)


# ---- scatter_reduce(prod) of a src holding zeros: the product per target ---------------
def _scatter_prod_forward(src, shape, targets):
    out = np.ones(shape, src.dtype)
    np.multiply.at(out, targets, src)
    return out


def _scatter_prod_vjp(xp, g, ans, src, shape, targets):
    """d P[t] / d src_j = the product of the other src elements of t (torch's formula:
    P[t] / src_j, and for the only zero of its target the product of the rest)."""
    if xp is not np:
        raise NotImplementedError(
            "scatter_reduce(reduce='prod'): the second derivative with a zero in src is not "
            "supported (create_graph=True)")
    zero = src == 0
    zeros = np.zeros(shape, np.int64)
    np.add.at(zeros, targets, zero)
    rest = np.ones(shape, src.dtype)  # the product of the nonzero elements of each target
    np.multiply.at(rest, targets, np.where(zero, 1, src))
    with np.errstate(all="ignore"):
        other = np.where(zero, np.where(zeros[targets] == 1, rest[targets], 0),
                         ans[targets] / np.where(zero, 1, src))
    return g[targets] * other


scatter_prod = defop("scatter_prod", _scatter_prod_forward, inputs=("src",),
                     vjp=[_scatter_prod_vjp], promote=False, reads=["ans src"],
                     text="dsrc = g[target] * (product of the other src of the target)",
                     hint=("the product of the other elements is finite for finite src; "
                           "the rule divides only by nonzero src"))


# ---- index_select / index_add: a 1-D index along one dim ----------------------------
def _index_add_forward(x, src, axis, index, alpha=1):
    out = x.copy()
    s = np.moveaxis(src, axis, 0)
    if alpha != 1:
        # alpha in the source's dtype, wrapping as torch does (uint8 alpha=-1 is 255)
        s = s * (np.asarray(alpha).astype(s.dtype) if s.dtype.kind in "iu" else alpha)
    add_rows(np.moveaxis(out, axis, 0), index, s)
    return out


index_add = defop("index_add", _index_add_forward, linear=True, inputs=("x", "source"), vjp=[
    lambda xp, g, ans, x, src, axis, index, alpha=1: g,
    lambda xp, g, ans, x, src, axis, index, alpha=1:
        run(xp, index_select, g, axis=axis, index=index) * alpha,
],
    text="dx = g ; dsource = alpha * g.index_select(axis, index)",
    hint=("index_add's rule moves g (dsource scaled by alpha), so it is finite whenever the "
          "incoming gradient is"))


def _index_select_backward_forward(g, shape, axis, index):
    out = np.zeros(shape, dtype=g.dtype)
    add_rows(np.moveaxis(out, axis, 0), index, np.moveaxis(g, axis, 0))
    return out


index_select = defop("index_select", lambda x, axis, index: np.take(x, index, axis=axis),
                     linear=True, promote=False, vjp=[lambda xp, g, ans, x, axis, index: run(
                         xp, index_select_backward, g, shape=tuple(x.shape), axis=axis,
                         index=index)],
                     text="dx = zeros, g rows index_add-ed at the indices (repeats add)",
                     hint=("linear: the rule only moves, copies or sums g, so it is finite "
                           "whenever g is"))

index_select_backward = defop(
    "index_select_backward", _index_select_backward_forward, linear=True, promote=False,
    inputs=("g",), vjp=[lambda xp, u, ans, g, shape, axis, index: run(
        xp, index_select, u, axis=axis, index=index)],
    doc="zeros(shape) with the rows of g added at index: the VJP of index_select",
    text="dg = index_select(g, axis, index)",
    hint=("linear: the rule only moves, copies or sums g, so it is finite "
          "whenever g is"))


# ---- masked_fill: where(mask, value, x) -----------------------------------------------
def _masked_fill_forward(x, value, mask):
    return np.where(mask, value, x).astype(x.dtype, copy=False)


masked_fill = defop("masked_fill", _masked_fill_forward, linear=True, inputs=("x", "value"),
                    vjp=[
                        lambda xp, g, ans, x, value, mask: xp.where(mask, 0.0, g),
                        lambda xp, g, ans, x, value, mask: xp.where(mask, g, 0.0),
                    ],
                    text="dx = g where not mask else 0 ; dvalue = sum of g where mask",
                    hint=("linear: the rule only moves, copies or sums g, so it is finite "
                          "whenever g is"))


# ---- as_strided: a view of the input's storage ---------------------------------------
def storage_of(a):
    """(the 1-D storage a lives in, a's offset in it, the storage position of each of a's
    elements): a itself when it owns its memory, else the contiguous array it is a NumPy
    view of (a transpose, a slice, also a contiguous one), as torch's storage is the base's. When a lives
    in no such array (a view of a view with gaps), a C-ordered copy of a."""
    item = a.dtype.itemsize
    base = a.base
    while isinstance(base, np.ndarray) and not base.flags.owndata and isinstance(
            base.base, np.ndarray):
        base = base.base
    if (not isinstance(base, np.ndarray) or base.dtype != a.dtype
            or not base.flags.c_contiguous or any(st % item for st in a.strides)):
        return a.reshape(-1), 0, np.arange(a.size, dtype=np.int64).reshape(a.shape)
    off = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    pos = np.full(a.shape, off, np.int64)
    for k, (m, st) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = m
        pos = pos + (np.arange(m, dtype=np.int64) * (st // item)).reshape(shape)
    return base.reshape(-1), int(off), pos


def _as_strided_forward(x, size, stride, offset, pick):
    """The elements of x's storage at offset + sum(i_k * stride_k): a NumPy view of that
    storage (writes through it reach x, as torch's). `pick` (x's row-major element at
    each output position, -1 outside x) is for the rules."""
    store = storage_of(x)[0]
    item = x.dtype.itemsize
    if 0 in size or not store.size:
        return np.zeros(size, x.dtype)
    out = np.ndarray(size, x.dtype, buffer=store, offset=offset * item,
                     strides=tuple(s * item for s in stride))
    if any(s == 0 and n > 1 for n, s in zip(size, stride)):
        out.flags.writeable = False  # one memory location, several elements: torch
        # refuses in-place writes (ops/inplace.py's OVERLAP_ERROR)
    return out


def _as_strided_scatter(g, shape, pick):
    """zeros(shape) with g added at the picked elements (repeats add; -1 skipped)."""
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=g.dtype)
    inside = pick >= 0
    np.add.at(out, pick[inside], np.asarray(g)[inside])
    return out.reshape(shape)


def _as_strided_gather(u, pick):
    """u's elements at pick (row-major), 0 where pick is -1."""
    flat = np.asarray(u).reshape(-1)
    if not flat.size:
        return np.zeros(pick.shape, u.dtype)
    return np.where(pick >= 0, flat[np.maximum(pick, 0)], 0).astype(u.dtype, copy=False)


_LINEAR_HINT = "linear: the rule only moves, copies or sums g, so it is finite whenever g is"

as_strided = defop(
    "as_strided", _as_strided_forward, linear=True, promote=False,
    vjp=[lambda xp, g, ans, x, size, stride, offset, pick: run(
        xp, as_strided_backward, g, shape=tuple(x.shape), pick=pick)],
    jvp=lambda xp, tangents, ans, x, size, stride, offset, pick: run(
        xp, as_strided_gather, tangents[0], pick=pick),
    text="dx = zeros, g added at the input element each output element views (repeats add)",
    hint=_LINEAR_HINT)

as_strided_backward = defop(
    "as_strided_backward", _as_strided_scatter, linear=True, promote=False, inputs=("g",),
    vjp=[lambda xp, u, ans, g, shape, pick: run(xp, as_strided_gather, u, pick=pick)],
    doc="zeros(shape) with g added at pick: the VJP of as_strided",
    text="dg = u at the picked elements", hint=_LINEAR_HINT)

as_strided_gather = defop(
    "as_strided_gather", _as_strided_gather, linear=True, promote=False,
    vjp=[lambda xp, g, ans, u, pick: run(xp, as_strided_backward, g, shape=tuple(u.shape),
                                         pick=pick)],
    doc="u's elements at pick, 0 where pick is -1: as_strided's values as a copy",
    text="du = zeros, g added at pick", hint=_LINEAR_HINT)

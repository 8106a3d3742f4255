"""Sorting and searching: sort, argsort, topk, kthvalue, searchsorted, bucketize,
unique, unique_consecutive."""
import builtins
import math

import numpy as np

from ..core import tape as _tape
from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from . import _args, _selection_order as _order, shape as _shape
from .public import public
from .return_types import structseq
from .rules import indexing as I


def _int_result(ref, arr, out_int32):
    return like(ref, arr.astype(np.int32 if out_int32 else np.int64))


@public(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value, the index where it would be inserted to keep each row of
    `sorted_sequence` sorted (the first such index; the last with right=True)."""
    if not isinstance(sorted_sequence, TensorBase):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' (position 1) must be "
                        f"Tensor, not {type(sorted_sequence).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    if sorter is not None:
        seq = np.take_along_axis(seq, _args._data(sorter), -1)
    scalar = not isinstance(input, TensorBase)
    v = np.asarray(input) if scalar else input._data
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = np.searchsorted(seq.reshape(-1), v, side=how)
    else:
        if scalar or seq.shape[:-1] != v.shape[:-1]:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension "
                               f"or the first N-1 dimensions of boundaries tensor and input "
                               f"value tensor must match, but we got boundaries tensor "
                               f"{list(seq.shape)} and input value tensor {list(v.shape)}")
        rows = math.prod(seq.shape[:-1])     # explicit: -1 cannot be inferred when empty
        rows_s = seq.reshape(rows, seq.shape[-1])
        rows_v = v.reshape(rows, v.shape[-1])
        out = np.empty(rows_v.shape, dtype=np.int64)
        for i in range(rows):
            out[i] = np.searchsorted(rows_s[i], rows_v[i], side=how)
        out = out.reshape(v.shape)
    return _int_result(sorted_sequence, np.asarray(out), out_int32)


@public(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value given sorted 1-D `boundaries`: searchsorted with the
    arguments swapped (right=False: boundaries[i-1] < v <= boundaries[i])."""
    b = boundaries._data if isinstance(boundaries, TensorBase) else None
    if b is None:
        raise TypeError(f"bucketize(): argument 'boundaries' (position 2) must be Tensor, not "
                        f"{type(boundaries).__name__}")
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    out = np.searchsorted(b, _args._data(input), side="right" if right else "left")
    ref = input if isinstance(input, TensorBase) else boundaries
    return _int_result(ref, np.asarray(out), out_int32)


def _unique_dim(a, dim):
    """unique's dim, wrapped; torch refuses slices along it that are empty."""
    d = _args._dim(dim, a.ndim)
    if any(k == 0 for i, k in enumerate(a.shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                           "unique cannot be applied")
    return d


@public
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive values (or slices along dim) kept once; with the
    index of each element's run (inverse) and the runs' lengths (counts)."""
    x = _args._tensor(input, "unique_consecutive")
    a = x._data
    if dim is None:
        flat = a.reshape(-1)
        start = np.ones(flat.size, dtype=bool)
        start[1:] = flat[1:] != flat[:-1]
        values = flat[start]
        run = np.cumsum(start) - 1
        inverse = run.reshape(a.shape)
    else:
        d = _unique_dim(a, dim)
        n = a.shape[d] if a.ndim else 1
        # explicit sizes: -1 cannot be inferred from an empty array
        m = np.moveaxis(a, d, 0).reshape(n, math.prod(a.shape) // n if n else 0)
        start = np.ones(m.shape[0], dtype=bool)
        start[1:] = (m[1:] != m[:-1]).any(axis=1)
        values = np.take(a, np.nonzero(start)[0], axis=d)
        inverse = np.cumsum(start) - 1
    counts = np.diff(np.append(np.nonzero(start)[0], start.size))
    out = like(x, values)
    if not (return_inverse or return_counts):
        return out
    res = (out,)
    if return_inverse:
        res += (like(x, inverse.astype(np.int64)),)
    if return_counts:
        res += (like(x, counts.astype(np.int64)),)
    return res


sort_result = structseq("sort", ["values", "indices"])
topk_result = structseq("topk", ["values", "indices"])
kthvalue_result = structseq("kthvalue", ["values", "indices"])


# ---- sorting: integer indices, values through gather -----------------------------------
def _argsort(a, axis, descending):
    """Stable argsort; descending keeps equal elements in order and puts NaN first
    (PyTorch sorts NaN as the largest value)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    r = np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    return n - 1 - r


@public(out=True)
def argsort(input, dim=-1, descending=False, stable=False):
    x = _args._tensor(input)
    if x._data.ndim == 0:
        return _args._int64(x, 0)
    return _args._int64(x, _tape.host(_sort_index, x._data, _args._dim(dim, x._data.ndim),
                                      bool(descending)))


# the indices through tape.host: a tg.compile capture records them as a step (top-k
# sampling, sorting inside a compiled function)
def _sort_index(a, d, descending):
    return _argsort(a, d, descending).astype(np.int64, copy=False)


def _topk_index(a, d, k, largest, sorted):
    full = _argsort(a, d, largest)
    idx = full[(slice(None),) * d + (slice(0, k),)].astype(np.int64)
    if k:
        _torch_ties(a, full, idx, d, k, lambda ranks: _order.topk_positions(
            ranks, k, largest, sorted))
    return idx


@public(out=True)
def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices); values = gather(input, dim, indices), so they are differentiable."""
    x = _args._tensor(input)
    if x._data.ndim == 0:
        return sort_result(_shape.reshape(x, ()) if x._rg else x, _args._int64(x, 0))
    d = _args._dim(dim, x._data.ndim)
    idx = _tape.host(_sort_index, x._data, d, bool(descending))
    return sort_result(apply(I.gather, x, axis=d, index=idx), _args._int64(x, idx))


def _torch_ties(a, full, idx, d, k, positions, only_last=False):
    """Where a row's selected values (the first k of the stable order `full`, or only the
    k-th with only_last) have an equal elsewhere in it, torch's unstable selection picks
    other indices than a stable sort: replay it on those rows (ops/_selection_order.py)
    and write its indices into idx in place."""
    n = a.shape[d]
    rows = np.moveaxis(np.take_along_axis(a, full, d), d, -1).reshape(-1, n)
    same = rows[:, 1:] == rows[:, :-1]
    if rows.dtype.kind == "f":
        same |= np.isnan(rows[:, 1:]) & np.isnan(rows[:, :-1])
    if only_last:  # the k-th equal to a neighbour
        tied = same[:, k - 1:k].any(1) | (same[:, k - 2:k - 1].any(1) if k > 1 else False)
    else:
        tied = same[:, :builtins.min(k, n - 1)].any(1)
    if not tied.any():
        return
    values = np.moveaxis(a, d, -1).reshape(-1, n)
    moved = np.moveaxis(idx, d, -1)
    out = moved.reshape(-1, idx.shape[d]).copy()
    for r in np.flatnonzero(tied):
        ranks = np.unique(values[r], return_inverse=True)[1].reshape(-1).tolist()
        out[r] = positions(ranks)
    idx[...] = np.moveaxis(out.reshape(moved.shape), -1, d)


@public(out=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) along dim, in order; values differentiable."""
    x = _args._tensor(input)
    nd = x._data.ndim
    d = _args._dim(dim, nd)
    n = x._data.shape[d] if nd else 1
    k = int(k)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if nd == 0:
        return topk_result(_shape.reshape(x, ()), _args._int64(x, 0))
    idx = _tape.host(_topk_index, x._data, d, k, bool(largest), bool(sorted))
    return topk_result(apply(I.gather, x, axis=d, index=idx), _args._int64(x, idx))


@public(out=("disjoint", "exact"))
def kthvalue(input, k, dim=-1, keepdim=False):
    x = _args._tensor(input)
    d = _args._dim(dim, x._data.ndim)
    n = x._data.shape[d] if x._data.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if x._data.ndim == 0:
        return kthvalue_result(_shape.reshape(x, ()), _args._int64(x, 0))
    full = _argsort(x._data, d, False)
    idx = full[(slice(None),) * d + (slice(k - 1, k),)].astype(np.int64)
    _torch_ties(x._data, full, idx, d, k, lambda ranks: [_order.kth_position(ranks, k - 1)],
                only_last=True)
    vals = apply(I.gather, x, axis=d, index=idx.astype(np.int64))
    if not keepdim:
        vals, idx = _shape.reshape(vals, np.squeeze(idx, d).shape), np.squeeze(idx, d)
    return kthvalue_result(vals, _args._int64(x, idx))


@public
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct values (always sorted here), optionally the inverse map and counts."""
    x = _args._tensor(input)
    a = x._data
    if dim is None:
        res = np.unique(a, return_inverse=return_inverse, return_counts=return_counts)
    else:
        d = _unique_dim(a, dim)
        res = np.unique(a, return_inverse=return_inverse, return_counts=return_counts, axis=d)
    if not (return_inverse or return_counts):
        return like(x, res)
    res = list(res)
    out = [like(x, res[0])]
    k = 1
    if return_inverse:
        inv = res[k]
        out.append(_args._int64(x, inv.reshape(a.shape) if dim is None else inv.reshape(-1)))
        k += 1
    if return_counts:
        out.append(_args._int64(x, res[k]))
    return tuple(out)


@public
def msort(input):
    """input sorted along its first dim (the values of sort(input, 0))."""
    x = _args._tensor(input, "msort")
    return sort(x, 0).values if x._data.ndim else sort(x).values

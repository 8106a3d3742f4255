"""Data-free stand-ins for values a recorded node does not need (PyTorch saves only what
a backward formula reads).

A node keeps its output array (`ans`) and its input tensors. When no rule of the op
reads `ans` (matmul, linear: declared by `reads`, ops/registry.py) or an input's values
(add, sub: `edges_only`), keeping them only keeps memory alive: in `x @ W + b` the
product's array would live until backward although nothing reads it. Such a value is
replaced by a read-only, zero-strided array of the same shape and dtype (`stub`): shape
and dtype checks, the in-place version check and the walk see what they saw before;
no memory is held. Only large arrays (`MIN_BYTES`, read as `standin.MIN_BYTES` at each
use, so a test can set it to 0): for small ones the stand-in costs more time than the
memory is worth.

A stand-in of a floating or complex dtype holds NaN (integers and bools: 0). Nothing
may read its values; an op whose `reads`/`edges_only` declaration is wrong then gives
NaN gradients for large arrays, which anomaly mode and any test notice, instead of
plausible zeros (tests/test_standin.py runs the op database with stand-ins everywhere).

Measured (W3 MLP 784-256-128-10 at batch 4096, bench/run.py (h), 1 thread): peak RSS
growth over 5 steps 28.5 -> 22.3 MiB (hand-written NumPy: 21.7 MiB): the matmul
nodes held each product x @ W until backward.
"""
import numpy as np

from .tensor_base import TensorBase, make

MIN_BYTES = 1 << 16
_STUBS = {}  # (shape, dtype) -> the stand-in array of that shape (made once)


def stub(a):
    """A read-only array of a's shape and dtype that holds no memory (its values are NaN,
    0 for integer and bool dtypes)."""
    key = (a.shape, a.dtype)
    s = _STUBS.get(key)
    if s is None:
        if len(_STUBS) > 256:  # many shapes: keep the cache small
            _STUBS.clear()
        s = _STUBS[key] = np.broadcast_to(_poison(a.dtype), a.shape)
    return s


def _poison(dtype):
    """The one value a stand-in repeats: NaN where the dtype has one (complex: in both
    parts), so a rule that reads it makes NaN, not a plausible zero gradient."""
    v = np.zeros((), dtype)
    if dtype.kind == "f":
        v[()] = np.nan
    elif dtype.kind == "c":
        v[()] = complex(np.nan, np.nan)
    return v


def is_stub(a):
    """Is `a` a stand-in (tools showing values, e.g. anomaly mode, skip it)?"""
    return isinstance(a, np.ndarray) and _STUBS.get((a.shape, a.dtype)) is a


def value_key(t):
    """What names a tensor's value where stand-ins may be about: a non-leaf by its node
    and output number (an `edges_only` node holds a stand-in tensor for a large input,
    another object with the same history), a leaf by itself. The key holds ids: the
    caller keeps the tensors and nodes it names alive while it uses the keys."""
    p = t.grad_fn
    return id(t) if p is None else (id(p), t._out)


def edges(inputs):
    """The inputs an `edges_only` node keeps: each large non-leaf input replaced by a
    tensor with its history, flags, version counter, shape and dtype but no values.
    Leaves stay themselves (the walk keys their gradients by the tensor)."""
    out = None
    for i, t in enumerate(inputs):
        if (isinstance(t, TensorBase) and t.grad_fn is not None
                and t._data.nbytes >= MIN_BYTES):
            if out is None:
                out = list(inputs)
            s = out[i] = make(type(t), stub(t._data), t._rg, t.grad_fn)
            s._out = t._out
            s._version_counter = t._version_counter  # shared: in-place changes of t are still seen
            s._hooks = t._hooks
            s.name = t.name
    return inputs if out is None else tuple(out)

"""Recording: `apply` runs one op of the derivative table and records its Node.

    apply(op, *inputs, **args) -> result tensor

runs `op.forward` on the inputs' arrays and, when grad mode is on and some input
requires grad, gives the result a Node (node.py): the op, the input tensors, the
arguments, the values the forward saved, the output array. Inputs are tensors,
Python numbers (weakly typed: a float32 tensor times 2.5 stays float32, as in
PyTorch) or constant arrays (masks, indices).

An op whose forward returns `(out, saved)` (declared `extra=True`) keeps `saved`, a
dict, for its rules; `apply_saved` also hands that dict to the caller (max(dim) returns
the argmax indices its forward found).
"""
import numpy as np

from .. import dtypes as _dt
from . import cuts
from . import opmath as _opmath
from . import standin as _standin
from .node import Node
from .rebase import share_view_version
from .standin import edges as _edges, stub as _stub
from .state import anywhere, state
from .tensor_base import TensorBase, make

_ndarray = np.ndarray
_float64 = np.dtype("float64")
_float32 = np.dtype("float32")
_float16 = np.dtype("float16")


def apply_saved(op, *inputs, **args):
    """(result, saved): `apply`, also returning the values the forward saved (or None)."""
    state.last_saved = None
    res = apply(op, *inputs, **args)
    saved, state.last_saved = state.last_saved, None
    return res, saved


def apply(op, *inputs, **args):
    """Run `op` on the inputs; the result, with a Node if a gradient will be needed."""
    rg = False
    first = None
    arrays = []
    changed = False  # has any input been modified in place before? (rare)
    for t in inputs:
        if isinstance(t, TensorBase):
            arrays.append(t._data)
            if first is None:
                first = t
            if t._version_counter[0]:
                changed = True
            if t._rg:
                rg = True
        else:
            arrays.append(t)
    given = arrays  # (a tg.compile capture records the given arrays; its replay casts)
    if op.ints_to_float and (first is None or first._data.dtype.kind != "f"):
        arrays = in_compute_dtype(arrays)  # exp(int tensor): computed in the default dtype
    if first is not None and first._data.dtype is _float16 and _opmath.applies(op, arrays, args):
        # float16 is computed in float32 and rounded once, as PyTorch's opmath (core/opmath.py)
        out = op.forward(*_opmath.widen(arrays), **args)
        if op.has_extra:
            out = (_opmath.narrow(out[0]), out[1])
        else:
            out = _opmath.narrow(out)
    else:
        out = op.forward(*arrays, **args)
    saved = None
    if op.has_extra:
        out, saved = out
        state.last_saved = saved  # for apply_saved (one slot per thread, read at once)
    if type(out) is not _ndarray:
        out = np.asarray(out)
    if op.promote_default and out.dtype is not _float32:
        out = keep_default_dtype(out, arrays)
    record = rg and state.grad_enabled and op.differentiable
    res = make(first._result_type, out, record, None)
    if op.linear and out.base is not None:
        share_view_version(res, inputs, given)
    if record:
        versions = None  # None: every input (and the output) is at version 0
        if changed:  # (every op on a parameter after an optimizer step)
            # a loop, not a generator expression: tuple(genexpr) is a generator object
            # and a call per element in Python 3.11
            vs = []
            for t in inputs:
                vs.append(t._version_counter[0] if isinstance(t, TensorBase) else None)
            vs.append(res._version_counter[0])
            versions = tuple(vs)
        # Values no rule reads are not kept (core/standin.py): the output array of an op
        # whose rules never read `ans` (matmul, linear), the large non-leaf inputs of
        # add/sub. A node with saved values keeps `ans` (a saved array may BE the output:
        # the in-place check compares them). MIN_BYTES is read from the module (one
        # attribute lookup, only on this path) so tests can set it to 0.
        ans = out
        if not op.keeps_ans and saved is None and out.nbytes >= _standin.MIN_BYTES:
            ans = _stub(out)
        res.grad_fn = Node(op, _edges(inputs) if op.edges_only else inputs, args, saved, ans,
                           versions, res._version_counter)
    elif rg and state.no_grad_block is not None:  # the user's no_grad block cuts here
        cuts.note_no_grad(inputs, state.no_grad_block)
    if anywhere.duals and state.dual is not None:
        state.dual.propagate(op, inputs, args, saved, res)
    if anywhere.tapes and state.tape is not None:  # tg.compile is capturing (core/tape.py)
        state.tape.op(op, inputs, given, args, out, saved, res)
    return res


def in_compute_dtype(arrays):
    """The arrays of an op declared `promote="float"` (ops/registry.py: exp, sin, sqrt,
    ...), with integer and bool arrays cast to the default dtype when no array is
    floating: PyTorch casts them BEFORE computing. NumPy would compute bool, int8 and
    uint8 in float16 (tanh(True) 0.7617, torch 0.7616; exp of a uint8 image off by 1e-4)
    and int16/32/64 in float64 (sin(2**31 - 1) is -0.7249; torch computes sin of the
    float32 value 2**31: -0.9713); casting NumPy's result afterwards cannot undo either.
    Only called when the first tensor is not floating: the hot path never gets here."""
    cast = None
    for a in arrays:
        if type(a) is _ndarray:
            k = a.dtype.kind
            if k == "f":
                return arrays  # a floating input decides the dtype
            if k in "biu":
                cast = True
    if cast is None:
        return arrays
    default = _dt.get_default_dtype()
    return [a.astype(default) if type(a) is _ndarray and a.dtype.kind in "biu" else a
            for a in arrays]


def keep_default_dtype(out, arrays):
    """`out` of an op whose output is not float32, cast to PyTorch's result dtype where
    NumPy widened: float64 from float32 with an integer array (torch keeps float32) and
    float64/float16 from integer and bool inputs alone are cast to the default dtype.
    The op is never run again: ops that compute a float from integers declare
    `promote="float"` and get their inputs cast before they run (`in_compute_dtype`);
    this cast is the safety net for an entry that does not declare it.

    A floating input decides the dtype as before: float64 from a float64 input stays."""
    d = out.dtype
    if d == _float64:
        for a in arrays:
            if type(a) is _ndarray and a.dtype == _float64:
                return out
    elif d == _float16:
        for a in arrays:
            if type(a) is _ndarray and a.dtype.kind == "f":
                return out
    else:
        return out
    default = _dt.get_default_dtype()
    return out if d == default else out.astype(default)

"""In-place ops (`add_`, `mul_`, `+=`, `zero_`, `copy_`, ...) and their safety rules.

An in-place op writes its result into the tensor's existing array. No new derivative
code is needed: the result is computed by the SAME table entries as the out-of-place
op, then copied into place. What is special is bookkeeping:

1. Under `no_grad` (or when nothing requires grad) the array is simply overwritten
   (NumPy `out=`: no temporary) and the version counter `t._version_counter[0]` goes up.
2. A leaf that requires grad may not be changed in place while grad mode is on
   (its `.grad` would no longer describe the value it holds): RuntimeError, as PyTorch.
3. Otherwise the history is REBASED: a new tensor object `old` takes over the tensor's
   old `grad_fn`, the op's node gets `old` as its input, and the tensor's `grad_fn`
   becomes that node. `old` keeps a copy of the old values only if the op's backward
   rule reads them (the table entry's `saves`); `add_`/`sub_` keep none.
4. Every in-place op bumps the version counter. A node that saved this tensor (as an
   input or as its output) recorded the version it saw; backward compares and raises
   "one of the variables needed for gradient computation has been modified by an
   inplace operation" instead of silently using the new values.

Views (reshape, permute, slicing...: linear ops whose output is a NumPy view of the
input) share their base's version counter. Changing a view in place changes its base:
the tensor owning the memory gets the new history `where(covered, V^T(new), old)` (V^T
is the view op's own VJP rule; PyTorch calls this CopySlices), and every view of it a
fresh view node, so all of them describe their new values. A view of a leaf that
requires grad may not be changed under grad mode (RuntimeError, as PyTorch).
Views are found through the graph; a view made without history (of a tensor that does
not require grad) is traced to its base by `_base` (core/rebase.py) and its elements by
address (`_rebase_plain_base`). A piece of split/unbind may not be changed in place, nor
used after its base was (torch's errors).
"""

import numpy as np
import weakref
from . import _args
from .rules import indexing as I, pointwise as E
from .xp import namespace as _xp
from .. import dtypes as _dt
from ..core import grad_mode, rebase
from ..core import tape as _tape
from ..core.engine import sum_to
from ..core.hooks import RetainGrad
from ..core.record import apply
from ..core.state import state
from ..core.tensor_base import TensorBase, like
from .registry import Op


LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


VIEW_LEAF_ERROR = ("a view of a leaf Variable that requires grad is being used in an "
                   "in-place operation.")


OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor "
                 "refers to a single memory location. Please clone() the tensor before "
                 "performing the operation.")


def _cast_error(src, dst):
    return RuntimeError(f"result type {_args._tname(src)} can't be cast to the desired output type "
                        f"{_args._tname(dst)}")


def _shape_error(self_shape, shape):
    return RuntimeError(f"output with shape {list(self_shape)} doesn't match the broadcast "
                        f"shape {list(shape)}")


def _check_writable(t):
    arr = t._data
    if not arr.flags.writeable:
        if arr.size > 1 and 0 in arr.strides:
            raise RuntimeError(OVERLAP_ERROR)
        raise RuntimeError("in-place operation on a read-only tensor (its memory belongs to a "
                           "read-only array): clone() it first")


def _has_tangent(self, others):
    if state.dual is None:
        return False
    return self._fw is not None or any(isinstance(o, TensorBase) and o._fw is not None
                                       for o in others)


def _inplace(self, compute, others=(), needs_old=True, fast=None, casting="same_kind"):
    """Run `compute(x)` (a function of table ops) and store its result into `self`.

    others:    the other tensor operands (they decide whether a graph is needed)
    needs_old: whether the op's backward reads the old value of self (copy it)
    fast:      fast(out_array) writing the result with NumPy `out=` (no-graph path)
    """
    tracked = state.grad_enabled and (
        self._rg or any(isinstance(o, TensorBase) and o._rg for o in others))
    if not tracked:
        _check_writable(self)
        capturing = _tape.current() is not None  # (tg.compile: the write is a step)
        if fast is not None and not capturing and not _has_tangent(self, others):
            try:
                fast(self._data)
            except (TypeError, ValueError) as e:  # NumPy's casting / broadcasting errors
                raise _fast_error(self, others, e) from None
            self._version_counter[0] += 1
            return self
        with grad_mode.recording_off():
            res = compute(self)
        if capturing:
            _check_store(self, res, casting)
            _tape.write(self, res)  # the copy and the count, recorded for a replay
            return self
        _store(self, res, casting)
        self._version_counter[0] += 1
        if state.dual is not None:
            _set_fw(self, res._fw)
        return self

    if self.grad_fn is None and self._rg:
        raise RuntimeError(LEAF_ERROR)
    _check_writable(self)
    chain = _view_chain(self)
    if chain and chain[-1][1].grad_fn is None:
        raise RuntimeError(VIEW_LEAF_ERROR)
    plain = None  # the base of a view made without history (none needed then)
    if not chain and self.grad_fn is None:
        plain = rebase.view_base(self)
        if plain is not None and plain._rg:
            raise RuntimeError(NO_GRAD_VIEW_ERROR)
    # `old` takes over the history (and, if backward needs it, a copy of the value).
    # Under tg.compile's capture (a plain tensor: no view chain, no base) the copy and
    # the store are steps of the tape, which a replay repeats in order
    capturing = _tape.current() is not None and not chain and plain is None
    kept = self._data
    if needs_old:
        kept = _tape.host(np.copy, kept) if capturing else kept.copy()
    old = like(self, kept, self._rg, self.grad_fn)
    old._out = self._out
    old._fw = self._fw
    res = compute(old)
    if tuple(res._data.shape) != tuple(self._data.shape):
        raise _shape_error(self._data.shape, res._data.shape)
    if capturing:
        _check_store(self, res, casting)
        _tape.write(self, res)  # the copy and the version count
    else:
        _store(self, res, casting)
        self._version_counter[0] += 1
    node = res.grad_fn
    if node is not None:
        if chain:
            # a view changed: the tensor owning the memory gets the new history, and
            # every view of it (self included) a fresh view node of that history
            root = _rebase_root(chain, res)
            _op_nodes[root.grad_fn] = True
            _refresh_views([root])
        elif plain is not None:
            _rebase_plain_base(self, plain, old, res)
        else:
            _rebase(self, old, node, res)
            _op_nodes[node] = True
            _refresh_views([self])
    if state.dual is not None:
        _set_fw(self, res._fw)
    return self


def write_into(self, compute, args=(), kwargs=None):
    """The in-place form of a public function (`public_inplace`): self = compute(self),
    the other tensor arguments (in args and kwargs) deciding whether a graph is needed.
    The old value is kept for backward (several rules read their input)."""
    others = tuple(a for a in args if isinstance(a, TensorBase))
    if kwargs:
        others += tuple(v for v in kwargs.values() if isinstance(v, TensorBase))
    return _inplace(self, compute, others, needs_old=True)


NO_GRAD_VIEW_ERROR = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
    "want the inplace to be tracked).")


MULTI_VIEW_ERROR = (
    "Output {k} of {name} is a view and is being modified inplace. This view is the "
    "output of a function that returns multiple views. Such functions do not allow the "
    "output views to be modified inplace. You should replace the inplace operation by an "
    "out-of-place one.")


MULTI_VIEW_BASE_ERROR = (
    "Output {k} of {name} is a view and its base or another view of its base has been "
    "modified inplace. This view is the output of a function that returns multiple views. "
    "Such functions do not allow the output views to be modified inplace. You should "
    "replace the inplace operation by an out-of-place one.")


# torch's names for the ops that return several views (in the errors above)
_MULTI_VIEW_NAMES = {"unbind": "Unbind", "split": "Split", "split_with_sizes": "SplitWithSizes"}


def _multi_view_name(op):
    return _MULTI_VIEW_NAMES.get(op.name, op.name)


def _stale_vjp(xp, g, ans, x, k, name):
    raise RuntimeError(MULTI_VIEW_BASE_ERROR.format(k=k, name=name))


# The history of a piece of split/unbind whose base changed in place afterwards: its
# values are the new ones, but torch gives it no valid history (the error above; torch
# raises when the piece is used, tapegrad when a gradient reaches it).
_STALE_PIECE = Op("modified_multi_output_view", lambda x, k, name: x.view(),
                  vjp=[_stale_vjp], promote=False,
                  doc="a piece of split/unbind whose base was modified in place")


# Nodes made by in-place ops (their input `old` may share the output's memory without
# being a view relation), as opposed to the fresh view nodes `_refresh_views` makes.
_op_nodes = weakref.WeakKeyDictionary()


def _same_memory(a, b):
    """Do two arrays view the same NumPy buffer? (NumPy points a view's .base at the
    array that owns the memory.)"""
    ra = a if a.base is None else a.base
    rb = b if b.base is None else b.base
    return ra is rb


def _view_chain(t):
    """[(view node, parent, child), ...] from `t` up to the tensor that owns its memory,
    following linear ops whose output is a view of their first input."""
    chain = []
    cur = t
    while True:
        node = cur.grad_fn
        if node is None or not node.op.linear or not node.inputs or node in _op_nodes:
            return chain  # (an in-place node's input `old` may share memory: not a view)
        if node.op is _STALE_PIECE:
            raise RuntimeError(MULTI_VIEW_BASE_ERROR.format(**node.args))
        if node.op.n_outputs != 1:  # split/unbind pieces: PyTorch refuses too
            raise RuntimeError(MULTI_VIEW_ERROR.format(k=cur._out - 1,
                                                       name=_multi_view_name(node.op)))
        parent = node.inputs[0]
        if not isinstance(parent, TensorBase) or not _same_memory(cur._data, parent._data):
            return chain
        chain.append((node, parent, cur))
        if parent.grad_fn is None:
            return chain
        cur = parent


def _refresh_views(changed):
    """Other views of the changed tensors still carry a history made from the OLD values;
    give each a fresh view node of its (rebased) parent, recursively (PyTorch regenerates
    a view's grad_fn when its base changed)."""
    done = {id(t) for t in changed}
    stack = list(reversed(changed))  # the root base last in, first out
    while stack:
        parent = stack.pop()
        for v in rebase.views_of(parent):
            if id(v) in done or v.grad_fn is None or v.grad_fn.inputs is None:
                continue
            done.add(id(v))
            node = v.grad_fn
            old_v = like(v, v._data, v._rg, node)
            with grad_mode.enable_grad():
                if node.op.n_outputs != 1:  # a piece of split/unbind: no valid history
                    fresh = apply(_STALE_PIECE, parent, k=v._out - 1,
                                  name=_multi_view_name(node.op))
                else:
                    fresh = apply(node.op, parent, *node.inputs[1:], **node.args)
            if fresh.grad_fn is not None:
                _rebase(v, old_v, fresh.grad_fn, fresh)
            stack.append(v)


def _rebase_root(chain, child_new):
    """The view's new values were written into its base's memory: give the tensor that
    owns the memory a new history (PyTorch's CopySlices). For each view op V up the
    chain (linear, a selection): parent_new = where(covered, V^T(child_new), parent_old);
    V^T is the op's own VJP rule run with the differentiable namespace, `covered` the
    positions V reads. Returns the root, now rebased."""
    for node, parent, child in chain:
        op, kw = node.op, node.rule_kwargs()
        p_old = like(parent, parent._data, parent._rg, parent.grad_fn)
        ans = like(child, child._data)
        with np.errstate(all="ignore"):
            count = op.vjps[0](np, np.ones(child._data.shape, child._data.dtype), child._data,
                               parent._data, **kw)
            covered = np.broadcast_to(sum_to(np, np.asarray(count), parent._data.shape)
                                      != 0, parent._data.shape)
            scattered = op.vjps[0](_xp, child_new, ans, p_old, **kw)
            if tuple(scattered.shape) != tuple(parent._data.shape):
                scattered = sum_to(_xp, scattered, parent._data.shape)
        child_new = apply(E.where, covered, scattered, p_old)
    root = chain[-1][1]
    _rebase(root, p_old, child_new.grad_fn, child_new)
    return root


def _addresses(a):
    """The address of each of a's elements (row-major), in units of its item size."""
    item = a.dtype.itemsize
    pos = np.full(a.shape, a.__array_interface__["data"][0] // item, np.int64)
    for k, (m, st) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = m
        pos = pos + (np.arange(m, dtype=np.int64) * (st // item)).reshape(shape)
    return pos.reshape(-1)


def _rebase_plain_base(view, base, old, res):
    """A view of a tensor without history, written by a value that requires grad: the
    base gets the history `where(covered, scatter(new), base_old)` (torch's CopySlices,
    the view's elements found by address: the view was recorded by no node) and the view
    the history of reading its elements from it."""
    at_base = _addresses(base._data)
    order = np.argsort(at_base, kind="stable")
    at_view = _addresses(view._data)
    hit = np.minimum(np.searchsorted(at_base[order], at_view), max(at_base.size - 1, 0))
    pick = np.where(at_base[order][hit] == at_view, order[hit], -1) if at_base.size else \
        np.full(at_view.shape, -1, np.int64)
    pick = pick.reshape(view._data.shape)
    shape = tuple(base._data.shape)
    covered = np.zeros(base._data.size, bool)
    covered[pick[pick >= 0]] = True
    b_old = like(base, base._data)
    scattered = apply(I.as_strided_backward, res, shape=shape, pick=pick)
    new = apply(E.where, covered.reshape(shape), scattered, b_old)
    _rebase(base, b_old, new.grad_fn, new)
    _op_nodes[new.grad_fn] = True
    _refresh_views([base])
    fresh = apply(I.as_strided_gather, base, pick=pick)
    _rebase(view, old, fresh.grad_fn, fresh)


def _check_store(self, res, casting):
    out = res._data
    if out.shape != self._data.shape:
        raise _shape_error(self._data.shape, out.shape)
    if out.dtype != self._data.dtype and not np.can_cast(out.dtype, self._data.dtype, casting):
        raise _cast_error(out.dtype, self._data.dtype)


def _store(self, res, casting):
    _check_store(self, res, casting)
    np.copyto(self._data, res._data, casting="unsafe")


def _fast_error(self, others, e):
    shape = self._data.shape
    try:
        shapes = [np.shape(o._data if isinstance(o, TensorBase) else o) for o in others]
        full = np.broadcast_shapes(shape, *shapes)
    except ValueError:
        return RuntimeError(f"in-place op: shapes {[list(shape)] + [list(s) for s in shapes]} "
                            "cannot be broadcast together")
    if full != shape:
        return _shape_error(shape, full)
    for o in others:
        a = o._data if isinstance(o, TensorBase) else np.asarray(o)
        if isinstance(o, float) and self._data.dtype.kind in "iub":
            rt = _dt.get_default_dtype()  # a Python float is a default-dtype scalar
        elif isinstance(o, TensorBase) and a.dtype.kind == "f" and self._data.dtype.kind in "iub":
            rt = a.dtype  # PyTorch: int (op) float32 is float32 (NumPy would say float64)
        else:
            rt = np.result_type(self._data, a if isinstance(o, TensorBase) else o)
        if not np.can_cast(rt, self._data.dtype, "same_kind"):
            return _cast_error(rt, self._data.dtype)
    return RuntimeError(str(e))


def _rebase(self, old, node, res):
    """`self` now holds `res`: give it res's node, which reads `old` as its input."""
    if res._data.dtype == self._data.dtype:
        node.ans = self._data  # same values; don't keep a second array alive
    nins = len(node.inputs)
    if node.versions is not None:
        ins_v = tuple(node.versions[:nins])
    else:
        ins_v = tuple(0 if isinstance(t, TensorBase) else None for t in node.inputs)
    node.versions = ins_v + (self._version_counter[0],)
    node.out_version = self._version_counter
    prev = old.grad_fn
    # retain_grad() follows the tensor to its new value (PyTorch); other hooks stay with
    # the old value's node, and see the gradient w.r.t. the value before the change.
    if prev is not None and prev.hooks:
        for hid, h in list(prev.hooks.items()):
            if isinstance(h, RetainGrad) and h.ref() is self:
                del prev.hooks[hid]
                node.register_hook(h)
    # Nodes recorded before this change still point at `self`; the engine follows
    # this record back to `old` for them (see core/rebase.py `resolve`).
    rebase.record_old(node, old)
    self.grad_fn = node
    self._out = 0
    self._rg = True


def _set_fw(self, tan):
    if tan is None:
        self._fw = None
        return
    state.dual.set_tangent(self, np.array(tan, dtype=self._data.dtype, copy=True))


def _other(o):
    """An operand: Tensors pass, numbers stay numbers, arrays become tensors."""
    return _args._arg(o)


def _needs_old(op, index=0):
    """Does the table entry's backward read input `index` (its `reads` declaration)?"""
    return op.reads_input(index)

"""Replay: a captured forward run again on new arrays, as ONE node for the backward.

`forward(plan, externals)` runs the tape's steps (capture.py) in order: each op's forward
on the slots' current arrays, each host step (random draws, running statistics) again,
each constant copied. No Tensor or Node is made for the steps, no dispatch, no checks:
the guards (guards.py) already said the call is the captured one.

The outputs that require grad share one Node whose op has a `backward=` (as custom
Functions do): `_backward` runs the captured nodes' rules in the schedule learned from
the eager backward (schedule.py), summing each tensor's contributions in eager's order,
and returns one gradient per input entry, each external once per event: the engine then
adds them into `.grad` (or the input's node) exactly as eager's walk did.

Reference: the rules and the summation are the engine's own (core/engine.py `_walk`,
`_input_grads`, `_fit`); this file repeats them without the per-node bookkeeping.
"""
import numpy as np

from ..core.backward import _one
from ..core.engine import _fit as _fit_leaf, accumulate_all
from ..core.node import Node
from ..core.record import _keep_default_dtype
from ..core.state import state
from ..core.tensor_base import make
from ..ops.registry import Op
from . import codegen
from .codegen import _fit
from .capture import BACKWARD, CALL, CONST, EXT, HOST, OP, Const, Seq

_ndarray = np.ndarray
_float32 = np.dtype("float32")


class Plan:
    """What a replay needs: the steps, the outputs, the schedule (None: no backward, or
    it is a step of the call: whole-step capture), the ext steps' tensors (`late`) and
    their (shape, dtype, requires_grad) as captured (`late_meta`, checked per call)."""

    __slots__ = ("steps", "n_ext", "outputs", "out_types", "out_rg", "schedule", "op",
                 "keep", "spec", "late", "late_meta", "code", "run", "trial")

    def __init__(self, cap, outputs, out_tensors, schedule, spec):
        self.steps = cap.steps
        self.n_ext = cap.n_ext
        self.outputs = outputs
        self.out_types = [type(t) if t is not None else None for t in out_tensors]
        # a call that ran its own backward returns tensors without a graph
        self.out_rg = [t is not None and t._rg and not cap.backwards for t in out_tensors]
        self.schedule = schedule
        self.spec = spec
        self.late = tuple(cap.late)
        self.trial = None  # the runner's eager-vs-replay timings while it compares them
        self.late_meta = tuple((t._data.shape, t._data.dtype, t._rg) for t in cap.late)
        # the steps whose arrays the backward reads
        keep = set(j for j, _ in schedule.order) if schedule else set()
        for st in cap.steps:
            if st.kind == BACKWARD:
                keep.update(j for j, _ in st.fn.order)
        self.keep = frozenset(keep)
        n = sum(1 for k, rg in enumerate(self.out_rg) if rg and self._first(k))
        self.op = Op("compiled", None, backward=_backward, n_outputs=max(n, 1),
                     promote=False, inputs=(), reads=None,
                     doc="a tg.compile replay: one node for the captured forward")
        # the replay itself: the steps as one generated function (codegen.py)
        self.code, self.run = codegen.generate(
            self, frozenset(j for j, _ in schedule.order) if schedule else ())

    def late_ok(self):
        """The ext steps' tensors still have the captured shape, dtype, requires_grad."""
        for t, (shape, dtype, rg) in zip(self.late, self.late_meta):
            a = t._data
            if a.shape != shape or a.dtype != dtype or t._rg != rg:
                return False
        return True

    def _first(self, k):
        s = self.outputs[k]
        return all(self.outputs[q] != s for q in range(k))


def _resolve(ref, values):
    if type(ref) is int:
        return values[ref]
    if type(ref) is Const:
        return ref.value
    items = [_resolve(r, values) for r in ref.items]
    return items if ref.kind is list else ref.kind(items)


def forward(plan, ext_tensors):
    """Run the steps; (values by slot, {step: (arrays, kw, ans)} for the backward).
    `ext_tensors`: the call's tensors, then the plan's ext steps' (`plan.late`)."""
    values = [t._data for t in ext_tensors[:plan.n_ext]]
    kept = {}
    keep = plan.keep
    j = -1
    for st in plan.steps:
        j += 1
        kind = st.kind
        if kind == CONST:
            values.append(st.fn.copy())
            continue
        if kind >= EXT:
            if kind == EXT:
                values.append(st.fn._data)
            elif kind == CALL:
                st.fn(*st.ins, **st.kw)
            else:
                _step_backward(plan, st.fn, st.ins[0], values[st.ins[0]], kept, ext_tensors)
            continue
        arrays = [values[r] if type(r) is int else
                  (r.value if type(r) is Const else _resolve(r, values)) for r in st.ins]
        if kind == HOST:
            out = st.fn(*arrays)
            if st.n_out == 1:
                values.append(out)
            elif st.n_out:
                values.extend(out)
            continue
        kw = st.kw
        if kw:
            kw = {k: values[r] if type(r) is int else
                  (r.value if type(r) is Const else _resolve(r, values)) for k, r in kw.items()}
        op = st.fn
        out = op.forward(*arrays, **kw)
        saved = None
        if st.n_out == 1:  # as core/record.py apply()
            if op.has_extra:
                out, saved = out
            if type(out) is not _ndarray:
                out = np.asarray(out)
            if op.promote_default and out.dtype is not _float32:
                out, saved = _keep_default_dtype(op, out, saved, arrays, kw)
            if out.shape != st.shapes[0]:
                raise RuntimeError(f"tg.compile: the replay of {op.name} made shape "
                                   f"{out.shape}, the captured call {st.shapes[0]}")
            values.append(out)
            if st.saved_keys:
                values.extend(saved[k] for k in st.saved_keys)
        else:
            out = tuple(out)
            values.extend(out)
        if j in keep:
            kept[j] = (arrays, kw if not saved else {**kw, **saved}, out)
    return values, kept


def outputs(plan, values, kept, ext_tensors, grad_on):
    """The output leaves: tensors on the replayed arrays; those requiring grad share the
    compiled node."""
    made = {}
    leaves = []
    node = None
    k_rg = 0
    for k, s in enumerate(plan.outputs):
        if type(s) is Const:
            leaves.append(s.value)
            continue
        if s in made:
            leaves.append(made[s])
            continue
        rg = plan.out_rg[k] and grad_on
        t = make(plan.out_types[k]._result_type, values[s], rg)
        if rg:
            if node is None:
                node = _node(plan, values, kept, ext_tensors)
            t.grad_fn = node
            if plan.op.n_outputs > 1:
                t._out = k_rg + 1
            t._version = node.out_version
            k_rg += 1
        made[s] = t
        leaves.append(t)
    return leaves


def _node(plan, values, kept, ext_tensors):
    sch = plan.schedule
    ins = tuple(ext_tensors[k] for k in sch.entries)
    versions = None
    if any(t._version[0] for t in ins):
        versions = tuple(t._version[0] for t in ins) + (0,)
    ans = tuple(values[s] for k, s in enumerate(plan.outputs)
                if plan.out_rg[k] and plan._first(k))
    # the node keeps only what the rules read (`kept`): the other slots' arrays are
    # freed when the forward returns
    return Node(plan.op, ins, {}, {"replay": (plan, kept)},
                ans if len(ans) > 1 else ans[0], versions, [0])


def _backward(xp, g, ans, *entries, replay):
    if xp is not np:
        raise RuntimeError("tg.compile: backward with create_graph=True through a replayed "
                           "forward is not supported; compile with disable=True")
    plan, kept = replay
    free = not state.retain_graph  # the engine frees the node after this: so can we,
    sch = plan.schedule  # each step's arrays as soon as its rules ran (as eager's walk)
    gs = g if plan.op.n_outputs > 1 else [g]
    pending = {}
    got = set()
    k_rg = 0
    for k, s in enumerate(plan.outputs):
        if not (plan.out_rg[k] and plan._first(k)):
            continue
        gk = gs[k_rg]
        k_rg += 1
        if gk is None:
            continue
        got.add(k)
        j = _step_of(plan, s)
        _pend(pending, plan, j, s - plan.steps[j].index, gk)
    if got != sch.seeded:
        raise RuntimeError("tg.compile: this backward starts from other outputs than the "
                           "captured step's; compile with disable=True")
    out = [None] * len(sch.entries)
    steps = plan.steps
    for j, evs in sch.order:
        gj = pending.pop(j, None)
        if gj is None:
            continue
        st = steps[j]
        arrays, kw, a = kept.pop(j) if free else kept[j]
        op = st.fn
        if op.backward is not None:
            grads = op.backward(np, gj, a, *arrays, **kw)
        else:
            vjps = op.vjps
            grads = {}
            for i, _ in evs:
                if i not in grads:
                    grads[i] = vjps[i](np, gj, a, *arrays, **kw)
        for i, tgt in evs:
            gi = grads[i]
            if gi is None:
                continue
            if tgt[0] == "e":
                out[tgt[1]] = gi
                continue
            _, jj, piece, s, shape, dtype = tgt
            if gi.shape != shape or gi.dtype != dtype:
                gi = _fit(gi, shape, dtype)
            _pend(pending, plan, jj, piece, gi)
        gj = grads = gi = arrays = kw = a = None
    return out


def _step_of(plan, s):
    for j, st in enumerate(plan.steps):
        if st.index <= s < st.index + st.n_out:
            return j
    raise AssertionError(s)


def _pend(pending, plan, j, piece, g):
    """As the engine: one sum per tensor; a node with several outputs, one per piece."""
    st = plan.steps[j]
    if st.n_out == 1:
        pending[j] = pending[j] + g if j in pending else g
        return
    slots = pending.get(j)
    if slots is None:
        slots = pending[j] = [None] * st.n_out
    slots[piece] = g if slots[piece] is None else slots[piece] + g




def _step_backward(plan, sch, root, loss, kept, ext_tensors):
    """A backward step (whole-step capture): the engine's walk over the captured nodes,
    in the watched order, then the leaves' gradients to `.grad` by the engine's own
    `accumulate_all` (the same hand-off: same bits, same aliasing)."""
    steps = plan.steps
    pending = {}
    leaf = {}
    j0 = _step_of(plan, root)
    pending[j0] = _one(loss)  # the implicit seed dL/dL = 1, as loss.backward()
    for j, evs in sch.order:
        gj = pending.pop(j, None)
        if gj is None:
            continue
        st = steps[j]
        arrays, kw, a = kept.pop(j)
        op = st.fn
        if op.backward is not None:
            grads = op.backward(np, gj, a, *arrays, **kw)
        else:
            vjps = op.vjps
            grads = {}
            for i, _ in evs:
                if i not in grads:
                    grads[i] = vjps[i](np, gj, a, *arrays, **kw)
        for i, tgt in evs:
            gi = grads[i]
            if gi is None:
                continue
            if tgt[0] == "e":
                t = ext_tensors[sch.entries[tgt[1]]]
                data = t._data
                if gi.shape != data.shape or gi.dtype != data.dtype:
                    gi = _fit_leaf(np, gi, data)
                leaf[t] = leaf[t] + gi if t in leaf else gi
                continue
            _, jj, piece, s, shape, dtype = tgt
            if gi.shape != shape or gi.dtype != dtype:
                gi = _fit(gi, shape, dtype)
            _pend(pending, plan, jj, piece, gi)
        gj = grads = gi = arrays = kw = a = None
    accumulate_all(leaf, False, (), False)

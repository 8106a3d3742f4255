"""Capture: one eager forward, recorded as a tape of steps a replay can repeat.

A `Capture` listens on the core's tape hook (core/tape.py) while the forward runs eagerly.
Every array the forward touches gets a SLOT, a number: first the externals' arrays (the
call's input tensors, then the module's parameters and buffers), then, in order, what each
step produced. A step is

    op     a derivative-table op: its forward on the input slots' arrays with its arguments
           (an array argument is a slot too: masks, indices, targets), its outputs (one
           array, or the pieces of a split) and the values it saved for its rules
    host   an array step the API layer computes outside an op that must happen again:
           a random draw (dropout's mask), running statistics updated in place
    const  an array made from Python values only (arange, zeros): remade by copying
    ext    a tensor the call reads that is no argument (a parameter of a model the
           compiled function reads as a global): its array, read at that point
    call   a Python call with effects (optimizer.step, zero_grad, clip_grad_norm_, a
           scheduler's step): called again, as it is, with the same arguments
    backward  `loss.backward()` inside the call (whole-step capture): the captured
           nodes' rules in the order the watched walk ran them (schedule.py), then the
           leaves' gradients handed to their `.grad` as the engine does

Anything the tape cannot explain ends the capture's chance (`broken`, the reason): an
array that is no slot (computed outside the library's knowledge), a Python read of a
tensor's values (.item(), bool(), .tolist(), .numpy()), an in-place change, a tensor of
the forward kept alive outside the graph (it would not be there on replay), hooks.
`finish` checks the end state; the eager call's result is returned either way.
"""
import sys
import zlib

import numpy as np

from .._device import device as _Device
from .. import dtypes as _dt
from ..core import opmath as _opmath
from ..core.grad_attribute import SLOT
from ..core.standin import value_key
from ..core.state import state
from ..core.tensor_base import TensorBase
from . import schedule as _schedule
from .._dynamo.exc import Unsupported
from .._tensor import Tensor
from .tail_reads import TailReads

OP, HOST, CONST, EXT, CALL, BACKWARD = 0, 1, 2, 3, 4, 5
_ndarray = np.ndarray
_float16 = np.dtype("float16")
_getrefcount = sys.getrefcount
_grad_get, _grad_set = SLOT.__get__, SLOT.__set__  # (no tape hook, no non-leaf warning)
# arguments taken as constants: anything else may hold arrays the tape cannot see
_PLAIN = frozenset((int, float, bool, complex, str, bytes, type(None), type(Ellipsis)))
_CONSTANT = (np.generic, np.dtype, type, _dt.dtype, _Device)
# objects a host step may take as they are: a generator (dropout's mask), a GradScaler
# (its current scale), a parameter whose .grad the user's code reads or sets
_HOST_OBJECTS = ("Generator", "GradScaler", "TensorRef")


class TensorRef:
    """A parameter as a host step's argument (its `.grad`, not its array)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


def _owner(a):
    """The array owning `a`'s memory (NumPy's base of a view is the owner)."""
    return a if a.base is None else a.base


def write_into(dst, src, counter):
    """An in-place write outside the graph (`p.data -= lr * p.grad`, a no_grad update):
    the copy, and the version count the eager write made."""
    np.copyto(dst, src, casting="unsafe")
    counter[0] += 1


def grad_of(ref):
    """The array of a parameter's `.grad` (the user's code reads it after backward)."""
    g = _grad_get(ref.t)
    if g is None:
        raise RuntimeError("tg.compile: a replayed step reads a .grad that is None (the "
                           "captured call's was not); compile with disable=True")
    return g._data


def grad_to_none(ref):
    """`p.grad = None` in the user's code (nn-zero-to-hero's loop)."""
    _grad_set(ref.t, None)


class Step:
    """One replayable step. `ins`: per positional input a slot (int) or a constant
    wrapped in `Const`; `kw`: keyword arguments, same convention (a tuple argument
    holding arrays becomes `Seq`); `n_out` arrays go to the next slots, then the saved
    values named `saved_keys`."""

    __slots__ = ("kind", "fn", "ins", "kw", "n_out", "saved_keys", "shapes", "rg", "index",
                 "widened")

    def __init__(self, kind, fn, ins, kw, n_out, saved_keys=(), shapes=(), rg=()):
        self.kind, self.fn, self.ins, self.kw = kind, fn, ins, kw
        self.n_out, self.saved_keys, self.shapes, self.rg = n_out, saved_keys, shapes, rg
        self.index = None  # the slot of its first output (set by Capture._add_step)
        self.widened = False  # float16 computed in float32, as eager's apply did (opmath.py)


class Const:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class ItemOf:
    """An output that is `.item()` of a slot's array (a float the call returned)."""
    __slots__ = ("slot",)

    def __init__(self, slot):
        self.slot = slot


class Seq:
    """A tuple/list argument holding slots (index tuples): rebuilt on replay."""

    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items


class Capture:
    """The listener of one eager forward (see the module docstring)."""

    def __init__(self, externals, fullgraph=False, top_code=None):
        self.fullgraph = fullgraph
        # `.item()` floats the compiled function reads at its end and returns
        self.tail = TailReads(Tensor.item.__code__, top_code)
        self.slot = {}        # id(array) -> slot
        self.arrays = []      # slot -> array (held: ids stay unique while capturing)
        self.steps = []
        self.broken = None
        self.results = []     # (tensor, slot) of every op output: the end-state checks
        # value_key of each op output as made -> (step number, piece, slot, shape, dtype)
        self.made = {}
        self.writes = {}  # id(version counter) -> writes recorded into its tensor (write)
        self.nodes = {}       # Node -> step number (the backward's events name nodes)
        self.host_args = set()  # ids of arrays a host step received (may write them)
        self.hosting = False
        self.externals = list(externals)
        for t in self.externals:
            self._add(t._data)
        self.n_ext = len(self.externals)
        self.sums = [None] * self.n_ext  # per slot, a checksum of what the step made
        self.ext_versions = [t._version_counter[0] for t in self.externals]
        self.ext_arrays = [t._data for t in self.externals]
        self.before = None     # copies of the externals' arrays (set by the runner)
        self.late = []         # the tensors of ext steps (also appended to externals)
        self.unresolved = []   # slots of ext steps of host arrays (their tensor: resolve)
        self.python = None  # the guards of the Python values the call reads (runner.py)
        # the .grad the user's code read before the step itself set it: (tensor, present)
        # as the call found it, a guard of the replay (a branch on `p.grad is None`)
        self.grads_found = {}
        self.grads_made = set()  # ids of the tensors whose .grad the step set (backward)
        self.moved = False  # a call step or a recorded write may have changed externals
        self.backwards = 0

    # ---- the hook (core/tape.py) ------------------------------------------------------
    def brk(self, why):
        if self.broken is None:
            self.broken = why

    def data_read(self, what, tensor=None, value=None):
        """Python read a tensor's values: a graph break (torch's term). The call goes on
        eagerly, so its result is right; under fullgraph=True it raises, as torch does.
        An `.item()` the compiled function returns at its end is no break (tail_reads.py)."""
        if not self.fullgraph and tensor is not None and self.broken is None and \
                self.tail.read(tensor, value, self._counts()):
            return
        if self.fullgraph:
            raise Unsupported(
                f"tg.compile(fullgraph=True): a graph break: the compiled call read a "
                f"tensor's values in Python ({what}), so it is not one graph. Make the code "
                f"branchless (tg.where, clamp), or compile without fullgraph=True (the call "
                f"then runs eagerly)")
        self.brk(what)

    def _counts(self):
        """What the capture recorded so far (tail reads: nothing may follow them)."""
        return (len(self.steps), len(self.nodes), len(self.results),
                sum(self.writes.values()), self.backwards)

    def op(self, op, inputs, arrays, args, out, saved, res):
        if self.broken is not None:
            return
        if op.name == "getitem" and _has_mask(args.get("key")):
            return self.brk("a boolean mask index (the result's shape depends on values)")
        ins = self._ins(inputs, arrays)
        kw = self._kw(args)
        if ins is None or kw is None:
            return
        keys = tuple(saved) if saved else ()
        rg = tuple(isinstance(t, TensorBase) and t._rg for t in inputs)
        step = Step(OP, op, ins, kw, 1, keys, (out.shape,), rg)
        first = next((t for t in inputs if isinstance(t, TensorBase)), None)
        step.widened = (first is not None and first._data.dtype == _float16
                       and _opmath.applies(op, arrays, args))  # (core/record.py apply)
        first = self._add_step(step, [out] + [saved[k] for k in keys])
        if res.grad_fn is not None:
            self.nodes[res.grad_fn] = len(self.steps) - 1
        self._made(res, first)

    def built(self, node, outputs):
        """A node made by hand (split pieces): its op's forward on the inputs, node.args."""
        if self.broken is not None:
            return
        ins = self._ins(node.inputs, [t._data if isinstance(t, TensorBase) else t
                                      for t in node.inputs])
        kw = self._kw(node.args)
        if ins is None or kw is None:
            return
        rg = tuple(isinstance(t, TensorBase) and t._rg for t in node.inputs)
        outs = list(node.ans)
        step = Step(OP, node.op, ins, kw, len(outs), (), tuple(a.shape for a in outs), rg)
        first = self._add_step(step, outs)
        self.nodes[node] = len(self.steps) - 1
        for k, t in enumerate(outputs):
            self._made(t, first + k)

    def _made(self, t, slot):
        """An op's output tensor `t` in slot `slot`: a result, and (a graph's) the value
        the backward's events name, keyed as made (an in-place op later moves the
        tensor itself onto its own node: `made` keeps what the earlier rules read)."""
        self.results.append((t, slot))
        j = self.nodes.get(t.grad_fn)
        if j is not None:
            self.made[value_key(t)] = (j, t._out - 1 if t._out else 0, slot,
                                       t._data.shape, t._data.dtype)

    def host(self, fn, args, out):
        if self.broken is not None:
            return
        self.hosting = True
        ins = self._ins(args, args)
        self.hosting = False
        if ins is None:
            return
        for a in args:
            if type(a) is _ndarray:
                self.host_args.add(id(a))
        outs = [] if out is None else list(out) if isinstance(out, tuple) else [out]
        if any(type(a) is not _ndarray for a in outs):
            return self.brk(f"host step {fn.__name__} returned a non-array")
        self._add_step(Step(HOST, fn, ins, {}, len(outs), (), (), ()), outs)

    def const(self, arr):
        if self.broken is None:
            self._add_step(Step(CONST, arr.copy(), (), {}, 1), [arr])

    def _late(self, t):
        """A leaf tensor the call reads that is no argument: an ext step. Where it comes
        from is checked at the end (the runner: held by a guarded global or closure
        variable, or a module's parameter or buffer; not one the call made)."""
        self.late.append(t)
        self.externals.append(t)
        self.ext_versions.append(t._version_counter[0])
        self.ext_arrays.append(t._data)
        if self.before is not None:
            self.before.append(t._data.copy())
        self._add_step(Step(EXT, t, (), {}, 1), [t._data])
        self.sums[-1] = None  # (a parameter: the optimizer may change it, in a call step)

    def resolve(self, tensors):
        """Give the host arrays' ext steps their tensors, from `tensors` (those the
        guards hold): False if one is not among them."""
        by_array = {id(t._data): t for t in tensors}
        for s in self.unresolved:
            t = by_array.get(id(self.arrays[s]))
            if t is None:
                return False
            next(st for st in self.steps if st.index == s).fn = t
            self.late.append(t)
        return True

    def call(self, fn, args, kwargs):
        """A Python call a replay repeats (core/tape.py `call`), run with the tape off."""
        if self.broken is None:
            # only a call step or a recorded write may change the externals (each marks
            # them after): nothing else did since the last
            self._check_externals()
            self._check_python()
            self._add_step(Step(CALL, fn, args, kwargs, 0), [])
        prev, state.tape = state.tape, None
        try:
            return fn(*args, **kwargs)
        finally:
            state.tape = prev
            for t, a in zip(self.externals, self.ext_arrays):
                if t._data is not a:  # a replay's later steps would read the old array
                    self.brk(f"{getattr(fn, '__qualname__', fn)} replaced a tensor's array")
            self._mark_externals()
            if self.python is not None:
                self.python.refresh()

    def backward(self, run, args):
        """`backward()` in the call: run it with the walk watched; a backward step."""
        tensors, grad_tensors, retain_graph, create_graph, inputs = args
        root = None
        if (self.broken is None and isinstance(tensors, TensorBase) and grad_tensors is None
                and not retain_graph and not create_graph and inputs is None and tensors._rg
                and tensors._data.size == 1 and tensors.grad_fn in self.nodes):
            root = next((s for t, s in self.results if t is tensors), None)
        if root is None:
            self.brk("a backward() other than loss.backward() of a scalar the call made")
        watch = _schedule.Watch(self.nodes) if root is not None else None
        prev, state.tape = state.tape, None
        try:
            out = run(*args)
        finally:
            state.tape = prev
            if watch is not None:
                watch.stop()
        if watch is None or self.broken is not None:
            return out
        events = watch.events
        if any(events[e][0] not in self.nodes for e in range(0, len(events), 2)):
            self.brk("a backward() that reaches nodes made outside the call")
            return out
        sch = _schedule.build(self, [root], events)
        events.clear()
        if sch is None:
            self.brk("a backward() one replay cannot reproduce")
            return out
        self.backwards += 1
        self.grads_made.update(id(self.externals[k]) for k in sch.entries)
        # a .grad the step read before (a slot) may have been added into in place by the
        # hand-off (the replay's hand-off does the same): its slots hold what it holds now
        for k in sch.entries:
            g = _grad_get(self.externals[k])
            if g is not None:
                self._resum(g._data)
        a = tensors._data
        self._add_step(Step(BACKWARD, sch, (root,), {}, 0, (), (a.shape, a.dtype)), [])
        return out

    def _mark_externals(self, only=None):
        """The externals (those numbered `only`) as a call step or a recorded write left
        them: what the next check compares with."""
        self.moved = True  # (views of them may have moved with them since the forward)
        for k in range(len(self.externals)) if only is None else only:
            self.ext_versions[k] = self.externals[k]._version_counter[0]
            if self.before is not None:
                self.before[k] = self.ext_arrays[k].copy()

    def _check_python(self):
        """The dicts, lists, user objects and optimizers the call reads, unchanged by its
        own Python since it began or the last call step ended (`g['lr'] = lr`,
        `count[0] += 1`: a replay runs no Python, so it would not repeat that)."""
        what = self.python.changed() if self.python is not None else None
        if what is not None:
            self.brk(f"the call's Python changed {what} (a replay would not)")

    def _check_externals(self, only=None):
        """The externals (those numbered `only`) unchanged since the call began or the
        last call step or recorded write left them, but by host steps."""
        for k in range(len(self.externals)) if only is None else only:
            t, a = self.externals[k], self.ext_arrays[k]
            if t._version_counter[0] != self.ext_versions[k] or t._data is not a:
                return self.brk("an input, parameter or buffer changed in place")
            if (self.before is not None and id(a) not in self.host_args
                    and not _same(a, self.before[k])):
                return self.brk("an input, parameter or buffer changed outside the ops")

    def _views_external(self, a):
        """Is `a` a view of an input, parameter or buffer? (`x @ W.T`: W.T's slot changes
        with W when the call's optimizer step updates W in place, after the forward read
        it; a replay makes the view again at the same point of the step, as eager did.)"""
        return a.base is not None and any(a.base is _owner(e) for e in self.ext_arrays)

    # ---- the user's writes outside the graph and .grad reads (core/tape.py) ----------
    def write(self, t, res):
        """`t`'s array := `res`'s (an in-place op outside the graph): done, and recorded
        as a host step when both arrays are the tape's (checked unchanged before: only
        recorded writes may change the externals)."""
        owner = _owner(t._data)
        ks = [k for k, a in enumerate(self.ext_arrays) if _owner(a) is owner]
        if self.broken is None:
            if any(k < self.n_ext for k in ks):
                # (a replay would write into the call's new argument, but could not count
                # the write on that tensor's version as eager does)
                self.brk("an argument of the call changed in place")
            else:  # (the others are checked at the next call step or the end)
                self._check_externals(ks)
        write_into(t._data, res._data, t._version_counter)
        if self.broken is not None:
            return
        counter = t._version_counter  # (the end checks count the recorded writes)
        self.writes[id(counter)] = self.writes.get(id(counter), 0) + 1
        self.host(write_into, (t._data, res._data, t._version_counter), None)
        self.host_args.discard(id(t._data))  # (marked below: later changes still checked)
        self._resum(t._data)
        self._mark_externals(ks)

    def _resum(self, arr):
        """The slots on `arr`'s memory hold new values (a recorded change): their sums."""
        owner = _owner(arr)
        for s, a in enumerate(self.arrays):
            if self.sums[s] is not None and _owner(a) is owner:
                self.sums[s] = _crc(a)

    def _parameter(self, t, what):
        """A TensorRef of `t` when it is a tensor a replay finds again (one the call reads
        that is no argument: a parameter), else None (broken)."""
        if any(x is t for x in self.externals[:self.n_ext]):
            return self.brk(f"{what} of an argument of the call (a replay gets new ones)")
        if t.grad_fn is not None or id(t._data) in self.slot and not any(
                x is t for x in self.externals):
            return self.brk(f"{what} of a tensor the call made")
        if not any(x is t for x in self.externals):
            self._late(t)
        return TensorRef(t)

    def grad_read(self, t, g):
        """The user's `t.grad` (g: its value, None or a tensor): a guard when the call
        found it so (not set by the step), and a step reading the array."""
        if self.broken is not None:
            return
        ref = self._parameter(t, "the .grad")
        if ref is None:
            return
        if id(t) not in self.grads_made and id(t) not in self.grads_found:
            self.grads_found[id(t)] = (t, g is not None)
        if g is not None:
            self._add_step(Step(HOST, grad_of, (Const(ref),), {}, 1, (), (), ()), [g._data])

    def grad_set(self, t, value):
        if self.broken is not None:
            return
        if value is not None:
            return self.brk("a .grad set to a tensor in the call")
        ref = self._parameter(t, "setting the .grad")
        if ref is not None:
            self.grads_made.add(id(t))
            self._add_step(Step(HOST, grad_to_none, (Const(ref),), {}, 0, (), (), ()), [])

    # ---- slots -----------------------------------------------------------------------
    def _add(self, arr):
        self.slot[id(arr)] = len(self.arrays)
        self.arrays.append(arr)

    def _add_step(self, step, outs):
        step.index = len(self.arrays)
        self.steps.append(step)
        for a in outs:
            self._add(a)
            self.sums.append(_crc(a))
        return step.index

    def _ref(self, value):
        """A slot for an array, Const for a Python value, None (and broken) otherwise."""
        if isinstance(value, _ndarray):
            s = self.slot.get(id(value))
            if s is None:
                self.brk(f"an array of shape {value.shape} made outside the ops")
            return s
        if isinstance(value, TensorBase):
            s = self.slot.get(id(value._data))
            if s is None:
                self.brk("a tensor made outside the ops")
            return s
        if isinstance(value, (tuple, list)) and any(
                isinstance(v, (_ndarray, TensorBase, tuple, list)) for v in value):
            items = [self._ref(v) for v in value]
            return None if self.broken is not None else Seq(type(value), items)
        if type(value) in _PLAIN or isinstance(value, _CONSTANT):
            return Const(value)
        if isinstance(value, (tuple, list)):  # a shape, axes: plain values only
            for v in value:
                if self._ref(v) is None:
                    return None
            return Const(value)
        if type(value) is slice and all(type(v) in _PLAIN for v in
                                        (value.start, value.stop, value.step)):
            return Const(value)
        if self.hosting and type(value).__name__ in _HOST_OBJECTS:
            return Const(value)  # the same object: a replay draws from it (reads its scale)
        self.brk(f"an argument of type {type(value).__name__}")  # it may hold arrays
        return None

    def _ins(self, inputs, arrays):
        out = []
        for t, a in zip(inputs, arrays):
            if (isinstance(t, TensorBase) and t.grad_fn is None and a is t._data
                    and id(a) not in self.slot and not self.hosting):
                self._late(t)
            elif self.hosting and type(a) is _ndarray and id(a) not in self.slot:
                # a host step's array that is no slot: a buffer of a module the call
                # reads (BatchNorm's running statistics); its tensor is found at the end
                self.unresolved.append(self._add_step(Step(EXT, None, (), {}, 1), [a]) - 0)
                self.sums[-1] = None
            r = self._ref(a if isinstance(t, TensorBase) else t)
            if r is None:
                return None
            out.append(r)
        return tuple(out)

    def _kw(self, args):
        kw = {}
        for k, v in args.items():
            r = self._ref(v)
            if r is None:
                return None
            kw[k] = r
        return kw

    def _maker(self, slot):
        """The kind of the step that made `slot` (None: an external's array)."""
        for st in self.steps:
            if st.index is not None and st.index <= slot < st.index + max(st.n_out, 1):
                return st.kind
        return None

    # ---- the end state ---------------------------------------------------------------
    def finish(self, out_leaves):
        """After the forward: the output slots, or None (broken: the reason says why)."""
        tail = self.tail
        tail.stop()
        if tail.numbers and (tail.bad is not None or not tail.returned
                           or self._counts() != tail.mark):
            self.brk("a Python number (.item()) read before the call's end, or used after "
                     f"it ({tail.bad or 'ops after it'}): the replay would reuse it")
        if self.broken is not None:
            return None
        self._check_externals()
        self._check_python()
        if self.broken is not None:
            return None
        outputs = []
        by_id = {id(t): s for t, s in self.results}
        read_from = {id(v): t for t, v in tail.numbers}  # a returned .item(): its tensor
        for x in out_leaves:
            if isinstance(x, TensorBase) or id(x) in read_from:
                t = x if isinstance(x, TensorBase) else read_from[id(x)]
                s = by_id.get(id(t))
                if s is None and not t._rg and t.grad_fn is None:
                    # an index, a mask or a draw a host or const step made (multinomial's
                    # samples): a tensor on that step's array, remade by the replay (not
                    # an input's or a parameter's own array: that tensor is no result);
                    # in a whole step also an op's result detached (`return
                    # loss.detach()`: its outputs carry no graph either way)
                    s = self.slot.get(id(t._data))
                    kind = None if s is None else self._maker(s)
                    if not (kind in (HOST, CONST) or (self.backwards and kind == OP)):
                        s = None
                if s is None:
                    return self.brk("an output that is no op's result")
                outputs.append(s if t is x else ItemOf(s))
            elif x is None or type(x) in (bool, str):
                outputs.append(Const(x))
            elif isinstance(x, (int, float, complex)):
                # (a number the call's Python computed: an optimizer's lr, a scheduler's
                # epoch may change under the same guards, and a replay runs no Python)
                return self.brk("the call returns a Python number (a replay would return "
                                "the captured one)")
            else:
                return self.brk(f"an output of type {type(x).__name__}")
        del read_from  # (the tail's tensors are no references the checks count)
        tail.numbers.clear()
        uses = {}
        for node in self.nodes:
            if node.hooks:
                return self.brk("a gradient hook in the forward")
            for t in node.inputs or ():  # (None: freed by a backward in the call)
                if isinstance(t, TensorBase):
                    uses[id(t)] = uses.get(id(t), 0) + 1
        for s in range(self.n_ext, len(self.arrays)):
            # a change the tape did not see (`h.data[...] = 0`, a mutated constant): the
            # recorded step would not make what the forward went on with
            if (self.sums[s] is not None and _crc(self.arrays[s]) != self.sums[s]
                    and not (self.moved and self._views_external(self.arrays[s]))):
                return self.brk("an array of the forward changed outside the ops")
        outs = {id(x) for x in out_leaves}
        for t, s in self.results:
            if t._data is not self.arrays[s] or (
                    t._version_counter[0] != self.writes.get(id(t._version_counter), 0)
                    and not (self.moved and self._views_external(t._data))):
                # (a view of a parameter shares its counter: the optimizer's step, after
                # the externals were checked unchanged, moves it)
                return self.brk("an in-place change in the forward")
            # held by: self.results' tuple, `t`, getrefcount's argument, the nodes that
            # read it. One more reference: something outside the graph keeps it (a
            # module attribute...), and a replay would not update it
            if id(t) not in outs and _getrefcount(t) > 3 + uses.get(id(t), 0):
                return self.brk("a tensor of the forward kept outside the graph")
        return outputs


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _has_mask(key):
    stack = [key]
    while stack:
        k = stack.pop()
        if type(k) is _ndarray and k.dtype == np.bool_ and k.ndim:
            return True
        if isinstance(k, (tuple, list)):
            stack.extend(k)
    return False


def _crc(a):
    """A checksum of an array's bytes (None: not an array, as a saved value may be)."""
    if type(a) is not _ndarray:
        return None
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return zlib.crc32(a.reshape(-1).view(np.uint8)) if a.size else 0

"""The compiled call: guard, then replay a capture, capture one, or run eagerly.

Per guard key (guards.py: the call's tensors, the module's state) a list of VARIANTS,
one per capture: the Python values that capture read (python_guards.py: globals and
closure variables) and what became of it: a Plan (replay.py: calls whose values match
replay it), or EAGER (the capture could not be replayed faithfully: the forward read a
tensor's values in Python, a graph break, changed something in place, drew random
numbers outside the library's host steps, ...: such calls run eagerly, which is right).
A capture awaiting its backward (the walk is watched until the next call: schedule.py)
becomes a Plan then; one whose step saw no backward is tried again, TRIES times in all.

Captures per callable are bounded by `tapegrad._dynamo.config.recompile_limit` (torch's
8): past it, calls that match no variant run eagerly, with a one-time warning.
"""
import time
import warnings
import weakref

from .._dynamo import config
from .._dynamo.reset import runners
from .._func.pytree import flatten, unflatten
from ..core import tape as _tape
from ..core.state import state
from ..core.tensor_base import TensorBase, make
from . import guards, python_guards, replay, schedule
from .capture import Capture

EAGER = "eager"
_clock = time.thread_time
TRIES = 2
_LATE = "a parameter's shape, dtype or requires_grad"
_CLOSE, _LONGEST = 1.1, 4  # a trial this close goes on, up to this many times as long


def _failed(pyg):
    """The first of a variant's Python guards that fails (python_guards.py), or None (the
    one test of them, for the quick path and the lookup alike)."""
    return pyg.check() if pyg.items or pyg.modules else None


class Runner:
    def __init__(self, fn, module=None, fullgraph=False):
        self.fn = fn            # the eager call: module.__call__ or the function
        self.module = module
        self.fullgraph = fullgraph
        self.reset()
        runners.add(self)

    def reset(self):
        """Forget every capture (tapegrad._dynamo.reset())."""
        self.cache = {}         # guard key -> [(python guards, Plan or EAGER), ...]
        self.tries = {}         # guard key -> captures that saw no backward
        self.pending = None     # the capture whose backward is being watched
        self.why = {}           # guard key -> why it runs eagerly (for tests and users)
        self.replays = 0        # calls served by a replay (for tests and benchmarks)
        self.captures = 0       # against config.recompile_limit
        self.failed = None      # the last Python guard that failed (for the warning)
        self.warned = False
        self.mcache = [None, None, None]  # guards.key's module part, per structure epoch
        self.last = None  # (plan, 0 eager / 1 replay, time) of a trial call (_trial)
        self.slow = False  # a trial found the replay slower: eager from then on
        self.hot = None  # guards.Last of the variant that replayed last: tested first

    def __call__(self, *args, **kwargs):
        if self.slow:  # a replay lost to eager: this callable runs eagerly, guards and all
            return self.fn(*args, **kwargs)
        if self.pending is not None:
            self._settle()
        hot = self.hot
        if hot is not None and not kwargs:
            # the same key as the last replayed call, tested directly (guards.quick):
            # that variant was the first of its key, so the lookup below would take it
            ext = guards.quick(hot, args, self.mcache)
            if ext is not None:
                entry = hot.entry
                if _failed(hot.pyg) is None:
                    values, kept = entry.run(ext)
                    if values is not None:
                        return self._result(entry, values, kept, ext)
                self.hot = None  # (then the lookup below says why, as it always did)
        key, ext = guards.key(self.module, args, kwargs, self.mcache)
        if key is None:
            return self.fn(*args, **kwargs)
        variants = self.cache.get(key)
        if variants is not None:
            for k, (pyg, entry) in enumerate(variants):
                failed = _failed(pyg)
                if failed is not None:
                    self.failed = failed
                    continue
                if entry is EAGER:
                    return self.fn(*args, **kwargs)
                if entry.trial is not None:
                    if entry.late and not entry.late_ok():
                        self.failed = _LATE
                        continue
                    if self._trial(key, entry):
                        return self.fn(*args, **kwargs)  # (a timed eager call)
                hot = (guards.remember(entry, pyg, self.module, args, kwargs, key,
                                       self.mcache)
                       if k == 0 and entry.trial is None else None)
                values, kept = entry.run(ext)  # (it checks the tensors read as globals)
                if values is None:
                    self.failed = _LATE
                    continue
                self.hot = hot
                return self._result(entry, values, kept, ext)
        if self.captures >= config.recompile_limit:
            self._warn()
            return self.fn(*args, **kwargs)
        return self._capture(key, ext, args, kwargs)

    def _result(self, plan, values, kept, ext):
        """The replayed call's return value."""
        self.replays += 1
        if plan.const_out is not None:
            return plan.const_out[0]
        one = plan.one
        if one is not None and not (one[2] and state.grad_enabled):
            return make(one[1], values[one[0]])  # one tensor, no graph: as outputs() makes it
        if plan.late:
            ext = list(ext) + list(plan.late)
        leaves = replay.outputs(plan, values, kept, ext, state.grad_enabled)
        return unflatten(leaves, plan.spec)

    def _trial(self, key, plan):
        """Is the replay faster than eager? The first calls of a new plan alternate
        eager and replay; each call's time is the thread's CPU time until the next call
        of this callable (so what the call leaves for later, a replayed backward, counts
        too). After `config.trial_calls` of each, a replay no faster than eager is
        dropped: that variant runs eagerly (`tg.compile` never slower than eager).
        True: make this call eagerly."""
        now = _clock()
        last = self.last
        trial = plan.trial
        if last is not None and last[0] is plan:
            trial[last[1]].append(now - last[2])
        n = config.trial_calls
        if min(len(trial[0]), len(trial[1])) >= n and not (
                min(trial[0]) <= min(trial[1]) < min(trial[0]) * _CLOSE
                and len(trial[1]) < _LONGEST * n):
            # (a replay within a few percent of eager is timed longer before it is
            # dropped: on a loaded machine a few calls' minimum is noisy)
            plan.trial = None
            self.last = None
            eager, rep = min(trial[0]), min(trial[1])
            if rep >= eager:
                variants = self.cache[key]
                for k, (pyg, entry) in enumerate(variants):
                    if entry is plan:
                        variants[k] = (pyg, EAGER)
                self.why[key] = (f"the replay was not faster than eager ({rep * 1e6:.0f} us "
                                 f"vs {eager * 1e6:.0f} us a call, CPU time)")
                self.slow = True  # (other keys would be the same graph at other shapes)
                return True
            return False
        kind = 0 if len(trial[0]) <= len(trial[1]) else 1  # 0: eager, 1: replay
        self.last = (plan, kind, _clock())
        return kind == 0

    def explain(self):
        """Every capture of this callable: its guards, then the generated replay (the
        straight-line code a call runs: forward kernels, host and call steps, the
        unrolled backward), or why it runs eagerly."""
        out = []
        for key, variants in self.cache.items():
            for pyg, entry in variants:
                watched = ", ".join(pyg.where) or "none"
                out.append(f"# guards: the call's tensors and the module state; Python values: "
                           f"{watched}")
                if entry is EAGER:
                    out.append(f"# runs eagerly: {self.why.get(key)}\n")
                else:
                    out.append(entry.code)
        return "\n".join(out) if out else "# nothing captured yet (call it first)\n"

    def _warn(self):
        if self.warned:
            return
        self.warned = True
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        if self.module is not None:
            name = type(self.module).__name__ + ".forward"
        warnings.warn(
            f"tg.compile: {name} hit config.recompile_limit "
            f"({config.recompile_limit}): calls that match none of its captures run "
            f"eagerly from now on (last change seen: {self.failed or 'the tensors or module state'}). "
            f"Raise tapegrad._dynamo.config.recompile_limit to capture more.", stacklevel=3)

    @staticmethod
    def _plan(*args):
        plan = replay.Plan(*args)
        if config.fallback_if_slower:
            plan.trial = ([], [])  # (eager times, replay times): see _trial
        return plan

    def _add(self, key, pyg, entry, why=None):
        self.cache.setdefault(key, []).append((pyg, entry))
        if why is not None:
            self.why[key] = why

    def _capture(self, key, ext, args, kwargs):
        self.captures += 1
        fn = getattr(self.fn, "__func__", self.fn)
        cap = Capture(ext, self.fullgraph, getattr(fn, "__code__", None))
        cap.before = [a.copy() for a in cap.ext_arrays]
        _tape.begin(cap)
        try:
            with python_guards.watch(self.fn, cap.brk) as pyg:
                cap.python = pyg  # (what the call's Python changes: capture.py)
                out = self.fn(*args, **kwargs)
        finally:
            _tape.end()
            cap.tail.stop()  # (the trace hook of a `return x.item()`: tail_reads.py)
        leaves, spec = flatten(out)
        outputs = cap.finish(leaves)
        if outputs is not None and (cap.late or cap.unresolved):
            held = pyg.tensors() + list(ext)
            ids = set(map(id, held))
            if not (all(id(t) in ids for t in cap.late) and cap.resolve(held)):
                outputs = None
                cap.brk("a tensor the call made outside the ops, or read through an "
                        "object the guards do not see (pass it as an argument)")
        if outputs is not None and guards.key(self.module, args, kwargs)[0] != key:
            outputs = None  # the forward changed what the guards look at (a counter...)
            cap.brk("the forward changed a module attribute, a parameter or the grad mode")
        if outputs is None:
            self._add(key, pyg, EAGER, cap.broken)
            return out
        tensors = [x if isinstance(x, TensorBase) else None for x in leaves]
        if cap.backwards or not any(t is not None and t._rg for t in tensors):
            self._add(key, pyg, self._plan(cap, outputs, tensors, None, spec))
            return out
        watch = schedule.Watch(cap.nodes)
        watch.finalizer = weakref.finalize(self, watch.stop)  # dropped before its next call
        self.pending = (key, pyg, cap, outputs, tensors, spec, watch)
        return out

    def _settle(self):
        """The watched backward is over (a new call came): keep its schedule, or not."""
        key, pyg, cap, outputs, tensors, spec, watch = self.pending
        self.pending = None
        watch.stop()
        watch.finalizer.detach()
        sch = schedule.build(cap, outputs, watch.events)
        n_events = len(watch.events)
        watch.events.clear()  # the step's tensors and nodes
        if sch is not None:
            self._add(key, pyg, self._plan(cap, outputs, tensors, sch, spec))
            return
        tried = self.tries[key] = self.tries.get(key, 0) + 1
        if not n_events and tried < TRIES:
            return  # the next call with this key captures again
        self._add(key, pyg, EAGER,
                  "no backward seen after the captured call" if not n_events
                  else "a backward one compiled node cannot reproduce")


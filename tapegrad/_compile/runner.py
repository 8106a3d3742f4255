"""The compiled call: guard, then replay a capture, capture one, or run eagerly.

Per guard key (guards.py) a state: nothing yet (the next call captures: eager, recorded),
a capture awaiting its backward (the walk is watched until the next call: schedule.py),
a Plan (replay.py: later calls replay it), or EAGER for good (the capture could not be
replayed faithfully: the forward read a value in Python, changed something in place,
drew random numbers outside the library's host steps, ...; torch's graph breaks also
just work). A capture whose step saw no backward is tried again, TRIES times in all.
"""
import weakref

from .._func.pytree import flatten, unflatten
from ..core import tape as _tape
from ..core.state import state
from ..core.tensor_base import TensorBase
from . import guards, replay, schedule
from .capture import Capture

EAGER = "eager"
TRIES = 2
LIMIT = 8  # guard keys per compiled callable (torch's cache_size_limit): then eager


class Runner:
    def __init__(self, fn, module=None):
        self.fn = fn            # the eager call: module.__call__ or the function
        self.module = module
        self.cache = {}         # guard key -> Plan, EAGER, or the captures tried so far
        self.pending = None     # the capture whose backward is being watched
        self.why = {}           # guard key -> why it runs eagerly (for tests and users)
        self.replays = 0        # calls served by a replay (for tests and benchmarks)

    def __call__(self, *args, **kwargs):
        if self.pending is not None:
            self._settle()
        key, ext = guards.key(self.module, args, kwargs)
        if key is None:
            return self.fn(*args, **kwargs)
        entry = self.cache.get(key, 0)
        if type(entry) is replay.Plan:
            self.replays += 1
            values, kept = replay.forward(entry, [t._data for t in ext])
            leaves = replay.outputs(entry, values, kept, ext, state.grad_enabled)
            return unflatten(leaves, entry.spec)
        if entry == EAGER or (entry == 0 and len(self.cache) >= LIMIT):
            return self.fn(*args, **kwargs)
        return self._capture(key, ext, args, kwargs, entry)

    def _capture(self, key, ext, args, kwargs, tried):
        cap = Capture(ext)
        before = [a.copy() for a in cap.ext_arrays]
        _tape.begin(cap)
        try:
            out = self.fn(*args, **kwargs)
        finally:
            _tape.end()
        leaves, spec = flatten(out)
        outputs = cap.finish(leaves)
        if outputs is not None and guards.key(self.module, args, kwargs)[0] != key:
            outputs = None  # the forward changed what the guards look at (a counter...)
            cap.brk("the forward changed a module attribute, a parameter or the grad mode")
        if outputs is not None:
            for a, b in zip(cap.ext_arrays, before):
                if id(a) not in cap.host_args and not _same(a, b):
                    outputs = None
                    cap.brk("an input, parameter or buffer changed outside the ops")
                    break
        if outputs is None:
            self.cache[key] = EAGER
            self.why[key] = cap.broken
            return out
        tensors = [x if isinstance(x, TensorBase) else None for x in leaves]
        if not any(t is not None and t._rg for t in tensors):
            self.cache[key] = replay.Plan(cap, outputs, tensors, None, spec)
            return out
        self.cache[key] = tried + 1
        watch = schedule.Watch(cap.nodes)
        watch.finalizer = weakref.finalize(self, watch.stop)  # dropped before its next call
        self.pending = (key, cap, outputs, tensors, spec, watch, tried + 1)
        return out

    def _settle(self):
        """The watched backward is over (a new call came): keep its schedule, or not."""
        key, cap, outputs, tensors, spec, watch, tried = self.pending
        self.pending = None
        watch.stop()
        watch.finalizer.detach()
        sch = schedule.build(cap, outputs, watch.events)
        n_events = len(watch.events)
        watch.events.clear()  # the step's tensors and nodes
        if sch is not None:
            self.cache[key] = replay.Plan(cap, outputs, tensors, sch, spec)
        elif not n_events and tried < TRIES:
            self.cache[key] = tried
        else:
            self.cache[key] = EAGER
            self.why[key] = ("no backward seen after the captured call" if not n_events
                             else "a backward one compiled node cannot reproduce")


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()

"""The backward order of a captured forward, learned from the eager backward of that step.

Gradients are sums, and floating-point sums depend on their grouping: a replayed backward
gives eager's bits only if every tensor receives its contributions in eager's order. So
the captured step's own backward is watched (an observer of the walk, core/engine.py:
it sees each input gradient a rule returns, in walk order) and its events become the
replay's schedule: the captured nodes in the order they ran, each with the inputs it sent
a gradient to, in order.

An event's target is a tensor of the capture (a step's output: summed in the replay),
an external tensor (an input, parameter or buffer: handed to the engine as one input
entry of the compiled node per event, so the engine adds them as eager did), or, for
nodes outside the capture, anything. `build` refuses (returns None) what one compiled
node cannot reproduce: an external that also gets gradient from outside the capture (its
sum would be grouped differently), an output whose outside contributions do not come
first, a node that ran twice.
"""
from ..core.standin import value_key
from ..core.state import state
from ..core.tensor_base import TensorBase

NAME = "tg.compile"


class Watch:
    """Records the walk's events; one per capture awaiting its backward. It stops itself
    once every edge of the captured nodes has carried a gradient (the usual end: then no
    later walk pays for it, and nothing of the step is held), else at the compiled
    callable's next call, or when the callable is gone (runner.py)."""

    def __init__(self, nodes):
        self.events = []
        self.on = True
        self.observers = state.observers  # this thread's (stop() may run in another)
        events = self.events
        # (a node an earlier backward of the call freed has no inputs left: None)
        left = [sum(1 for n in nodes for t in (n.inputs or ())
                    if isinstance(t, TensorBase) and t._rg)]

        def observe(node, i, g, gi):
            if not self.on:  # stopped during this walk (the walk keeps its observers)
                return
            events.append((node, node.inputs[i]))
            events.append(i)
            if node in nodes:
                left[0] -= 1
                if not left[0]:
                    self.stop()

        self.fn = observe
        self.observers[NAME] = observe

    def stop(self):
        if self.on:
            self.on = False
            if self.observers.get(NAME) is self.fn:
                del self.observers[NAME]


class Schedule:
    """`order`: (step number, ((input i, target), ...)) in walk order; a target is
    ("r", step number, piece, slot, shape, dtype) or ("e", entry number). `entries`: the external
    (index into the capture's externals) of each entry. `seeded`: the output numbers
    that got gradient from outside in the captured step."""

    __slots__ = ("order", "entries", "seeded")

    def __init__(self, order, entries, seeded):
        self.order, self.entries, self.seeded = order, entries, seeded


def build(cap, outputs, events):
    """The schedule from the watched events, or None (no backward seen, or unsafe)."""
    made = cap.made  # value_key -> (step number, piece, slot, shape, dtype), as made
    ext = {value_key(t): k for k, t in enumerate(cap.externals)}
    out_of = {}
    for k, s in enumerate(outputs):
        if isinstance(s, int):
            out_of.setdefault(s, k)
    order, entries, seen = [], [], set()
    outside_to = {}   # output number -> "o"/"i" sequence of its contributions
    inside_ext = set()
    outside_ext = set()
    cur = None
    for e in range(0, len(events), 2):
        node, t = events[e]
        i = events[e + 1]
        j = cap.nodes.get(node)
        key = value_key(t)
        m = made.get(key)
        if j is None:  # a node outside the capture
            if m is not None:
                if m[2] not in out_of:
                    return None  # into a tensor the capture does not return: impossible
                outside_to.setdefault(out_of[m[2]], []).append("o")
            elif key in ext:
                outside_ext.add(ext[key])
            continue
        if cur is None or cur[0] != j:
            if j in seen:
                return None  # the node ran twice (two backward calls on one graph)
            seen.add(j)
            cur = (j, [])
            order.append(cur)
        if m is not None:
            if m[2] in out_of:
                outside_to.setdefault(out_of[m[2]], []).append("i")
            cur[1].append((i, ("r",) + m))
        elif key in ext:
            inside_ext.add(ext[key])
            cur[1].append((i, ("e", len(entries))))
            entries.append(ext[key])
        else:
            return None
    if not order:
        return None
    if inside_ext & outside_ext:
        return None
    for seq in outside_to.values():
        # the engine hands the outside total over at once; eager's sum has the same
        # grouping if the outside contributions came first (or there are only two:
        # a + b == b + a exactly)
        if len(seq) > 2 and "i" in seq and "o" in seq[seq.index("i"):]:
            return None
    seeded = set(k for k, seq in outside_to.items() if "o" in seq)
    for j, evs in order:  # a node that ran with nothing flowing in was a root
        st = cap.steps[j]
        for k, s in enumerate(outputs):
            if isinstance(s, int) and st.index <= s < st.index + st.n_out:
                if k not in outside_to:
                    seeded.add(k)
    order = tuple((j, tuple(evs)) for j, evs in order)
    return Schedule(order, tuple(entries), frozenset(seeded))

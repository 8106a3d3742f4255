"""The walk's observers: anomaly mode and strict mode check every input gradient.

The walk calls each function in the thread's `state.observers` (core/state.py) as
`fn(node, i, g, gi)` for every input gradient a rule computes (`g` flows into `node`'s
output, `gi` is the rule's result for input `i`, before broadcasting is undone). With
no observer the cost in the hot loop is an empty loop.
"""
from ..core.state import state


def install(name, fn):
    """Activate checker `fn(node, i, g, gi)` under `name` (replacing one of that name)."""
    state.observers[name] = fn


def uninstall(name):
    state.observers.pop(name, None)


def active(name):
    return name in state.observers

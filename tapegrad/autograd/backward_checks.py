"""One hook slot in the engine, several checkers: anomaly mode and strict mode.

The engine calls `engine._anomaly_hook[0](node, i, g, gi)` for every input gradient a
rule computes (`g` flows into `node`'s output, `gi` is the rule's result for input `i`,
before broadcasting is undone). When no checker is active the slot holds None, so the
cost in the hot loop is one `is not None` test. This module owns the slot: checkers
register by name and the slot gets the single checker or a small fan-out function.
"""
from . import engine as _engine

_checkers = {}


def install(name, fn):
    """Activate checker `fn(node, i, g, gi)` under `name` (replacing one of that name)."""
    _checkers[name] = fn
    _refresh()


def uninstall(name):
    _checkers.pop(name, None)
    _refresh()


def active(name):
    return name in _checkers


def _refresh():
    fns = list(_checkers.values())
    if not fns:
        _engine._anomaly_hook[0] = None
    elif len(fns) == 1:
        _engine._anomaly_hook[0] = fns[0]
    else:
        def fan_out(node, i, g, gi):
            for f in fns:
                f(node, i, g, gi)
        _engine._anomaly_hook[0] = fan_out

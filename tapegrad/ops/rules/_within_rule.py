"""`within_rule(xp, op, *args, **kw)`: apply one table entry from inside another's rule.

A rule is written once against the array namespace `xp` (ops/registry.py). When it
needs another table op (the adjoint of a linear op, a fused backward kernel, a value
the forward saved), it calls it through this function: under NumPy (an ordinary
backward, a forward-mode JVP) the op's raw forward runs on arrays and nothing is
recorded; under the differentiable namespace (create_graph=True) the op is applied
to Tensors and recorded, so its own rules give the next derivative.

This is THE place a rule's behaviour depends on which namespace it got: the one
`xp is np` test the table-level rules of nn_ops, conv_ops, attention and indexing
share.
"""
import numpy as np

from ...core.record import apply


def within_rule(xp, op, *args, **kw):
    """`op` on `args`: its raw forward under NumPy, recorded (`apply`) otherwise."""
    if xp is np:
        out = op.forward(*args, **kw)
        return out[0] if op.has_extra else out
    return apply(op, *args, **kw)

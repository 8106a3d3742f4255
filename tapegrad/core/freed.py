"""The freed-graph error, with its culprit named: which tensor the new graph reaches.

PyTorch's message ("Trying to backward through the graph a second time ...") suggests
only `retain_graph=True`. The usual cause is different: a tensor made in the previous
step (an RNN's hidden state, a running total of losses) is carried into this step, so
the new graph reaches the old one, whose saved values the previous backward freed.
The fix is to `.detach()` it where the step starts. When two losses share a part of
the graph, the fix is one backward of their sum (or `retain_graph=True` on the first).

`freed_message(roots, node)` runs only when the walk already met a freed node, so it
may walk the graph a second time to find the edge from a live node into a freed one:
the error path costs nothing on the hot path. The culprit's file:line is known only
when sites were recorded as it was made (anomaly mode); otherwise the message gives
its op and shape and says how to get the line.
"""
from . import rebase
from .tensor_base import TensorBase

FREED = ("Trying to backward through the graph a second time (or directly access saved "
         "tensors after they have already been freed). Saved intermediate values of the "
         "graph are freed when you call .backward() or autograd.grad(). Specify "
         "retain_graph=True if you need to backward through the graph a second time or if "
         "you need to access saved tensors after calling backward.")


def freed_message(roots, freed_node):
    """FREED plus, when a live node of this graph uses a tensor whose node was freed,
    that tensor (op, shape, site), its user, and the two usual fixes."""
    msg = FREED + f" (op: {freed_node.op.name})"
    found = _boundary(roots)
    if found is None:  # a root itself was already backpropagated: retain_graph is the hint
        return msg
    t, user = found
    made = t.grad_fn
    where = f" at {made.site}" if made.site else ""
    used = f" at {user.site}" if user.site else ""
    msg += (f"\nThis graph reaches a tensor whose graph an earlier backward already freed: "
            f"the tensor of shape {tuple(t._data.shape)} made by `{made.op.name}`{where}, used by "
            f"`{user.op.name}`{used}. If it is carried over from the previous step (an RNN's "
            "hidden state, a running total), cut it where the step starts: `h = h.detach()`. "
            "If two losses share it, call backward once on their sum (or pass "
            "retain_graph=True to the first backward).")
    if not made.site:
        msg += (" To see the file:line where it was made, run the steps under "
                "tg.autograd.detect_anomaly().")
    return msg


def _boundary(roots):
    """(tensor, live node using it) for the first edge from a live node into a freed
    one (an explicit stack, as in the walk), or None."""
    stack = [r.grad_fn for r in roots if r.grad_fn is not None and not r.grad_fn.freed]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for i, t in enumerate(node.inputs):
            if not isinstance(t, TensorBase):
                continue
            if rebase.used.any and t._version_counter[0]:
                t = rebase.resolve(node, i, t)
            p = t.grad_fn
            if p is None or not t._rg:
                continue
            if p.freed:
                return t, node
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return None


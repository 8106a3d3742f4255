"""How much memory the live graph behind a tensor holds for backward.

    loss = model(x).pow(2).mean()
    tg.utils.memory.saved_bytes(loss)       # bytes backward would read

Every node of the graph keeps its inputs, its output (`ans`) and any array keyword
arguments (masks, indices) until backward frees it. `saved_bytes` walks the nodes
reachable from a tensor (an explicit stack, no recursion) and adds up those arrays,
counting each buffer once: arrays that share memory (views of one base, the same
array saved by two nodes) are counted by their base's size, once.

By default leaf tensors (parameters, the input batch) are left out: they exist with
or without the graph. `include_leaves=True` counts them too. A tensor computed under
`no_grad()` has no graph: 0 bytes.
"""
import numpy as np

from ..core.tensor_base import TensorBase

__all__ = ["saved_bytes", "saved_arrays", "graph_nodes"]


def _base(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def graph_nodes(*tensors):
    """The live (not yet freed) nodes reachable from `tensors`, in visit order."""
    out, seen = [], set()
    stack = [t.grad_fn for t in tensors if isinstance(t, TensorBase) and t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.freed or node.inputs is None:
            continue
        out.append(node)
        for t in node.inputs:
            if isinstance(t, TensorBase) and t.grad_fn is not None:
                stack.append(t.grad_fn)
    return out


def saved_arrays(*tensors, include_leaves=False):
    """{id(base): base array} of every distinct buffer the live graph holds."""
    held = {}

    def add(a):
        if isinstance(a, np.ndarray) and a.size:
            b = _base(a)
            held.setdefault(id(b), b)

    for node in graph_nodes(*tensors):
        for t in node.inputs:
            if isinstance(t, TensorBase):
                if t.grad_fn is not None or include_leaves:
                    add(t._data)
            else:
                add(t)
        add(node.ans)
        for v in node.rule_kwargs().values():
            add(v)
    return held


def saved_bytes(*tensors, include_leaves=False):
    """Bytes of the distinct arrays held by the live graph behind `tensors`."""
    return int(sum(a.nbytes for a in saved_arrays(*tensors, include_leaves=include_leaves)
                   .values()))

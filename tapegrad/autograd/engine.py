"""The backward pass: reverse topological walk, rule application, accumulation.

    1. count, for every node reachable from the roots, how many edges point at it
       (an explicit stack, no recursion: a million-node chain is fine);
    2. start from the roots' nodes; a node whose count drops to zero has received
       every gradient it will get, so its (summed) gradient is complete: apply its
       rules, send each input its share, summed back to the input's shape;
    3. leaves collect their total and accumulate it into `.grad`;
    4. unless `retain_graph`, free each node's saved values once it has run.

`backward` accumulates into leaves' `.grad`; `grad` returns the gradients instead.
"""
import sys
import weakref

import numpy as np

from . import graph as _graph
from . import grad_mode
from . import saved as _saved
from . import hooks as hook_runner

FREED = ("Trying to backward through the graph a second time (or directly access saved "
         "tensors after they have already been freed). Saved intermediate values of the "
         "graph are freed when you call .backward() or autograd.grad(). Specify "
         "retain_graph=True if you need to backward through the graph a second time or if "
         "you need to access saved tensors after calling backward.")

_ndarray = np.ndarray
_getrefcount = sys.getrefcount


def sum_to(xp, g, shape):
    """Undo broadcasting: sum `g` over the axes that broadcasting added or stretched."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if lead or g.shape != shape:
        g = xp.reshape(g, shape)
    return g


_ONES = {}


def _one(data):
    """The implicit seed dL/dL = 1, shared read-only per (shape, dtype)."""
    key = (data.shape, data.dtype)
    one = _ONES.get(key)
    if one is None:
        one = np.ones(data.shape, data.dtype)
        one.flags.writeable = False
        _ONES[key] = one
    return one


def _seed(root, gradient, create_graph):
    Tensor = _graph.Tensor
    if gradient is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs: this tensor has "
                f"shape {tuple(root.shape)}. Pass a gradient of that shape, e.g. "
                f"y.backward(torch.ones_like(y)), or reduce it first (y.sum().backward()).")
        g = _one(root.data)
        return Tensor(g.copy()) if create_graph else g
    if isinstance(gradient, Tensor):
        g = gradient if create_graph else gradient.data
    else:
        g = np.asarray(gradient, dtype=root.data.dtype)
        if create_graph:
            g = Tensor(g)
    if tuple(g.shape) != tuple(root.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output has a shape of {tuple(g.shape)} "
                           f"and output has a shape of {tuple(root.shape)}.")
    if g.dtype != root.data.dtype:  # PyTorch casts grad_output to the output's dtype
        g = g.to(root.data.dtype) if isinstance(g, Tensor) else g.astype(root.data.dtype)
    return g


def _check_roots(roots):
    for i, r in enumerate(roots):
        if not isinstance(r, _graph.Tensor):
            raise TypeError(f"backward: expected Tensors, got {type(r).__name__}")
        if not r._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")


def _count_edges(roots):
    """Phase 1: how many edges from reachable nodes point at each node."""
    Tensor = _graph.Tensor
    deps = {}
    rebased = _inplace_old_used[0]
    stack = [r.grad_fn for r in roots if r.grad_fn is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        if node.freed:
            raise RuntimeError(FREED + f" (op: {node.op.name})")
        i = -1
        for t in node.inputs:
            i += 1
            if type(t) is Tensor or isinstance(t, Tensor):
                if rebased and t._version[0]:
                    t = _resolve(node, i, t)
                p = t.grad_fn
                if p is not None and t._rg:
                    deps[p] = deps.get(p, 0) + 1
                    if p not in seen:
                        seen.add(p)
                        stack.append(p)
    return deps


# In-place ops (ops/inplace.py) move a tensor's history to a new node and record here
# which tensor object holds the value from before the change: node -> old tensor.
_inplace_old = weakref.WeakKeyDictionary()
_inplace_old_used = [False]


def _resolve(node, i, t):
    """Input i of `node` as it was when `node` was recorded: if `t` was changed in place
    afterwards, its current grad_fn describes the NEW value; follow the in-place nodes
    back to the tensor that held the recorded version (PyTorch's edges do this)."""
    vers = node.versions
    v = vers[i] if vers is not None else 0
    p = t.grad_fn
    while p is not None:
        old = _inplace_old.get(p)
        if old is None or p.versions[-1] <= v:
            break
        t = old
        p = t.grad_fn
    return t


def _check_versions(node):
    """Raise if a tensor this node's rule will read was changed in place since."""
    ins = node.inputs
    vers = node.versions
    op = node.op
    if vers is None:  # every input (and the output) was at version 0 when recorded
        vers = [0 if hasattr(t, "_version") else None for t in ins] + [0]
    saves, saves_ans = _saved.reads(node)  # what the rules that will run read
    for i in saves:
        v = vers[i]
        if v is not None and ins[i]._version[0] != v:
            t = ins[i]
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: input {i} ({_input_name(op, i)}) of {op.name}, a "
                f"tensor of shape {tuple(t.shape)}, is at version {t._version[0]}; expected "
                f"version {v} instead. Hint: avoid the in-place change, or clone() the "
                "tensor before changing it.")
    if saves_ans and node.out_version[0] != vers[-1]:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: the output of {op.name} is at version "
            f"{node.out_version[0]}; expected version {vers[-1]} instead. Hint: avoid the "
            "in-place change, or clone() the tensor before changing it.")


def _input_name(op, i):
    return op.input_names[i] if i < len(op.input_names) else f"input{i}"


def run(roots, seeds, retain_graph, create_graph, capture=None, accumulate=True):
    """The walk. `capture`: tensors whose gradients to return (autograd.grad)."""
    Tensor = _graph.Tensor
    deps = _count_edges(roots)
    pending = {}
    leaf_grads = {}
    captured = {}
    capture_nodes = {}
    if capture is not None:
        for i, t in enumerate(capture):
            if t.grad_fn is not None:
                capture_nodes.setdefault(t.grad_fn, []).append(i)
    if create_graph:
        from ..ops.xp import tensor_namespace as xp
    else:
        xp = np

    ready = []
    for r, s in zip(roots, seeds):
        node = r.grad_fn
        if node is None:  # the root is itself a leaf
            leaf_grads[r] = leaf_grads[r] + s if r in leaf_grads else s
            continue
        if node in pending:
            pending[node] = pending[node] + s
        else:
            pending[node] = s
            if deps.get(node, 0) == 0:
                ready.append(node)

    prev_mode = grad_mode._state["enabled"]
    grad_mode._state["enabled"] = bool(create_graph)
    anomaly = _anomaly_hook[0]
    pop_pending = pending.pop
    rebased = _inplace_old_used[0]
    try:
        while ready:
            node = ready.pop()
            g = pop_pending(node, None)
            ins = node.inputs
            if g is not None:
                if node.hooks:
                    g = hook_runner.run_node_hooks(node, g)
                if capture_nodes and node in capture_nodes:
                    for i in capture_nodes[node]:
                        captured[i] = g
                # one pass: the rules' arguments, and whether anything changed in place
                # since the node was recorded (versions None = all were 0 then). Only
                # then is the detailed check (what the rule reads) worth its cost.
                vers = node.versions
                changed = node.out_version[0] != (0 if vers is None else vers[-1])
                arrays = []
                k = 0
                for t in ins:
                    if isinstance(t, Tensor):
                        arrays.append(t.data)
                        v = t._version[0]
                        if v and (vers is None or v != vers[k]):
                            changed = True
                    else:
                        arrays.append(t)
                    k += 1
                if changed:
                    _check_versions(node)
                vjps = node.op.vjps
                kw = node.kw
                if create_graph:
                    arrays = ins
                    ans = _recompute(node)
                else:
                    ans = node.ans
            i = -1
            for t in ins:
                i += 1
                if not isinstance(t, Tensor):
                    continue
                if rebased and t._version[0]:
                    t = _resolve(node, i, t)
                if not t._rg:
                    continue
                p = t.grad_fn
                if g is not None:
                    rule = vjps[i]
                    gi = None if rule is None else rule(xp, g, ans, *arrays, **kw)
                    if gi is not None:
                        if anomaly is not None:
                            anomaly(node, i, g, gi)
                        data = t.data
                        if gi.shape != data.shape:
                            gi = sum_to(xp, gi, data.shape)
                        if gi.dtype != data.dtype:
                            gi = (gi.to(data.dtype) if isinstance(gi, Tensor)  # create_graph
                                  else gi.astype(data.dtype))
                        if p is None:
                            leaf_grads[t] = leaf_grads[t] + gi if t in leaf_grads else gi
                        elif p in pending:
                            pending[p] = pending[p] + gi
                        else:
                            pending[p] = gi
                if p is not None:
                    d = deps[p] - 1
                    deps[p] = d
                    if d == 0:
                        ready.append(p)
            if not retain_graph:
                node.inputs = None
                node.ans = None
                node.freed = True
                if node.kw:  # saved arrays (conv columns, norm statistics) go too
                    node.kw = {k: v for k, v in node.kw.items()
                               if not isinstance(v, np.ndarray)}
    finally:
        grad_mode._state["enabled"] = prev_mode

    if capture is not None:
        for i, t in enumerate(capture):
            if t.grad_fn is None and t in leaf_grads:
                captured[i] = leaf_grads[t]
    if accumulate:
        g = gi = None  # drop the walk's references before judging who holds a gradient
        for t in list(leaf_grads):
            g = leaf_grads.pop(t)
            # references: this variable and getrefcount's argument, nothing else
            exclusive = _getrefcount(g) <= 2
            _accumulate(t, g, create_graph, hook_runner, exclusive)
    return captured


def _recompute(node):
    """Under create_graph the rules need `ans` as a differentiable tensor: run the op
    again on the input tensors (recorded), rather than keep a reference to the output
    (which would make a reference cycle)."""
    return _graph.apply(node.op, *node.inputs, **node.kw)


def _accumulate(t, g, create_graph, hook_runner, exclusive=False):
    """Add `g` into `t.grad`. `exclusive`: nothing outside the engine holds `g`, so a
    fresh array may become `.grad` as it is instead of being copied (PyTorch's
    AccumulateGrad steals a gradient whose use count is 1 in the same way)."""
    Tensor = _graph.Tensor
    if t._hooks:
        g = hook_runner.run_tensor_hooks(t, g)
        exclusive = False
    if create_graph:
        gt = g if isinstance(g, Tensor) else Tensor(g)
        t.grad = gt if t.grad is None else t.grad + gt
    else:
        if isinstance(g, Tensor):
            g = g.data
        if t.grad is None:
            if (exclusive and type(g) is _ndarray and g.flags.owndata and g.flags.writeable
                    and g.dtype == t.data.dtype and g.shape == t.data.shape):
                t.grad = _graph._make(g, False, None)
            else:
                t.grad = _graph._make(np.array(g, dtype=t.data.dtype, copy=True), False, None)
        elif t.grad.grad_fn is not None or t.grad.data.shape != t.data.shape:
            t.grad = _graph._make(t.grad.data + g, False, None)
        else:
            buf = t.grad.data
            if buf.flags.writeable:
                np.add(buf, g, out=buf, casting="unsafe")
            else:
                t.grad.data = buf + g
            t.grad._version[0] += 1
    if t._post_hooks:
        hook_runner.run_post_accumulate_hooks(t)


# Anomaly mode installs a checker here: checker(node, input_index, g, grad_for_input).
_anomaly_hook = [None]


def _start(roots, grad_outputs, retain_graph, create_graph):
    """Shared by backward() and grad(): the roots as a list, their seed gradients (the
    implicit 1 for a scalar), and retain_graph's default (= create_graph)."""
    Tensor = _graph.Tensor
    roots = [roots] if isinstance(roots, Tensor) else list(roots)
    _check_roots(roots)
    if grad_outputs is None:
        grad_outputs = [None] * len(roots)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    seeds = [_seed(r, g, create_graph) for r, g in zip(roots, grad_outputs)]
    return roots, seeds, create_graph if retain_graph is None else retain_graph


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of `tensors` w.r.t. the graph's leaves and accumulate it."""
    Tensor = _graph.Tensor
    tensors, seeds, retain_graph = _start(tensors, grad_tensors, retain_graph, create_graph)
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        grads = run(tensors, seeds, retain_graph, create_graph, capture=inputs,
                    accumulate=False)
        for i, t in enumerate(inputs):
            if i in grads:
                _accumulate(t, grads[i], create_graph, hook_runner)
        return
    run(tensors, seeds, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Return d(outputs)/d(inputs) as a tuple, without touching any `.grad`."""
    Tensor = _graph.Tensor
    inputs_t = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    outputs, seeds, retain_graph = _start(outputs, grad_outputs, retain_graph, create_graph)
    for i, t in enumerate(inputs_t):
        if not isinstance(t, Tensor) or not t._rg:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not "
                               "require grad")
    got = run(outputs, seeds, retain_graph, create_graph, capture=inputs_t, accumulate=False)
    result = []
    for i, t in enumerate(inputs_t):
        if i not in got:
            if materialize_grads:
                result.append(_graph._make(np.zeros_like(t.data), False, None))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}, shape {tuple(t.shape)}) "
                    "appears to not have been used in the graph. Set allow_unused=True if "
                    "this is the desired behavior.")
            result.append(None)
            continue
        g = got[i]
        if t._hooks and t.grad_fn is None:  # a leaf's hooks shape what grad() returns too
            g = hook_runner.run_tensor_hooks(t, g)
        if isinstance(g, Tensor):
            result.append(g)
        else:
            result.append(_graph._make(np.array(g, dtype=t.data.dtype, copy=True), False, None))
    return tuple(result)

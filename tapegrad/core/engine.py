"""The backward pass: reverse topological walk, rule application, accumulation.

    1. count, for every node reachable from the roots, how many edges point at it
       (an explicit stack, no recursion: a million-node chain is fine);
    2. start from the roots' nodes; a node whose count drops to zero has received
       every gradient it will get, so its (summed) gradient is complete: run its
       rules, send each input its share, summed back to the input's shape;
    3. leaves collect their total and accumulate it into `.grad`;
    4. unless `retain_graph`, free each node's saved values once it has run.

`backward` accumulates into leaves' `.grad`; `grad` returns the gradients instead.
The walk (`run`) calls small named pieces at marked points: hooks and capture at a
node (`_at_node`), the rules (`_input_grads`, with the in-place version check), the
observers (anomaly, strict, explain: `state.observers`), in-place rebasing
(`rebase.resolve`), freeing (`_free`), accumulation (`accumulate`).
"""
import gc

import numpy as np

from . import hooks as _hooks
from . import opmath as _opmath
from . import rebase
from .connect import connect_all
from .freed import freed_message
from .state import state
from .tensor_base import TensorBase, like, make as _make

_ndarray = np.ndarray
_float16 = np.dtype("float16")
_NONE = {}  # no tensor to capture (backward()); never written to
_add_reduce = np.add.reduce
_gc_isenabled, _gc_disable, _gc_enable = gc.isenabled, gc.disable, gc.enable


def sum_to(xp, g, shape):
    """Undo broadcasting: sum `g` over the axes that broadcasting added or stretched.
    The added (leading) axes are summed away, the stretched ones kept as size 1, so the
    result has `shape` without a reshape: it is the reduction's own array, which the
    engine keeps as `.grad` (a reshaped view of it would be copied)."""
    gshape = tuple(g.shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0:  # (a gradient of lower rank than its input: only a reshape can fit it)
        return xp.reshape(g, shape)
    total = _add_reduce if xp is np else xp.sum  # (np.sum: the same call, 3 frames more)
    if lead:
        g = total(g, axis=tuple(range(lead)))
        if not shape and xp is np:  # every axis summed: NumPy returns a scalar, not an array
            return np.asarray(g)
        if g.shape == shape:  # nothing stretched (a bias's gradient): done
            return g
    stretched = tuple(i for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
    if stretched:
        g = total(g, axis=stretched, keepdims=True)
    return g


def run(roots, seeds, retain_graph, create_graph, capture=None, foreign=None):
    """The walk. Returns (leaf gradients {tensor: grad}, captured {index: grad}) where
    `capture` lists tensors whose gradients autograd.grad returns. `foreign`: a list the
    walk appends the arrays it got from outside the engine to (what a node hook returned;
    a custom Function's backward adds its results through `state.foreign`), for
    `accumulate_all`; the caller puts the seeds in it."""
    deps = _count_edges(roots)
    pending, leaf_grads = {}, {}
    ready = _start_nodes(roots, seeds, deps, pending, leaf_grads)
    at_node = (roots[0], _capture_nodes(capture) if capture else _NONE, {},
               _NONE if foreign is None else foreign)
    xp = seeds[0].__array_namespace__() if create_graph else np
    prev, prev_retain, prev_foreign = state.grad_enabled, state.retain_graph, state.foreign
    state.grad_enabled = bool(create_graph)
    state.retain_graph = retain_graph
    state.foreign = foreign  # a custom Function's backward adds its results (function.py)
    # The cyclic GC is paused for the walk: the graph has no cycles (nodes never point
    # at their outputs), but the walk frees nodes and makes containers in large numbers,
    # so the collector would run again and again over every live graph object (with a
    # 100,000-node graph, most of the walk's time). Reference counting frees the graph;
    # a GC the user switched off stays off.
    gc_was_on = _gc_isenabled()
    if gc_was_on:
        _gc_disable()
    try:
        _walk(ready, deps, pending, leaf_grads, xp, create_graph, retain_graph, at_node)
    finally:
        state.grad_enabled = prev
        state.retain_graph = prev_retain
        state.foreign = prev_foreign
        if gc_was_on:
            _gc_enable()
    if capture is not None:
        _capture_leaves(capture, leaf_grads, at_node[2])
    return leaf_grads, at_node[2]


def _walk(ready, deps, pending, leaf_grads, xp, create_graph, retain_graph, at_node):
    """Phase 2: run each node whose gradient is complete; send its inputs their shares."""
    observe = _observer() if state.observers else None
    rebased = rebase.used.any
    capturing = at_node[1]
    while ready:
        node = ready.pop()
        g = pending.pop(node, None)
        if g is not None:
            if node.hooks or capturing:
                g = _at_node(node, g, at_node)
            grads = _input_grads(node, g, xp, create_graph)
            if create_graph:  # a constant gradient of a piecewise op stays in the graph
                grads = connect_all(node, grads)
        i = -1
        for t in node.inputs:
            i += 1
            if not isinstance(t, TensorBase):
                continue
            if rebased and t._version_counter[0]:
                t = rebase.resolve(node, i, t)
            if not t._rg:
                continue
            p = t.grad_fn
            if g is not None:
                gi = grads[i]
                if gi is not None:
                    if observe is not None:
                        observe(node, i, g, gi)
                    data = t._data
                    if gi.shape != data.shape or gi.dtype != data.dtype:
                        gi = _fit(xp, gi, data)
                    if p is None:
                        leaf_grads[t] = leaf_grads[t] + gi if t in leaf_grads else gi
                    elif t._out:  # output _out - 1 of a node with several outputs
                        _pend_output(pending, p, t._out - 1, gi)
                    else:
                        pending[p] = pending[p] + gi if p in pending else gi
            if p is not None:  # one edge less to wait for; the last one makes p ready
                d = deps[p]
                if d == 1:  # (nothing reads deps[p] again: no need to store the 0)
                    ready.append(p)
                else:
                    deps[p] = d - 1
        if not retain_graph:  # drop what backward needed; the recipe stays
            node.inputs = node.ans = node.saved = None
            node.freed = True
        g = grads = gi = None  # keep no reference past its use


def _observer():
    """The observers of this thread (anomaly, strict, explain) as one callable, or None."""
    observers = state.observers
    if not observers:
        return None
    fns = tuple(observers.values())
    if len(fns) == 1:
        return fns[0]

    def all_of(node, i, g, gi):
        for f in fns:
            f(node, i, g, gi)
    return all_of


def _count_edges(roots):
    """Phase 1: how many edges from reachable nodes point at each node."""
    rebased = rebase.used.any
    # a node enters `deps` when first seen: pushed once, also when several roots share
    # it (the pieces of a split, [y, y]): pushed twice, its inputs' edges would count
    # twice, and nothing below it would ever become ready
    deps = {}
    for r in roots:  # (a loop: a generator costs a resumption per root)
        if r.grad_fn is not None:
            deps[r.grad_fn] = 0
    stack = list(deps)
    while stack:
        node = stack.pop()
        if node.freed:
            raise RuntimeError(freed_message(roots, node))
        i = -1
        for t in node.inputs:
            i += 1
            if isinstance(t, TensorBase):
                if rebased and t._version_counter[0]:
                    t = rebase.resolve(node, i, t)
                p = t.grad_fn
                if p is not None and t._rg:
                    if p in deps:
                        deps[p] += 1
                    else:
                        deps[p] = 1
                        stack.append(p)
    return deps


def _start_nodes(roots, seeds, deps, pending, leaf_grads):
    """Put each root's seed gradient in place; the nodes ready to run first."""
    ready = []
    for r, s in zip(roots, seeds):
        node = r.grad_fn
        if node is None:  # the root is itself a leaf
            leaf_grads[r] = leaf_grads[r] + s if r in leaf_grads else s
        elif r._out:
            if node not in pending and deps.get(node, 0) == 0:
                ready.append(node)
            _pend_output(pending, node, r._out - 1, s)
        elif node in pending:
            pending[node] = pending[node] + s
        else:
            pending[node] = s
            if deps.get(node, 0) == 0:
                ready.append(node)
    return ready


def _pend_output(pending, node, k, g):
    """A node with several outputs collects one gradient per output (None: none came)."""
    slots = pending.get(node)
    if slots is None:
        slots = pending[node] = [None] * node.op.n_outputs
    slots[k] = g if slots[k] is None else slots[k] + g


def _at_node(node, g, at_node):
    """The node's gradient is complete: run its hooks, keep it if grad() asked for it."""
    like_t, capture_nodes, captured, foreign = at_node
    if node.hooks:
        g0 = g
        g = _hooks.run_node_hooks(node, g, like_t)
        if g is not g0 and foreign is not _NONE:  # a hook's result: the user may hold it
            foreign.extend(g if isinstance(g, (list, tuple)) else (g,))
    for i in capture_nodes.get(node, ()):
        captured[i] = g
    return g


def _input_grads(node, g, xp, create_graph):
    """Run the node's rules: one gradient (or None) per input. First the inputs' arrays,
    and whether anything was changed in place since the node was recorded (versions
    None = all were 0 then): only then is the detailed check worth its cost."""
    op, ins, vers = node.op, node.inputs, node.versions
    n = len(ins)
    if n == 1 and isinstance(ins[0], TensorBase):  # unary nodes (tanh, sum, reshape, ...)
        x = ins[0]
        arrays = (x._data,)
        changed = (x._version_counter[0] != (0 if vers is None else vers[0])
                   or node.out_version[0] != (0 if vers is None else vers[1]))
    else:
        changed = node.out_version[0] != (0 if vers is None else vers[-1])
        arrays = []
        k = 0
        for t in ins:  # a loop, not a comprehension: in Python 3.11 that is a call more
            if isinstance(t, TensorBase):
                arrays.append(t._data)
                v = t._version_counter[0]
                if v and (vers is None or v != vers[k]):
                    changed = True
            else:
                arrays.append(t)
            k += 1
    if changed:
        _check_versions(node)
    saved = node.saved
    kw = node.args if not saved else {**node.args, **saved}
    if create_graph:  # the rules build a graph: they get tensors, and `ans` as a tensor
        arrays, ans = ins, _output_tensor(node)  # (each op of the rules widens float16)
    else:
        ans = node.ans
        if type(g) is _ndarray and g.dtype is _float16 and op.opmath:
            # float16 computed in float32 as PyTorch does (core/opmath.py); _fit rounds
            # each input's gradient back to float16 once (after summing it to shape)
            g, ans, kw, arrays = _opmath.widen_rule(g, ans, kw, arrays)
    if op.backward is not None:  # one backward for all inputs (custom Functions,
        return op.backward(xp, g, ans, *arrays, **kw)  # checkpoint, cat/stack: linear in N
    # Only the rules of inputs that require grad run (`a / 2` never runs the divisor's).
    # One and two inputs, nearly every node, are spelled out: no loop, no list.
    vjps = op.vjps  # indexed, not iterated: a variadic op makes rule i on demand
    if n == 1:
        return (vjps[0](xp, g, ans, *arrays, **kw) if getattr(ins[0], "_rg", False)
                else None,)
    if n == 2:
        x, y = ins
        return (vjps[0](xp, g, ans, *arrays, **kw) if getattr(x, "_rg", False) else None,
                vjps[1](xp, g, ans, *arrays, **kw) if getattr(y, "_rg", False) else None)
    out = []
    k = 0
    for t in ins:
        out.append(vjps[k](xp, g, ans, *arrays, **kw) if getattr(t, "_rg", False) else None)
        k += 1
    return out


def _output_tensor(node):
    """The node's output as a tensor whose history is the node itself (made now, not
    kept: a node holding its output tensor would be a reference cycle), so a rule that
    reads `ans` under create_graph is differentiated through it, as PyTorch does with a
    saved output."""
    if node.op.n_outputs != 1:
        return node.ans
    first = next(t for t in node.inputs if isinstance(t, TensorBase))
    t = like(first, node.ans, True, node)
    t._version_counter = node.out_version
    if state.dual is not None:  # forward-over-reverse: the output's tangent, from its JVP
        state.dual.propagate(node.op, node.inputs, node.args, node.saved, t)
    return t


def _check_versions(node):
    """Raise if a tensor this node's rules will read was changed in place since."""
    ins, vers, op = node.inputs, node.versions, node.op
    if vers is None:
        vers = [0 if isinstance(t, TensorBase) else None for t in ins] + [0]
    reads, reads_ans = _aliased(node, *op.reads_for(node))
    for i in reads:
        if vers[i] is not None and ins[i]._version_counter[0] != vers[i]:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: input {i} ({op.input_name(i)}) of {op.name}, a "
                f"tensor of shape {tuple(ins[i]._data.shape)}, is at version "
                f"{ins[i]._version}; expected version {vers[i]} instead. Hint: avoid the "
                "in-place change, or clone() the tensor before changing it.")
    if reads_ans and node.out_version[0] != vers[-1]:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: the output of {op.name} is at version "
            f"{node.out_version[0]}; expected version {vers[-1]} instead. Hint: avoid the "
            "in-place change, or clone() the tensor before changing it.")


def _aliased(node, reads, reads_ans):
    """Widen what the rules read by the saved values that ARE an input or the output
    (same memory): changing that tensor in place changes what backward reads, whatever
    the declaration says."""
    saved = [v for v in (node.saved or {}).values() if isinstance(v, _ndarray) and v.size]
    if not saved:
        return reads, reads_ans
    if not reads_ans and any(np.may_share_memory(a, node.ans) for a in saved):
        reads_ans = True
    extra = tuple(i for i, t in enumerate(node.inputs) if i not in reads
                  and isinstance(t, TensorBase)
                  and any(np.may_share_memory(a, t._data) for a in saved))
    return tuple(reads) + extra, reads_ans


def _fit(xp, gi, data):
    """A rule's result, summed back to its input's shape and cast to its dtype."""
    if tuple(gi.shape) != data.shape:
        gi = sum_to(xp, gi, data.shape)
    if gi.dtype != data.dtype:
        gi = gi.to(data.dtype) if isinstance(gi, TensorBase) else gi.astype(data.dtype)
    return gi


def _capture_nodes(capture):
    if not capture:
        return _NONE
    nodes = {}
    for i, t in enumerate(capture or ()):
        if t.grad_fn is not None:
            nodes.setdefault(t.grad_fn, []).append(i)
    return nodes


def _capture_leaves(capture, leaf_grads, captured):
    for i, t in enumerate(capture):
        if t.grad_fn is None and t in leaf_grads:
            captured[i] = leaf_grads[t]


def accumulate(t, g, create_graph, exclusive=False):
    """Add `g` into `t.grad`. `exclusive`: nothing outside the engine holds `g`, so a
    fresh array may become `.grad` as it is instead of being copied (PyTorch's
    AccumulateGrad steals a gradient whose use count is 1 in the same way)."""
    if t._hooks:
        g = _hooks.run_tensor_hooks(t, g)
        exclusive = False
    if create_graph:
        gt = g if isinstance(g, TensorBase) else like(t, g)
        t.grad = gt if t.grad is None else t.grad + gt
    elif t.grad is None:
        if isinstance(g, TensorBase):
            g = g._data
        data = t._data
        # `g.base is None`: g owns its memory (not a view of something else); one
        # `flags` object, not two (each `.flags` access builds a new one)
        if (exclusive and type(g) is _ndarray and g.base is None and g.flags.writeable
                and g.dtype == data.dtype and g.shape == data.shape):
            t.grad = _make(t._result_type, g)
        else:
            t.grad = _make(t._result_type, np.array(g, dtype=data.dtype, copy=True))
    elif t.grad.grad_fn is not None or t.grad._data.shape != t._data.shape:
        t.grad = like(t, t.grad._data + (g._data if isinstance(g, TensorBase) else g))
    else:  # `.grad += g` in place
        buf = t.grad._data
        g = g._data if isinstance(g, TensorBase) else g
        if buf.flags.writeable:
            np.add(buf, g, out=buf, casting="unsafe")
        else:
            t.grad._data = buf + g
        t.grad._version_counter[0] += 1
    if t._post_hooks:
        _hooks.run_post_accumulate_hooks(t)


def accumulate_all(leaf_grads, create_graph, foreign=(), retained=False):
    """Phase 3: every leaf's total into its `.grad`. A fresh gradient the engine made
    itself becomes the `.grad` as it is (PyTorch's AccumulateGrad "steals" it); one that
    came from outside is copied. Known by identity, not by reference counts (those
    differ once the core is compiled, and miss aliasing): from outside are `foreign`'s
    arrays (the seeds, what hooks and custom Functions returned) and an array that
    several leaves received (a rule that passes g through to two inputs, as add's).
    `retained`: the graph was kept (retain_graph), so its nodes still hold their saved
    arrays, which a rule may have returned as they are: nothing is stolen then."""
    pop = leaf_grads.pop
    outside = {id(a) for a in foreign} if foreign else _NONE
    if len(leaf_grads) > 1:
        seen = set()
        for g in leaf_grads.values():
            k = id(g)
            if k in seen:
                if outside is _NONE:
                    outside = set()
                outside.add(k)
            else:
                seen.add(k)
    for t in list(leaf_grads):  # in the order the leaves got their first gradient
        g = pop(t)
        exclusive = not retained and id(g) not in outside
        if (exclusive and t.grad is None and not create_graph and type(g) is _ndarray
                and t._hooks is None and t._post_hooks is None):
            # the common case of `accumulate` (a fresh gradient of a leaf without hooks
            # becomes its .grad), inline: one call less per parameter
            data = t._data
            if (g.base is None and g.flags.writeable and g.dtype == data.dtype
                    and g.shape == data.shape):
                t.grad = _make(t._result_type, g)
                continue
        accumulate(t, g, create_graph, exclusive)

"""`backward()` and `grad()`: check the roots, make the seed gradients, run the walk.

    backward(tensors, grad_tensors)   accumulates into the leaves' `.grad`
    grad(outputs, inputs, ...)        returns d(outputs)/d(inputs), touching no `.grad`

The seed of a scalar root is the implicit dL/dL = 1; other roots need a gradient of
their shape (cast to their dtype, as PyTorch does). `retain_graph` defaults to
`create_graph`.
"""
import numpy as np

from . import engine
from . import tape as _tape
from . import hooks as _hooks
from .state import anywhere, state
from .tensor_base import TensorBase, like

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
    if gradient is None:
        if root._data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs: this tensor has "
                f"shape {tuple(root._data.shape)}. Pass a gradient of that shape, e.g. "
                f"y.backward(tapegrad.ones_like(y)), or reduce it first (y.sum().backward()).")
        g = _one(root._data)
        return like(root, g.copy()) if create_graph else g
    if isinstance(gradient, TensorBase):
        g = gradient if create_graph else gradient._data
    else:
        g = np.asarray(gradient, dtype=root._data.dtype)
        if create_graph:
            g = like(root, g)
    if tuple(g.shape) != tuple(root._data.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output has a shape of {tuple(g.shape)} "
                           f"and output has a shape of {tuple(root._data.shape)}.")
    if g.dtype != root._data.dtype:  # PyTorch casts grad_output to the output's dtype
        g = g.to(root._data.dtype) if isinstance(g, TensorBase) else g.astype(root._data.dtype)
    return g


def _start(roots, grad_outputs, retain_graph, create_graph):
    """The roots as a list, their seed gradients, and retain_graph's default."""
    roots = [roots] if isinstance(roots, TensorBase) else list(roots)
    for i, r in enumerate(roots):
        if not isinstance(r, TensorBase):
            raise TypeError(f"backward: expected Tensors, got {type(r).__name__}")
        if not r._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
    if grad_outputs is None:
        grad_outputs = [None] * len(roots)
    elif isinstance(grad_outputs, TensorBase):
        grad_outputs = [grad_outputs]
    seeds = [_seed(r, g, create_graph) for r, g in zip(roots, grad_outputs)]
    return roots, seeds, create_graph if retain_graph is None else retain_graph


# How many backward() calls this process has started (why_no_grad says "no backward
# has run yet" while it is 0).
calls = 0


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of `tensors` w.r.t. the graph's leaves and accumulate it."""
    global calls
    calls += 1
    if anywhere.tapes and state.tape is not None:  # inside a tg.compile capture
        return _tape.backward(_backward, tensors, grad_tensors, retain_graph, create_graph,
                              inputs)
    return _backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def _backward(tensors, grad_tensors, retain_graph, create_graph, inputs):
    if (grad_tensors is None and inputs is None and not create_graph
            and isinstance(tensors, TensorBase) and tensors._rg and tensors._data.size == 1):
        # `loss.backward()`, the call every training step makes: one scalar root and the
        # implicit seed, so _start's lists and checks have nothing to do (they cost about
        # a fifth of a small graph's backward).
        # (the seed is read-only: never stolen, no need to name it foreign)
        foreign = []
        leaf_grads, _ = engine.run([tensors], [_one(tensors._data)], bool(retain_graph),
                                   False, foreign=foreign)
        engine.accumulate_all(leaf_grads, False, foreign, bool(retain_graph))
        return
    tensors, seeds, retain_graph = _start(tensors, grad_tensors, retain_graph, create_graph)
    if inputs is None:
        foreign = list(seeds)  # the caller's arrays: copied if they reach a .grad as they are
        leaf_grads, _ = engine.run(tensors, seeds, retain_graph, create_graph, foreign=foreign)
        seeds = None
        engine.accumulate_all(leaf_grads, create_graph, foreign, bool(retain_graph))
        return
    inputs = [inputs] if isinstance(inputs, TensorBase) else list(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _, grads = engine.run(tensors, seeds, retain_graph, create_graph, capture=inputs)
    for i, t in enumerate(inputs):
        if i in grads:
            engine.accumulate(t, grads[i], create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Return d(outputs)/d(inputs) as a tuple, without touching any `.grad`."""
    inputs_t = [inputs] if isinstance(inputs, TensorBase) else list(inputs)
    outputs, seeds, retain_graph = _start(outputs, grad_outputs, retain_graph, create_graph)
    for i, t in enumerate(inputs_t):
        if not isinstance(t, TensorBase) or not t._rg:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not "
                               "require grad")
    _, got = engine.run(outputs, seeds, retain_graph, create_graph, capture=inputs_t)
    return tuple(_result(t, i, got, allow_unused, materialize_grads)
                 for i, t in enumerate(inputs_t))


def _result(t, i, got, allow_unused, materialize_grads):
    """What grad() returns for input i: its gradient as a tensor, zeros, or None."""
    if i not in got:
        if materialize_grads:
            return like(t, np.zeros_like(t._data))
        if not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}, shape {tuple(t._data.shape)}) "
                "appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior.")
        return None
    g = got[i]
    if t._hooks and t.grad_fn is None:  # a leaf's hooks shape what grad() returns too
        g = _hooks.run_tensor_hooks(t, g)
    if isinstance(g, TensorBase):
        return g
    return like(t, np.array(g, dtype=t._data.dtype, copy=True))

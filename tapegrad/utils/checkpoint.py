"""Activation checkpointing: keep a segment's output, recompute its inside in backward.

    y = checkpoint(block, x)            # block's intermediate values are NOT kept
    y.sum().backward()                  # block runs again here, with grad, then backprops

A training step normally keeps every intermediate value a backward rule reads: memory
grows with depth. `checkpoint(fn, *args)` records ONE node for the whole call of `fn`:
its saved values are only the inputs (and the parameters fn reads); the values inside
fn are dropped after forward. When backward reaches that node, fn runs again with grad
recording on (the random-number state restored, so dropout draws the same mask), and
`tg.autograd.grad` backpropagates the incoming gradient through the recomputed graph.
The gradients are the same numbers as without checkpointing; the price is one extra
forward of fn.

`checkpoint_sequential(functions, segments, input)` splits a chain of n layers into
segments and checkpoints all but the last: with about sqrt(n) segments the live
values shrink from n layers' worth to about 2*sqrt(n) (segment ends + one segment
being recomputed); see bench/bench_memory.py.

How the node finds what fn reads. fn may use tensors it was not given (a module's
weights). Forward runs fn once WITH recording (on detached copies of the arguments)
and walks that graph to collect the leaf tensors that require grad: they become extra
inputs of the checkpoint node, so their gradients flow through the engine as usual
(and `tg.autograd.grad(..., params)` works, unlike PyTorch's reentrant variant). The
recorded graph is dropped as soon as the node exists, so peak memory during forward
is one segment's graph.
NOTE: a tensor fn reads from outside that is itself computed (not a leaf) is followed
back to its leaves; keep such values as explicit arguments of fn.
"""
import weakref

import numpy as np

from .. import random as _random
from ..core import grad_mode
from ..core.backward import grad as _grad
from ..core.record import apply
from ..core.state import state
from ..core.tensor_base import TensorBase, like, make
from ..ops.registry import Op

__all__ = ["checkpoint", "checkpoint_sequential"]


def _is_tensor(t):
    return isinstance(t, TensorBase)


def _leaves_read(outputs, exclude):
    """Leaf tensors requiring grad that the recorded graph of `outputs` reads
    (iterative walk, in first-seen order), except those in `exclude` (ids)."""
    found, seen_nodes, seen_leaves = [], set(), set(exclude)
    stack = [o.grad_fn for o in outputs if _is_tensor(o) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        for t in node.inputs:
            if not _is_tensor(t) or not t._rg:
                continue
            if t.grad_fn is None:
                if id(t) not in seen_leaves:
                    seen_leaves.add(id(t))
                    found.append(t)
            else:
                stack.append(t.grad_fn)
    return found


def checkpoint(function, *args, use_reentrant=False, preserve_rng_state=True,
               context_fn=None, determinism_check="default", debug=False, **kwargs):
    """Run `function(*args, **kwargs)` without keeping its intermediate values.

    Returns what function returns (a tensor or a tuple). Gradients flow to the tensor
    arguments and to every leaf tensor function reads (module parameters).
    `use_reentrant` is accepted for PyTorch compatibility; both settings behave the
    same here (the non-reentrant behaviour: `autograd.grad` and keyword args work).
    """
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)  # nothing would be recorded anyway
    rng_state = _random.get_rng_state() if preserve_rng_state else None

    # Forward: record once on detached copies of the arguments, to learn the output and
    # which outside tensors fn reads; then drop that graph.
    probe_args = [like(a, a._data, True) if _is_tensor(a) and a._rg else a for a in args]
    out = function(*probe_args, **kwargs)
    single = _is_tensor(out)
    outs = (out,) if single else tuple(out)
    captured = _leaves_read(outs, exclude=[id(a) for a in probe_args if _is_tensor(a)])
    del probe_args

    inputs = tuple(args) + tuple(captured)
    need = [j for j, t in enumerate(inputs) if _is_tensor(t) and t._rg]
    if not need:
        return out
    n_args, n_inputs = len(args), len(inputs)
    arg_is_tensor = [_is_tensor(a) for a in args]
    # Non-tensor arguments are kept as they are (no arrays); tensors come back as arrays.
    plain = [None if arg_is_tensor[j] else a for j, a in enumerate(args)]
    # The rule below outlives the backward pass (the node keeps its op), so it holds no
    # input tensor: the tensor arguments come back from the node as arrays (only their
    # class is kept), and the outside leaves fn reads are held weakly (the node's inputs
    # hold them until it is freed). After backward, what checkpoint saved is freed, as in
    # PyTorch.
    arg_types = [type(a)._result_type if arg_is_tensor[j] else None
                 for j, a in enumerate(args)]
    captured = [weakref.ref(c) for c in captured]

    def recompute(k, g, arrays):
        """Run fn again with recording on; backprop g from its k-th output. Returns the
        gradient of each needed input (tensors under create_graph, else arrays)."""
        create = state.grad_enabled  # the walk records its rules exactly when create_graph
        if preserve_rng_state:
            now = _random.get_rng_state()
            _random.set_rng_state(rng_state)
        try:
            with grad_mode.enable_grad():
                if create:  # arrays are the input Tensors themselves
                    call = list(arrays[:n_args])
                else:
                    call = [make(arg_types[j], arrays[j], args_rg[j]) if arg_is_tensor[j]
                            else plain[j] for j in range(n_args)]
                res = function(*call, **kwargs)
        finally:
            if preserve_rng_state:
                _random.set_rng_state(now)
        res_k = res if single else res[k]
        targets = [call[j] if j < n_args else captured[j - n_args]() for j in need]
        grads = _grad([res_k], targets, grad_outputs=[g], retain_graph=create,
                      create_graph=create, allow_unused=True)
        out = [None] * n_inputs
        for j, gj in zip(need, grads):
            out[j] = gj if gj is None or create else gj._data
        return out

    args_rg = [_is_tensor(a) and a._rg for a in args]
    results = []
    for k, o in enumerate(outs):
        if not (_is_tensor(o) and o._rg):
            results.append(o.detach() if _is_tensor(o) else o)
            continue
        value = [o._data]  # the forward's result, held only until apply has run it
        op = Op("checkpoint", lambda *arrays, value=value: value.pop(), promote=False,
                node="CheckpointFunctionBackward",
                backward=lambda xp, g, ans, *arrays, k=k: recompute(k, g, arrays),
                inputs=tuple(f"input{j}" for j in range(len(inputs))),
                doc="recomputes a checkpointed function in backward",
                text="recompute the checkpointed function, then backward through it",
                hint=("checkpoint's gradient is the backward of the recomputed function: a "
                      "non-finite value comes from an op inside it (an op that anomaly mode "
                      "checks during that backward names itself first)"),
                strict=("its forward returns the value computed earlier, so it cannot be "
                        "re-run on perturbed inputs; the recomputation is checked op by op"))
        results.append(apply(op, *inputs))
    del out, outs
    return results[0] if single else tuple(results)


def checkpoint_sequential(functions, segments, input, use_reentrant=False, **kwargs):
    """Checkpoint a chain `functions` (a Sequential or a list of callables) in
    `segments` pieces; the last piece runs normally (its values are needed at once).

    Same splitting as PyTorch: segment size len(functions) // segments.
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(f"Unexpected keyword arguments: {', '.join(kwargs)}")
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)

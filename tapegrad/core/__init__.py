"""The core: tensor data, the recipe of a recorded op, recording, the reverse walk.

Layers (each imports only the ones listed before it):
    state.py        per-thread autograd state (grad mode, forward-AD level, observers)
    tape.py         the hook tg.compile's capture listens on (tapegrad/_compile)
    tensor_base.py  TensorBase: the array and the autograd slots, nothing else
    shared_memory.py  arrays in MAP_SHARED memory (Tensor.share_memory_, tg.multiprocessing)
    hooks.py        gradient hooks and the handles that remove them
    names.py        torch's node class names (`AddBackward0`): the entry's `node=` or a fallback
    node.py         Node: the recipe of one recorded op (op, inputs, args, saved, outputs)
    rebase.py       in-place bookkeeping the walk needs: views, tensors that held old values
    freed.py        the freed-graph error, naming the tensor carried over from a freed graph
    cuts.py         where tensors requiring grad were cut (detach, item, no_grad, ...)
    record.py       apply(op, ...): run an op's forward and record its Node
    connect.py      under create_graph, a piecewise op's constant gradient stays in the graph
    engine.py       the reverse topological walk and gradient accumulation
    backward.py     backward() / grad(): roots, seeds, then the walk
    grad_mode.py    no_grad / enable_grad / set_grad_enabled / inference_mode

Nothing here imports the op tables (tapegrad/ops; connect.py makes one `Op` of
ops/registry.py, layer 0), the Tensor facade (tapegrad/_tensor.py)
or anything above them: an `Op` is used through its fields only (see ops/registry.py),
and the differentiable namespace of create_graph comes from the gradient tensor itself
(`__array_namespace__`).
"""

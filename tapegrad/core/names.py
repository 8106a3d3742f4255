"""PyTorch's names for the nodes of a graph: `grad_fn=<MulBackward0>` in a tensor's repr.

Each table entry declares its name (`defop(..., node="NllLossBackward0")`), or a function
of the recorded Node where torch picks different nodes for one tapegrad op depending on
its arguments (`x.sum()` SumBackward0, `x.sum(1)` SumBackward1; `1 - x` RsubBackward1;
matmul by the operands' dims); see ops/registry.py. An entry without a declaration gets
the fallback `<CamelCase>Backward0` (exp: ExpBackward0, torch's name for most ops);
custom Functions are already named `<Class>Backward`, as in torch.

Two approximations, since the table records one op for several torch calls: a swap of
two dims prints TransposeBackward0 (also for `x.T` / `x.t()`, which torch names
PermuteBackward0 / TBackward0), and `x.amax()` over all dims prints MaxBackward1 (the
node of the far more common `x.max()`).
"""


def _camel(name):
    return "".join(w[:1].upper() + w[1:] for w in name.split("_"))


def fallback_name(op_name):
    """The name of the node of an op that declares none: `<CamelCase>Backward0`."""
    if op_name.endswith("Backward"):  # a custom Function's op, named as torch names it
        return op_name
    return _camel(op_name) + "Backward0"


def node_name(node):
    """Torch's class name for the node that records `node`'s operation."""
    op = node.op
    declared = op.node
    if declared.__class__ is str:
        return declared
    if declared is not None:
        # backward (without retain_graph) frees `inputs` but keeps `args`: functions that
        # read only the arguments (sum(1) is SumBackward1) still answer; the others raise
        # TypeError on None and fall through, as for an unusual argument
        try:
            return declared(node)
        except (AttributeError, IndexError, TypeError):
            pass  # an unusual argument: the fallback name
    return fallback_name(op.name)

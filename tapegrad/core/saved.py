"""`grad_fn._saved_self`, `_saved_other`, `_saved_result`, ...: the values a node keeps
for its backward, read through PyTorch's attribute names.

torch names a node's saved values after the arguments of the op's derivative formula:
the first input is `self`, the second `other`, the output `result` (MulBackward0 has
`_saved_self` and `_saved_other`, ExpBackward0 and TanhBackward0 `_saved_result`,
AddBackward0 none: its rule reads no values). A few nodes call an input otherwise
(PowBackward0's exponent, MmBackward0's `mat2`, MvBackward0's `vec`, DotBackward0's
`tensor`, WhereBackward0's `condition`); `_INPUT_NAMES` holds those. A node here has the
names of what its op's rules read (`Op.reads`, ops/registry.py); the output only when a
rule that will run reads it (`x**2` runs no exponent rule, and keeps no result, as in
torch). An input comes back as the tensor itself (torch: `y.grad_fn._saved_self is x`),
a number input as a 0-d tensor (a pow exponent as the number), an input that no rule
that will run reads as None (`(x * 2).grad_fn._saved_self`, as in torch), the output as a tensor
sharing the node's output array, without a grad_fn (torch's has one). torch's other
saved names (`_saved_alpha`, `_saved_dim`, sizes) are not provided. After backward freed
the graph, reading one raises torch's RuntimeError.
"""
import numpy as np

from .freed import FREED
from .names import node_name
from .tensor_base import TensorBase, like

_DEFAULT = ("_saved_self", "_saved_other")
_INPUT_NAMES = {
    "PowBackward0": ("_saved_self", "_saved_exponent"),
    "PowBackward1": ("_saved_self", "_saved_exponent"),
    "MmBackward0": ("_saved_self", "_saved_mat2"),
    "MvBackward0": ("_saved_self", "_saved_vec"),
    "DotBackward0": ("_saved_self", "_saved_tensor"),
    "WhereBackward0": ("_saved_condition",),
}
# matmul of other shapes: torch's node is a view of a folded product (UnsafeViewBackward0,
# SqueezeBackward4) and saves no tensors
_ONLY_NAMED = {"matmul"}


def _input_attrs(node):
    """{attribute name: input index} for the inputs this node's rules read."""
    name = node_name(node)
    if node.op.name in _ONLY_NAMED and name not in _INPUT_NAMES:
        return {}
    attrs = _INPUT_NAMES.get(name, _DEFAULT)
    n_in = len(node.inputs) if node.inputs is not None else len(node.op.input_names)
    return {a: i for i, a in enumerate(attrs) if i < n_in and node.op.reads_input(i)}


def saved_names(node):
    """The `_saved_*` attributes this node has (torch's names for what its rules read)."""
    names = list(_input_attrs(node))
    if node.op.n_outputs == 1 and not node.freed and node.op.reads_for(node)[1]:
        names.append("_saved_result")
    return names


_KNOWN = {"_saved_result", *_DEFAULT, *(n for names in _INPUT_NAMES.values() for n in names)}


def saved_value(node, name):
    """`node.<name>` for a torch saved-value name; AttributeError when the node has none."""
    if node.freed and name in _KNOWN:
        # a freed node no longer knows its inputs (nor, for matmul, its torch name)
        raise RuntimeError(FREED)
    attrs = _input_attrs(node)
    if name not in attrs and name not in saved_names(node):
        raise AttributeError(f"'{node_name(node)}' object has no attribute '{name}'")
    first = next(t for t in node.inputs if isinstance(t, TensorBase))
    if name == "_saved_result":
        return like(first, node.ans)
    if attrs[name] not in node.op.reads_for(node)[0]:
        return None     # no rule that will run reads it (`x * 2`: self); torch's None too
    value = node.inputs[attrs[name]]
    if isinstance(value, TensorBase) or name == "_saved_exponent":
        return value
    return like(first, np.asarray(value))

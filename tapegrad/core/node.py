"""Node: the recipe of one recorded op, as separate fields a learner can read.

    op        the table entry (ops/registry.py `Op`): name, forward, rules
    inputs    the input tensors (Python numbers and constant arrays stay as they are):
              the edges backward follows
    args      the op's own arguments (axis, keepdims, shape, ...), as the caller gave them
    saved     values the forward computed and kept for backward (argmax indices, im2col
              columns, normalisation statistics), or None; PyTorch's SavedVariables
              (torch's `grad_fn._saved_self` / `_saved_other` / `_saved_result` read the
              inputs and output the rules use: core/saved.py)
    ans       the output array (a tuple of arrays when the op has several outputs)
    versions  the inputs' and the output's version counters when recorded (None = all 0):
              backward compares them to refuse values changed in place since
    out_version  the output's version counter (shared with the output tensor)
    hooks     gradient hooks on the output (non-leaf `register_hook`), or None
    site      "file:line" that created it (only while sites are recorded)

A node points at its INPUT tensors and never at its output tensors, so a graph holds
no reference cycles and one training step's memory is freed by reference counting.
"""
import sys

import numpy as np

from .state import anywhere, state
from .tensor_base import TensorBase
from . import hooks as _hooks
from .names import node_name
from .saved import saved_names, saved_value

_PKG_DIR = __file__.rsplit("/core/", 1)[0]


def _creation_site():
    """First stack frame outside the tapegrad package: where the user called the op."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    return f"{f.f_code.co_filename}:{f.f_lineno}"


class Node:
    __slots__ = ("op", "inputs", "args", "saved", "ans", "versions", "out_version", "hooks",
                 "site", "freed", "__weakref__")

    def __init__(self, op, inputs, args, saved, ans, versions, out_version):
        self.op = op
        self.inputs = inputs
        self.args = args
        self.saved = saved
        self.ans = ans
        self.versions = versions
        self.out_version = out_version
        self.hooks = None
        # a stack walk, only while this thread records sites (anywhere: a cheap guard)
        self.site = _creation_site() if anywhere.site_threads and state.record_sites else None
        self.freed = False

    @property
    def name(self):
        return self.op.name

    def rule_kwargs(self):
        """What the rules receive as keywords: the op's arguments and the saved values."""
        saved = self.saved
        return self.args if not saved else {**self.args, **saved}

    def parents(self):
        """Input tensors that require grad: the edges backward will follow."""
        if self.inputs is None:
            return ()
        return tuple(t for t in self.inputs if isinstance(t, TensorBase) and t._rg)

    @property
    def next_functions(self):
        """PyTorch-style edges: (grad_fn, output index) per input; a leaf that requires
        grad is its AccumulateGrad, an input that does not is (None, 0)."""
        if self.inputs is None:
            return ()
        out = []
        for t in self.inputs:
            if isinstance(t, TensorBase) and t._rg:
                fn = t.grad_fn if t.grad_fn is not None else AccumulateGrad(t)
                out.append((fn, max(t._out - 1, 0)))
            else:
                out.append((None, 0))
        return tuple(out)

    def saved_values(self):
        """Everything the rules can read, by name: inputs' data, `ans`, args, saved values
        (None after the graph was freed)."""
        if self.freed:
            return None
        d = {}
        names = self.op.input_names
        for i, t in enumerate(self.inputs):
            key = names[i] if i < len(names) else f"input{i}"
            d[key] = t._data if isinstance(t, TensorBase) else t
        d["ans"] = self.ans
        d.update(self.rule_kwargs())
        return d

    def __getattr__(self, name):
        # only reached when normal lookup fails: torch's `grad_fn._saved_self` and the
        # like (core/saved.py); anything else is torch's AttributeError
        if name.startswith("_saved_"):
            return saved_value(self, name)
        raise AttributeError(f"'{node_name(self)}' object has no attribute '{name}'")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(saved_names(self)))

    def register_hook(self, fn):
        """Hook on the gradient flowing into this node's output (non-leaf tensors)."""
        if self.hooks is None:
            self.hooks = {}
        return _hooks.add_hook(self.hooks, fn)

    def __repr__(self):
        # torch's text (`<AddBackward0 object at 0x...>`): programs print grad_fn
        return f"<{node_name(self)} object at {hex(id(self))}>"

    def describe(self):
        """The op with its inputs' shapes, arguments and creation site, for debugging."""
        def desc(t):
            if isinstance(t, TensorBase):
                return f"Tensor{tuple(t._data.shape)}"
            return repr(t)
        if self.freed:
            return f"<{self.op.name} node (freed)>"
        ins = ", ".join(desc(t) for t in self.inputs)
        extra = "".join(f", {k}={v!r}" for k, v in self.args.items()
                        if not isinstance(v, np.ndarray))
        site = f" at {self.site}" if self.site else ""
        return f"<{self.op.name}({ins}{extra}){site}>"


class AccumulateGrad:
    """What torch's next_functions shows for a leaf that requires grad: the end of the
    graph, holding the leaf as `.variable`. Made on each access (the leaf has no slot
    for it); two for the same leaf compare equal."""
    __slots__ = ("variable",)
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def __eq__(self, other):
        return isinstance(other, AccumulateGrad) and other.variable is self.variable

    def __hash__(self):
        return id(self.variable)

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"

"""Recording the graph: the `Node` (a tensor's recipe) and `apply`, which runs an op.

`apply(op, *inputs, **kw)` runs the op's forward on raw arrays and, when grad mode is
on and some input requires grad, attaches a `Node` to the result: the op, the input
tensors, the keyword arguments, and the output array (`ans`) that many rules reuse.

Memory: a Node points at its INPUT tensors and never at its output tensor, so a graph
holds no reference cycles and one training step's memory is released by reference
counting alone (micrograd's closures capture their output and leave that work to the
cyclic garbage collector).
"""
import sys
import weakref

import numpy as np

from . import grad_mode

_grad_state = grad_mode._state
_ndarray = np.ndarray
_float64 = np.dtype("float64")

# Set by tensor.py (import order: tensor -> graph would be circular otherwise).
Tensor = None
_make = None

# Opt-in: where each op was created (file:line), for anomaly mode and `explain`.
_site_state = {"record": 0}
_PKG_DIR = __file__.rsplit("/autograd/", 1)[0]


def _creation_site():
    """First stack frame outside the tapegrad package: where the user called the op."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    return f"{f.f_code.co_filename}:{f.f_lineno}"


class Node:
    """The recipe of one non-leaf tensor: which op made it from which inputs.

    Attributes a learner can read:
      name      the op's name ("mul", "sum", ...)
      inputs    the input tensors (Python numbers stay numbers)
      kwargs    the op's keyword arguments (axis, keepdims, ...)
      saved     what the backward rule will use: inputs' data, `ans`, extras
      site      "file:line" where it was created (when sites are recorded)
    """

    __slots__ = ("op", "inputs", "kw", "ans", "versions", "out_version", "hooks",
                 "site", "freed", "__weakref__")

    def __init__(self, op, inputs, kw, ans, versions, out_version):
        self.op = op
        self.inputs = inputs
        self.kw = kw
        self.ans = ans
        self.versions = versions
        self.out_version = out_version
        self.hooks = None
        self.site = _creation_site() if _site_state["record"] else None  # opt-in: costs a stack walk
        self.freed = False

    @property
    def name(self):
        return self.op.name

    @property
    def kwargs(self):
        return self.kw

    def parents(self):
        """Input tensors that require grad: the edges backward will follow."""
        if self.inputs is None:
            return ()
        return tuple(t for t in self.inputs if isinstance(t, Tensor) and t._rg)

    @property
    def next_functions(self):
        """PyTorch-style edges: (grad_fn or leaf or None, 0) per input."""
        if self.inputs is None:
            return ()
        out = []
        for t in self.inputs:
            if isinstance(t, Tensor) and t._rg:
                out.append((t.grad_fn if t.grad_fn is not None else t, 0))
            else:
                out.append((None, 0))
        return tuple(out)

    @property
    def saved(self):
        """The values backward will read, by name (None after the graph was freed)."""
        if self.freed:
            return None
        d = {}
        names = self.op.input_names
        for i, t in enumerate(self.inputs):
            key = names[i] if i < len(names) else f"input{i}"
            d[key] = t.data if isinstance(t, Tensor) else t
        d["ans"] = self.ans
        d.update(self.kw)
        return d

    def register_hook(self, fn):
        """Hook on the gradient flowing into this node's output (used for non-leaf tensors)."""
        if self.hooks is None:
            self.hooks = {}
        from .hooks import add_hook
        return add_hook(self.hooks, fn)

    def __repr__(self):
        def desc(t):
            if isinstance(t, Tensor):
                return f"Tensor{tuple(t.shape)}"
            return repr(t)
        if self.freed:
            return f"<{self.op.name} node (freed)>"
        ins = ", ".join(desc(t) for t in self.inputs)
        extra = "".join(f", {k}={v!r}" for k, v in self.kw.items()
                        if not isinstance(v, np.ndarray))
        site = f" at {self.site}" if self.site else ""
        return f"<{self.op.name}({ins}{extra}){site}>"


def apply(op, *inputs, **kw):
    """Run `op` forward on the inputs' arrays; record a Node if a gradient is needed.

    `inputs` are Tensors or Python numbers (numbers stay weakly typed, so a float32
    tensor times 2.5 stays float32, as in PyTorch).
    """
    rg = False
    arrays = []
    changed = False  # has any input been modified in place before? (rare)
    for t in inputs:
        if isinstance(t, Tensor):
            arrays.append(t.data)
            if t._version[0]:
                changed = True
            if t._rg:
                rg = True
        else:
            arrays.append(t)
    out = op.forward(*arrays, **kw)
    if op.has_extra:
        out, extra = out
        kw = {**kw, **extra}
    if type(out) is not _ndarray:
        out = np.asarray(out)
    if op.promote_default and out.dtype == _float64:
        out = _keep_default_dtype(out, arrays)
    record = rg and _grad_state["enabled"] and op.differentiable
    res = _make(out, record, None)
    if op.linear and out.base is not None:
        _share_view_version(res, inputs, arrays)
    if record:
        # Versions of the inputs (and, last, of the output) at record time, for the
        # in-place check in backward; None means "all 0" and saves an allocation.
        versions = None
        if changed:
            versions = tuple(t._version[0] if isinstance(t, Tensor) else None
                             for t in inputs) + (res._version[0],)
        res.grad_fn = Node(op, inputs, kw, out, versions, res._version)
    if _forward_ad_hook[0] is not None:
        _forward_ad_hook[0](op, inputs, kw, res)
    return res


# Forward-mode AD installs a callback here while a dual level is active.
_forward_ad_hook = [None]


def _share_view_version(res, inputs, arrays):
    """A view (reshape, permute, expand, basic slicing: a linear op whose output is a
    NumPy view of its first input) shares that input's version counter, so an in-place
    change through either one is seen by nodes that saved the other (as PyTorch)."""
    src = inputs[0] if inputs else None
    if isinstance(src, Tensor):
        a = arrays[0]
        base = res.data.base
        if base is a or (a.base is not None and base is a.base):
            res._version = src._version
            if res._rg and src.grad_fn is not None:
                # remembered so that an in-place change of the base can give the view a
                # history that describes its new values (ops/inplace.py)
                _register_view(src, res)


# id(parent, a non-leaf) -> (weakref to it, {id(view): weakref to view}); by id, with
# weakref callbacks for cleanup, because Tensor's == is elementwise (no WeakSet).
_views_of = {}


def _register_view(src, view):
    key = id(src)
    entry = _views_of.get(key)
    if entry is None or entry[0]() is not src:
        entry = (weakref.ref(src, lambda r, key=key: _views_of.pop(key, None)), [])
        _views_of[key] = entry
    views = entry[1]
    views.append(weakref.ref(view))
    if len(views) > 64 and not len(views) & 63:  # a long-lived base: drop dead views
        views[:] = [r for r in views if r() is not None]


def views_of(t):
    """The live views of `t` that require grad (made while `t` had a history)."""
    entry = _views_of.get(id(t))
    if entry is None or entry[0]() is not t:
        return []
    return [v for v in (r() for r in entry[1]) if v is not None]


def _keep_default_dtype(out, arrays):
    """An int tensor combined with a Python float gives the default float dtype, not float64."""
    for a in arrays:
        if type(a) is _ndarray and a.dtype == _float64:
            return out
    from ..dtypes import get_default_dtype
    return out.astype(get_default_dtype())

"""Custom differentiable operations: `tapegrad.autograd.Function` (PyTorch's API).

    class Exp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

`forward` runs with grad mode off on the given tensors; `backward` receives one
gradient per output and returns one per input (None for inputs that need none).

Integration: a Function class gets a derivative-table entry (an `Op` made by the same
constructor as the built-in ops, not registered in the global table) whose one
`backward` rule calls the user's `backward` once per node and returns a gradient per
input. The ordinary engine walks custom ops like any other: hooks, retain_graph,
create_graph and anomaly mode work unchanged. Several outputs are several outputs of
one node (each output tensor knows its index: `_out` is index + 1). A saved OUTPUT is not stored
(output -> node -> ctx -> output would be a reference cycle): `saved_tensors` makes it
again from the node, with its history, so a double backward differentiates through it.
The ctx lives in the node's saved values and is freed with them after backward.
"""
import weakref

import numpy as np

from ..core import grad_mode, rebase
from ..core.node import Node
from ..core.state import state
from ..core.tensor_base import TensorBase, like
from ..ops.registry import Op

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

FREED = ("Trying to backward through the graph a second time (or directly access saved "
         "tensors after they have already been freed). Specify retain_graph=True if you need "
         "to backward through the graph a second time.")


class FunctionCtx:
    """The `ctx` passed to forward and backward: a place to keep what backward needs."""

    def __init__(self):
        self._saved = ()            # tensors, or ("output", k) for the node's own outputs
        self._saved_versions = ()
        self._non_diff = set()
        self._dirty = ()
        self._node = None           # weakref to the node (set when one is recorded)
        self._out_meta = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self.saved_for_forward = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{len(self._saved)} is of type {type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple(t._version_counter[0] if t is not None else None
                                     for t in tensors)

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise RuntimeError(FREED)
        out = []
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if isinstance(t, tuple):  # ("output", k): this node's output k, with its history
                t = self._output(t[1])
            if t is not None and t._version_counter[0] != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: saved tensor {i} of {self._cls.__name__}Backward "
                    f"(shape {tuple(t._data.shape)}) is at version {t._version}; expected "
                    f"version {v} instead.")
            out.append(t)
        return tuple(out)

    def _output(self, k):
        node = self._node() if self._node is not None else None
        if node is None or node.freed:
            raise RuntimeError(FREED)
        data, version = self._outputs[k]
        t = like(self._like, data, True, node)
        t._out = k + 1 if len(self._out_meta) > 1 else 0
        t._version_counter = version
        return t

    def mark_non_differentiable(self, *tensors):
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `.apply`."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method, and call it as MyFunction.apply(...)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def once_differentiable(fn):
    """Decorator for backward: run it without recording (its result is not differentiable)."""
    def wrapper(ctx, *args):
        with grad_mode.recording_off():
            return fn(ctx, *args)
    wrapper.__name__ = getattr(fn, "__name__", "backward")
    return wrapper


# ---- the table entry of a Function class ---------------------------------------------
_OPS = weakref.WeakKeyDictionary()  # Function class -> {number of outputs: Op}


def _fn_op(cls, n_outputs):
    ops = _OPS.setdefault(cls, {})
    op = ops.get(n_outputs)
    if op is None:
        op = ops[n_outputs] = Op(
            cls.__name__ + "Backward", _no_forward, backward=_function_backward,
            n_outputs=n_outputs, promote=False, inputs=(), reads="",
            doc=f"custom autograd.Function {cls.__name__}",
            text=f"{cls.__name__}.backward(ctx, g) (your rule)",
            hint=(f"the rule is {cls.__name__}.backward, written by hand: look there for a "
                  "division by a value that can be 0, or log/sqrt/pow of a value at 0; "
                  "tg.autograd.gradcheck or set_strict(True) compares it with finite "
                  "differences"))
    return op


def _no_forward(*arrays, **args):
    # NOTE: only reached when create_graph re-runs a node's op to get a differentiable
    # `ans`; a Function's backward never reads `ans`, so no need to run forward again.
    return np.zeros(0)


def _function_backward(xp, g, ans, *inputs, ctx):
    """The node's rule: the user's backward, called once, its results checked."""
    as_tensors = state.grad_enabled  # True exactly while create_graph records the backward
    grads = list(g) if len(ctx._out_meta) > 1 else [g]
    tgrads = []
    for k, gk in enumerate(grads):
        if gk is None and ctx.materialize_grads:
            shape, dtype = ctx._out_meta[k]
            gk = np.zeros(shape, dtype)
        tgrads.append(gk if gk is None or isinstance(gk, TensorBase) else like(ctx._like, gk))
    res = ctx._cls.backward(ctx, *tgrads)
    res = _check_results(ctx, res if isinstance(res, tuple) else (res,))
    out = [None if r is None else (r if as_tensors else r._data) for r in res]
    if state.foreign is not None:  # the user's arrays: the engine never steals them
        state.foreign.extend(out)
    return out


def _check_results(ctx, res):
    name = ctx._cls.__name__
    n = len(ctx._inputs_meta)
    if len(res) != n:
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        else:
            raise RuntimeError(f"function {name}Backward returned an incorrect number "
                               f"of gradients (expected {n}, got {len(res)})")
    out = []
    for i, (r, meta) in enumerate(zip(res, ctx._inputs_meta)):
        if r is None:
            out.append(None)
            continue
        if meta is None:
            raise RuntimeError(f"function {name}Backward returned a gradient different "
                               f"than None at position {i + 1}, but the corresponding forward "
                               "input was not a Variable")
        if not isinstance(r, TensorBase):
            if not isinstance(r, (int, float, np.ndarray, np.generic)):
                raise TypeError(f"function {name}Backward returned a {type(r).__name__} "
                                f"as gradient {i}; expected a Tensor or None")
            r = like(ctx._like, np.asarray(r, dtype=meta[1]))
        shape = meta[0]
        if tuple(r._data.shape) != shape and not _expandable(shape, tuple(r._data.shape)):
            raise RuntimeError(f"Function {name}Backward returned an invalid gradient at "
                               f"index {i} - got {list(r._data.shape)} but expected shape "
                               f"compatible with {list(shape)}")
        out.append(r)
    return out


def _expandable(shape, gshape):
    """Can a gradient of gshape be summed back to shape (shape broadcasts to gshape)?"""
    try:
        return np.broadcast_shapes(shape, gshape) == gshape
    except ValueError:
        return False


# ---- apply -------------------------------------------------------------------------------
def _own_attrs(cls):
    names = set()
    for c in cls.__mro__:
        if c is Function:
            break
        names.update(c.__dict__)
    return names


def _run_forward(cls, ctx, args, kwargs):
    with grad_mode.recording_off():
        if "setup_context" in _own_attrs(cls):
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    return raw


def _new_outputs(ctx, args, outs):
    """An output that IS an input (returned unchanged) becomes a new tensor object (a view);
    one forward changed in place (mark_dirty) stays itself and is rebased later."""
    dirty = {id(t) for t in ctx._dirty}
    fixed = []
    for o in outs:
        if isinstance(o, TensorBase) and id(o) not in dirty and any(o is a for a in args):
            v = like(o, o._data)
            v._version_counter = o._version_counter
            if id(o) in ctx._non_diff:
                ctx._non_diff.add(id(v))
            o = v
        fixed.append(o)
    return tuple(fixed), dirty


def _apply(cls, args, kwargs):
    ctx = FunctionCtx()
    ctx._cls = cls
    ctx._like = next((a for a in args if isinstance(a, TensorBase)), None)
    ctx.needs_input_grad = tuple(isinstance(a, TensorBase) and a._rg for a in args)
    ctx._inputs_meta = tuple((tuple(a._data.shape), a._data.dtype)
                             if isinstance(a, TensorBase) else None for a in args)
    raw = _run_forward(cls, ctx, args, kwargs)
    single = not isinstance(raw, tuple)
    outs, dirty = _new_outputs(ctx, args, (raw,) if single else tuple(raw))
    ctx._out_meta = tuple((tuple(o._data.shape), o._data.dtype) if isinstance(o, TensorBase)
                          else ((), np.float64) for o in outs)
    if state.grad_enabled and any(ctx.needs_input_grad):
        _record(cls, ctx, args, outs, dirty)
    else:
        ctx._saved = tuple(ctx._saved)  # kept only for forward mode below
    if state.dual is not None:
        _forward(cls, ctx, args, outs)
    return outs[0] if single else outs


def _record(cls, ctx, args, outs, dirty):
    """One node for the call: inputs -> (every differentiable output)."""
    inputs = list(args)
    olds = {}
    for i, a in enumerate(args):  # inputs forward changed in place take a new object
        if isinstance(a, TensorBase) and id(a) in dirty:
            if a.grad_fn is None and a._rg:
                raise RuntimeError("a leaf Variable that requires grad has been used in "
                                   "an in-place operation.")
            olds[id(a)] = inputs[i] = like(a, a._data, a._rg, a.grad_fn)
    diff = [k for k, o in enumerate(outs) if isinstance(o, TensorBase)
            and id(o) not in ctx._non_diff and o._data.dtype.kind in "fc"]
    if not diff:
        return
    first = outs[diff[0]]
    versions = tuple(a._version_counter[0] if isinstance(a, TensorBase) else None
                     for a in inputs) + (first._version_counter[0],)
    ans = tuple(o._data if isinstance(o, TensorBase) else None for o in outs)
    node = Node(_fn_op(cls, len(outs)), tuple(inputs), {}, {"ctx": ctx},
                ans[0] if len(outs) == 1 else ans, versions, first._version_counter)
    ctx._node = weakref.ref(node)
    ctx._outputs = {k: (outs[k]._data, outs[k]._version_counter) for k in diff}
    by_id = {id(outs[k]): k for k in diff}
    ctx._saved = tuple(("output", by_id[id(t)]) if t is not None and id(t) in by_id else t
                       for t in ctx._saved)
    for k in diff:
        o = outs[k]
        if id(o) in olds:  # earlier nodes still point at o: they must find `old`
            rebase.record_old(node, olds[id(o)])
        o.grad_fn, o._out, o._rg = node, (k + 1 if len(outs) > 1 else 0), True


def _forward(cls, ctx, args, outs):
    """Forward mode through a custom Function: its `jvp` staticmethod gives the tangents."""
    tangents = [like(a, a._fw) if isinstance(a, TensorBase) and a._fw is not None else None
                for a in args]
    if all(t is None for t in tangents):
        return
    if "jvp" not in _own_attrs(cls):
        raise NotImplementedError(f"forward-mode AD: the custom Function {cls.__name__} has no "
                                  "jvp staticmethod")
    with grad_mode.recording_off():
        res = cls.jvp(ctx, *tangents)
    res = res if isinstance(res, tuple) else (res,)
    for o, t in zip(outs, res):
        if isinstance(o, TensorBase) and t is not None:
            arr = t._data if isinstance(t, TensorBase) else np.asarray(t)
            state.dual.set_tangent(o, np.array(np.broadcast_to(arr, o._data.shape),
                                               dtype=o._data.dtype))

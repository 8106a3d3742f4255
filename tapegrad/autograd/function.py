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

Integration: each Function class gets its own derivative-table entry (an `Op`, built
once per class and not registered in the global table), whose VJP rule calls the
user's `backward`. So the ordinary engine walks custom ops like any other: no second
walker, hooks/retain_graph/create_graph/anomaly work unchanged. Several outputs: one
node for the Function (its "output" is the bundle of the outputs' gradients) and a
small `select` node per output that puts its gradient into the bundle.
"""
import numpy as np

from . import grad_mode
from . import graph as _graph
from ..ops.registry import Op

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` passed to forward and backward: a place to keep what backward needs."""

    def __init__(self):
        self._saved = ()
        self._saved_versions = ()
        self._non_diff = set()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._fn_name = "Function"
        self._cache_key = None
        self._cache = None
        self._out_meta = ()
        self._dirty = ()
        self.saved_for_forward = ()

    def save_for_backward(self, *tensors):
        Tensor = _graph.Tensor
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{len(self._saved)} is of type {type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple(t._version[0] if t is not None else None
                                     for t in tensors)

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Specify retain_graph=True if you "
                "need to backward through the graph a second time.")
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._version[0] != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: saved tensor {i} of {self._fn_name}Backward "
                    f"(shape {tuple(t.shape)}) is at version {t._version[0]}; expected version "
                    f"{v} instead.")
        return tuple(self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        cls._op = None


class Function(metaclass=_FunctionMeta):
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
        with grad_mode.no_grad():
            return fn(ctx, *args)
    wrapper.__name__ = getattr(fn, "__name__", "backward")
    return wrapper


# ---- the table entry of a Function class --------------------------------------------
def _fn_op(cls):
    op = cls.__dict__.get("_op")
    if op is not None:
        return op
    op = Op()
    op.name = cls.__name__ + "Backward"
    op.forward = _never_forward
    op.partials = None
    op.jvp = None
    op.linear = False
    op.has_extra = False
    op.differentiable = True
    op.promote_default = False
    op.input_names = ()
    op.saves = ()          # saved tensors are version-checked by ctx.saved_tensors
    op.saves_ans = False
    op.doc = f"custom autograd.Function {cls.__name__}"
    op.vjps = None         # set per node arity below (rules are per input index)
    cls._op = op
    return op


def _never_forward(*arrays, ctx=None, **kw):
    # NOTE: only reached when create_graph re-runs a node's op to get a differentiable
    # `ans`; a Function's backward never reads `ans`, so return a placeholder instead of
    # running the user's forward again.
    return np.zeros(0)


_RULES = {}


def _rules(n):
    """n VJP rules: rule i returns the i-th entry of the (once computed) user backward."""
    r = _RULES.get(n)
    if r is None:
        r = tuple(_make_rule(i) for i in range(n))
        _RULES[n] = r
    return r


def _make_rule(i):
    def rule(xp, g, ans, *inputs, ctx=None, **kw):
        return _backward_results(ctx, g, xp)[i]
    return rule


class _Bundle:
    """Gradients of a multi-output Function's outputs, summed slot by slot.

    It stands in for a gradient array in the engine (which adds gradients and checks
    `.shape`/`.dtype` against the placeholder input it flows to)."""

    __slots__ = ("grads",)
    shape = (0,)
    dtype = np.dtype("float64")

    def __init__(self, grads):
        self.grads = grads

    def __add__(self, other):
        out = []
        for a, b in zip(self.grads, other.grads):
            out.append(b if a is None else a if b is None else a + b)
        return _Bundle(out)

    __radd__ = __add__

    def astype(self, dtype):
        return self

    def __array__(self, dtype=None, copy=None):
        # for tools that look at gradient values (anomaly mode, explain): all parts
        parts = [np.ravel(getattr(g, "data", g)) for g in self.grads if g is not None]
        out = np.concatenate(parts) if parts else np.zeros(0)
        return out.astype(dtype) if dtype is not None else out


def _select_rule(xp, g, ans, bundle_in, index=0, n=1, **kw):
    grads = [None] * n
    grads[index] = g
    return _Bundle(grads)


_SELECT = Op()
_SELECT.name = "FunctionOutput"
_SELECT.forward = lambda placeholder, index=0, n=1, value=None: value
_SELECT.vjps = (_select_rule,)
_SELECT.partials = None
_SELECT.jvp = None
_SELECT.linear = False
_SELECT.has_extra = False
_SELECT.differentiable = True
_SELECT.promote_default = False
_SELECT.input_names = ("function",)
_SELECT.saves = ()
_SELECT.saves_ans = False
_SELECT.doc = "one output of a multi-output custom Function"


def _backward_results(ctx, g, xp):
    """Call the user's backward once per incoming gradient; check and convert results."""
    if ctx._cache_key is g:
        return ctx._cache
    Tensor = _graph.Tensor
    as_tensors = xp is not np
    grads = g.grads if isinstance(g, _Bundle) else [g]
    tgrads = []
    for k, gk in enumerate(grads):
        if gk is None:
            if ctx.materialize_grads:
                shape, dtype = ctx._out_meta[k]
                gk = np.zeros(shape, dtype)
                tgrads.append(Tensor(gk) if as_tensors else _graph._make(gk, False, None))
            else:
                tgrads.append(None)
        elif isinstance(gk, Tensor):
            tgrads.append(gk)
        else:
            tgrads.append(_graph._make(gk, False, None))
    cls = ctx._cls
    res = cls.backward(ctx, *tgrads)
    if not isinstance(res, tuple):
        res = (res,)
    n = len(ctx._inputs_meta)
    if len(res) != n:
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        else:
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number "
                               f"of gradients (expected {n}, got {len(res)})")
    out = []
    for i, (r, meta) in enumerate(zip(res, ctx._inputs_meta)):
        if r is None:
            out.append(None)
            continue
        if meta is None:
            raise RuntimeError(f"function {cls.__name__}Backward returned a gradient different "
                               f"than None at position {i + 1}, but the corresponding forward "
                               "input was not a Variable")
        if not isinstance(r, Tensor):
            if isinstance(r, (int, float, np.ndarray, np.generic)):
                r = Tensor(np.asarray(r, dtype=meta[1]))
            else:
                raise TypeError(f"function {cls.__name__}Backward returned a {type(r).__name__} "
                                f"as gradient {i}; expected a Tensor or None")
        shape = meta[0]
        if tuple(r.shape) != shape and not _expandable(shape, tuple(r.shape)):
            raise RuntimeError(f"Function {cls.__name__}Backward returned an invalid gradient at "
                               f"index {i} - got {list(r.shape)} but expected shape compatible "
                               f"with {list(shape)}")
        out.append(r if as_tensors else r.data)
    ctx._cache_key = g
    ctx._cache = out
    return out


def _expandable(shape, gshape):
    """Can a gradient of gshape be summed back to shape (shape broadcasts to gshape)?"""
    try:
        return np.broadcast_shapes(shape, gshape) == gshape
    except ValueError:
        return False


# ---- apply -------------------------------------------------------------------------------
def _custom_setup(cls):
    return "setup_context" in _own_attrs(cls)


def _own_attrs(cls):
    names = set()
    for c in cls.__mro__:
        if c is Function:
            break
        names.update(c.__dict__)
    return names


def _apply(cls, args, kwargs):
    Tensor = _graph.Tensor
    ctx = FunctionCtx()
    ctx._cls = cls
    ctx._fn_name = cls.__name__
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
    ctx._inputs_meta = tuple((tuple(a.data.shape), a.data.dtype) if isinstance(a, Tensor)
                             else None for a in args)
    with grad_mode.no_grad():
        if _custom_setup(cls):
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    single = not isinstance(raw, tuple)
    outs = (raw,) if single else tuple(raw)
    # An output that IS an input (returned unchanged) becomes a new tensor object (a view).
    dirty = {id(t) for t in ctx._dirty}
    fixed = []
    for o in outs:
        if isinstance(o, Tensor) and id(o) in dirty and any(o is a for a in args):
            fixed.append(o)  # changed in place by forward (mark_dirty): rebased below
        elif isinstance(o, Tensor) and any(o is a for a in args):
            v = _graph._make(o.data, False, None)
            v._version = o._version
            if id(o) in ctx._non_diff:
                ctx._non_diff.add(id(v))
            fixed.append(v)
        else:
            fixed.append(o)
    outs = tuple(fixed)
    tensor_outs = [o for o in outs if isinstance(o, Tensor)]
    ctx._out_meta = tuple((tuple(o.data.shape), o.data.dtype) if isinstance(o, Tensor)
                          else ((), np.float64) for o in outs)
    # Saved outputs would make a reference cycle (output -> node -> ctx -> output):
    # keep a history-free alias sharing the data and the version counter instead.
    if ctx._saved:
        out_ids = {id(o) for o in tensor_outs}
        saved = []
        for t in ctx._saved:
            if t is not None and id(t) in out_ids:
                a = _graph._make(t.data, False, None)
                a._version = t._version
                saved.append(a)
            else:
                saved.append(t)
        ctx._saved = tuple(saved)

    needs = grad_mode._state["enabled"] and any(ctx.needs_input_grad)
    if needs:
        op = _fn_op(cls)
        # An input forward changed in place (mark_dirty) is rebased like any in-place
        # op: a new tensor object `old` takes over its history as the node's input.
        inputs = list(args)
        olds = {}
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and id(a) in dirty:
                if a.grad_fn is None and a._rg:
                    raise RuntimeError("a leaf Variable that requires grad has been used in "
                                       "an in-place operation.")
                olds[id(a)] = inputs[i] = _graph._make(a.data, a._rg, a.grad_fn)
        inputs = tuple(inputs)
        kw = {"ctx": ctx}
        diff_outs = [(k, o) for k, o in enumerate(outs)
                     if isinstance(o, Tensor) and id(o) not in ctx._non_diff
                     and o.data.dtype.kind in "fc"]
        versions = tuple(a._version[0] if isinstance(a, Tensor) else None for a in inputs)
        if single and diff_outs:
            o = outs[0]
            node = _graph.Node(_op_for(op, len(args)), inputs, kw, o.data,
                               versions + (o._version[0],), o._version)
            if id(o) in olds:
                _mark_rebased(node, olds[id(o)])
            o.grad_fn = node
            o._rg = True
        elif diff_outs:
            node = _graph.Node(_op_for(op, len(args)), inputs, kw, np.zeros(0),
                               versions + (0,), [0])
            hub = _graph._make(np.zeros(0), True, node)
            for k, o in diff_outs:
                sel = _graph.Node(_SELECT, (hub,), {"index": k, "n": len(outs), "value": o.data},
                                  o.data, (0, o._version[0]), o._version)
                if id(o) in olds:
                    _mark_rebased(sel, olds[id(o)])
                o.grad_fn = sel
                o._rg = True
    if _graph._forward_ad_hook[0] is not None:
        _forward(cls, ctx, args, outs)
    return outs[0] if single else outs


def _mark_rebased(node, old):
    """Nodes recorded before the in-place change still point at the changed tensor: let
    the engine follow `node` back to `old` for them (as for the built-in in-place ops)."""
    from . import engine
    engine._inplace_old[node] = old
    engine._inplace_old_used[0] = True


_ARITY_OPS = {}


def _op_for(op, n):
    """The class's Op with n input rules (an Op per (class, arity), cached)."""
    key = (id(op), n)
    o = _ARITY_OPS.get(key)
    if o is None:
        o = Op()
        for s in Op.__slots__:
            setattr(o, s, getattr(op, s))
        o.vjps = _rules(n)
        _ARITY_OPS[key] = o
    return o


def _forward(cls, ctx, args, outs):
    """Forward mode through a custom Function: its `jvp` staticmethod gives the tangents."""
    Tensor = _graph.Tensor
    tangents = [(_graph._make(a._fw, False, None) if isinstance(a, Tensor) and a._fw is not None
                 else None) for a in args]
    if all(t is None for t in tangents):
        return
    if "jvp" not in _own_attrs(cls):
        raise NotImplementedError(f"forward-mode AD: the custom Function {cls.__name__} has no "
                                  "jvp staticmethod")
    with grad_mode.no_grad():
        res = cls.jvp(ctx, *tangents)
    res = res if isinstance(res, tuple) else (res,)
    from . import forward_ad
    for o, t in zip(outs, res):
        if isinstance(o, Tensor) and t is not None:
            arr = t.data if isinstance(t, Tensor) else np.asarray(t)
            forward_ad._set_tangent(o, np.array(np.broadcast_to(arr, o.data.shape),
                                                dtype=o.data.dtype))

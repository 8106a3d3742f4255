"""The derivative table: one `Op` entry per primitive, holding forward and rules.

An entry is data, in the spirit of HIPS autograd's `defvjp` and PyTorch's
`derivatives.yaml`:

    defop("exp", np.exp, partials=[lambda xp, ans, x: ans])

Rule signatures (the names are the same everywhere):
    forward(*arrays, **kw)                 -> array, or (array, extra) if extra=True
    vjp    (xp, g, ans, *inputs, **kw)     -> gradient for one input (any broadcast shape)
    partial(xp, ans, *inputs, **kw)        -> d ans / d input, elementwise ops only
    jvp    (xp, tangents, ans, *inputs, **kw) -> tangent of ans (tangents[i] None = zero)

`xp` is the array namespace the rule computes with: NumPy for an ordinary backward,
the differentiable tapegrad namespace under `create_graph=True` (then `g`, `ans` and
the inputs are Tensors and the backward pass is itself recorded). The engine undoes
broadcasting (sums each gradient back to its input's shape) in one place, so rules
never do.

`saves` / `saves_ans` name what the rules read, so that an in-place change to a
saved tensor is caught before backward uses a stale value.

Elementwise ops declare `partials`; their VJP (`g * d`) and JVP (`sum t_i * d_i`) are
derived from them. Linear ops declare `linear=True`: their JVP is the op applied to
the tangent.
"""
OPS = {}


class Op:
    __slots__ = ("name", "forward", "vjps", "jvp", "partials", "linear", "has_extra",
                 "differentiable", "promote_default", "input_names", "saves", "saves_ans",
                 "doc")

    def __repr__(self):
        return f"<op {self.name}>"


def defop(name, forward, *, vjp=None, partials=None, jvp=None, linear=False,
          extra=False, differentiable=True, promote=True, inputs=("x",), saves=None,
          saves_ans=None, doc=None):
    """Create and register one op. Returns the `Op` (call it with `apply`)."""
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice")
    op = Op()
    op.name = name
    op.forward = forward
    op.partials = tuple(partials) if partials is not None else None
    if vjp is None and partials is not None:
        vjp = tuple(_vjp_from_partial(p) for p in partials)
    op.vjps = tuple(vjp) if vjp is not None else None
    if jvp is None and partials is not None:
        jvp = _jvp_from_partials(op.partials)
    if jvp is None and linear:
        jvp = _jvp_linear(forward, name)
    op.jvp = jvp
    op.linear = linear
    op.has_extra = extra
    op.differentiable = differentiable and op.vjps is not None
    op.promote_default = promote
    op.input_names = tuple(inputs)
    # What backward reads (for the in-place version check): input indices (None = all)
    # and the output. Linear ops read only shapes, which in-place ops never change.
    op.saves = () if (saves is None and linear) else saves
    op.saves_ans = (not linear) if saves_ans is None else saves_ans
    op.doc = doc
    OPS[name] = op
    return op


def _vjp_from_partial(p):
    if p is None:
        return None

    def vjp(xp, g, ans, *inputs, **kw):
        return g * p(xp, ans, *inputs, **kw)

    return vjp


def _jvp_from_partials(partials):
    def jvp(xp, tangents, ans, *inputs, **kw):
        out = None
        for t, p in zip(tangents, partials):
            if t is None or p is None:
                continue
            term = t * p(xp, ans, *inputs, **kw)
            out = term if out is None else out + term
        return out

    return jvp


def _jvp_linear(forward, name):
    """Linear op: the tangent goes through the same op (zero tangents filled in)."""

    def jvp(xp, tangents, ans, *inputs, **kw):
        from ..autograd.graph import Tensor
        args = []
        for t, x in zip(tangents, inputs):
            if t is not None:
                args.append(t)
            elif isinstance(x, Tensor) or hasattr(x, "shape"):
                args.append(xp.zeros_like(x.data if isinstance(x, Tensor) else x))
            else:
                args.append(0)  # a Python-number argument of a linear op
        return forward(*args, **kw)

    return jvp

"""Shape ops: linear maps that move or copy elements without arithmetic.

Each is linear, so its forward rule is the op applied to the tangent, and its
backward rule is the inverse movement (reshape back, permute back, sum over the
broadcast axes).
"""
import numpy as np

from ...core.record import apply
from ._within_rule import within_rule as run  # one dispatch point for rules
from ..registry import EachInput, Op, defop


def _reshape_forward(x, shape):
    try:
        return x.reshape(shape)  # the method: np.reshape's Python wrappers cost ~0.5 us
    except ValueError:
        if tuple(shape).count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred") from None
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                           f"{x.size}") from None


reshape = defop("reshape", _reshape_forward, linear=True, promote=False, vjp=[
    # the method, not xp.reshape: the same on arrays and tensors (create_graph), without
    # np.reshape's three Python wrapper frames
    lambda xp, g, ans, x, shape: g.reshape(x.shape)
],
    text="dx = g reshaped to x's shape",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is",
    node="ViewBackward0")


def _expand_forward(x, shape):
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise RuntimeError(f"expand: the shape {tuple(x.shape)} cannot be expanded to "
                           f"{tuple(shape)}") from None


# The engine sums the gradient back to the input's shape, so the rule passes g on.
expand = defop("expand", _expand_forward, linear=True, promote=False,
               vjp=[lambda xp, g, ans, x, shape: g],
               text="dx = g summed over the expanded axes",
               hint=("linear: the rule only moves, copies or sums g, so it is finite whenever "
                     "g is"))


def _permute_forward(x, dims):
    return x.transpose(dims)  # the method: np.transpose's Python wrapper is ~0.6 us more


def _inverse_permutation(dims):
    """The permutation that undoes `dims`: np.argsort's, without converting the tuple to
    an array and back (~5 us -> ~1 us; the attention's head transposes, every step)."""
    return tuple(sorted(range(len(dims)), key=dims.__getitem__))


def _permute_node(node):
    # a swap of two dims prints TransposeBackward0 (also for x.T / x.t(), which torch
    # names PermuteBackward0 / TBackward0: the table records one op for them)
    dims = node.args.get("dims", ())
    moved = [i for i, d in enumerate(dims) if d != i]
    return "TransposeBackward0" if len(moved) == 2 else "PermuteBackward0"


permute = defop("permute", _permute_forward, linear=True, promote=False, vjp=[
    lambda xp, g, ans, x, dims: xp.transpose(g, _inverse_permutation(dims))
],
    text="dx = g permuted back",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is",
    node=_permute_node)


# ---------------------------------------------------------------------------------
# The rest of the shape ops (issue 3). Each is linear: its JVP is the op on the
# tangent; its VJP moves g back. A VJP that needs another table op calls it through
# `run`, so the same rule is raw NumPy in an ordinary backward and recorded under
# create_graph=True.
# ---------------------------------------------------------------------------------
def _back_to_shape(xp, g, ans, x, **kw):
    return xp.reshape(g, x.shape)


def _variadic(name, forward, make_rule, backward, doc=None, **knowledge):
    """An op of any number of inputs. The engine runs `backward` once per node (all N
    gradients in one pass: linear in N; N calls of a per-input rule would each receive
    all N arrays, quadratic). The per-input rules serve the tools that ask for one
    input's rule (strict mode, forward mode from VJPs, in-place rebasing)."""
    return defop(name, forward, linear=True, promote=True, inputs=("tensors",),
                 vjp=EachInput(make_rule), backward=backward, doc=doc, **knowledge)


# ---- reshapes under other names (what the graph shows is what the user called) ----
# squeeze: `axis` is a tuple of size-1 dims (the public function keeps only those).
def _squeeze_node(node):
    axis = node.args.get("axis")
    return "SqueezeBackward1" if isinstance(axis, int) or len(axis or ()) == 1 \
        else "SqueezeBackward0"


def _squeeze_forward(x, axis):
    # np.squeeze with no axis to drop returns x itself; torch a new view of it
    return np.squeeze(x, axis=axis) if axis != () else x.view()


squeeze = defop("squeeze", _squeeze_forward, linear=True,
                promote=False, vjp=[_back_to_shape],
                text="dx = g reshaped to x's shape",
                hint=("linear: the rule only moves, copies or sums g, so it is finite whenever"
                      " g is"),
                node=_squeeze_node)
unsqueeze = defop("unsqueeze", lambda x, axis: np.expand_dims(x, axis), linear=True,
                  promote=False, vjp=[_back_to_shape],
                  text="dx = g reshaped to x's shape",
                  hint=("linear: the rule only moves, copies or sums g, so it is finite "
                        "whenever g is"))


def _flatten_forward(x, start, end):
    # start/end are non-negative; a 0-d tensor flattens to shape (1,), as in PyTorch
    if x.ndim == 0:
        return x.reshape(1)
    s = x.shape
    n = 1
    for d in s[start:end + 1]:
        n *= d
    return x.reshape(s[:start] + (n,) + s[end + 1:])


flatten = defop("flatten", _flatten_forward, linear=True, promote=False,
                vjp=[_back_to_shape],
                text="dx = g reshaped to x's shape",
                hint=("linear: the rule only moves, copies or sums g, so it is finite whenever"
                      " g is"),
                node="ViewBackward0")


def _unflatten_forward(x, axis, sizes):
    return x.reshape(x.shape[:axis] + tuple(sizes) + x.shape[axis + 1:])


unflatten = defop("unflatten", _unflatten_forward, linear=True, promote=False,
                  vjp=[_back_to_shape],
                  text="dx = g reshaped to x's shape",
                  hint=("linear: the rule only moves, copies or sums g, so it is finite "
                        "whenever g is"),
                  node="ViewBackward0")


# ---- repeat (np.tile) ----------------------------------------------------------------
def _repeat_vjp(xp, g, ans, x, reps):
    # out has shape (r0*s0, r1*s1, ...): view g as (r0, s0, r1, s1, ...) and sum the r's.
    xs = (1,) * (len(reps) - x.ndim) + tuple(x.shape)
    inter = []
    for r, s in zip(reps, xs):
        inter += [r, s]
    g = xp.reshape(g, tuple(inter))
    g = xp.sum(g, axis=tuple(range(0, 2 * len(reps), 2)))
    return xp.reshape(g, x.shape)


repeat = defop("repeat", lambda x, reps: np.tile(x, reps), linear=True, promote=False,
               vjp=[_repeat_vjp],
               text="dx = g summed over the repeats",
               hint=("linear: the rule only moves, copies or sums g, so it is finite whenever "
                     "g is"))


# ---- cat / stack: one entry, any number of inputs -----------------------------------
def _cat_rule(i):
    def rule(xp, g, ans, *xs, axis):
        start = 0
        for x in xs[:i]:
            start += x.shape[axis]
        return g[(slice(None),) * axis + (slice(start, start + xs[i].shape[axis]),)]
    rule.__name__ = f"cat_vjp_{i}"
    return rule


_cat_rule.__doc__ = "input i gets its slice of g along axis"


def _cat_forward(*xs, axis):
    return np.concatenate(xs, axis=axis)


def _cat_backward(xp, g, ans, *xs, axis):
    """Every input's slice of g along axis, the offsets summed once."""
    lead = (slice(None),) * axis
    out, start = [], 0
    for x in xs:
        end = start + x.shape[axis]
        out.append(g[lead + (slice(start, end),)])
        start = end
    return out


cat = _variadic("cat", _cat_forward, _cat_rule, _cat_backward,
                text="dx_i = the slice of g for input i",
                hint=("linear: the rule only moves, copies or sums g, so it is finite whenever"
                      " g is"))


def _stack_rule(i):
    def rule(xp, g, ans, *xs, axis):
        return g[(slice(None),) * axis + (i,)]
    rule.__name__ = f"stack_vjp_{i}"
    return rule


_stack_rule.__doc__ = "input i gets g[..., i, ...] along axis"


def _stack_forward(*xs, axis):
    return np.stack(xs, axis=axis)


def _stack_backward(xp, g, ans, *xs, axis):
    lead = (slice(None),) * axis
    return [g[lead + (i,)] for i in range(len(xs))]


stack = _variadic("stack", _stack_forward, _stack_rule, _stack_backward,
                  text="dx_i = g[i]",
                  hint=("linear: the rule only moves, copies or sums g, so it is finite "
                        "whenever g is"))


# ---- constant pad (numpy-style widths: one (before, after) pair per dim) ------------
def _pad_forward(x, widths, value=0):
    # Negative widths crop (as in F.pad); positive widths add `value`.
    if any(b < 0 or a < 0 for b, a in widths):
        x = x[tuple(slice(-b if b < 0 else 0, n + a if a < 0 else n)
                    for (b, a), n in zip(widths, x.shape))]
        widths = tuple((b if b > 0 else 0, a if a > 0 else 0) for b, a in widths)
    if not any(b or a for b, a in widths):
        return x
    return np.pad(x, widths, mode="constant", constant_values=value)


def _pad_vjp(xp, g, ans, x, widths, value=0):
    # The transpose of padding is cropping, i.e. padding by the negated widths.
    return run(xp, pad, g, widths=tuple((-b, -a) for b, a in widths), value=0)


def _pad_jvp(xp, tangents, ans, x, widths, value=0):
    return _pad_forward(tangents[0], widths, 0)  # the constant has no tangent


pad = defop("pad", _pad_forward, promote=False, vjp=[_pad_vjp], jvp=_pad_jvp, reads=[""],
            text="dx = g with the padding cut off",
            hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g "
                  "is"),
            node="ConstantPadNdBackward0")


# ---- narrow / select (the pieces of split, chunk and unbind) ------------------------
def _narrow_forward(x, axis, start, length):
    return x[(slice(None),) * axis + (slice(start, start + length),)]


def _narrow_vjp(xp, g, ans, x, axis, start, length):
    widths = [(0, 0)] * x.ndim
    widths[axis] = (start, x.shape[axis] - start - length)
    return run(xp, pad, g, widths=tuple(widths), value=0)


narrow = defop("narrow", _narrow_forward, linear=True, promote=False, vjp=[_narrow_vjp],
               text="dx = zeros with g placed in the slice",
               hint=("linear: the rule only moves, copies or sums g, so it is finite whenever "
                     "g is"),
               node="SliceBackward0")


def _select_forward(x, axis, index):
    return x[(slice(None),) * axis + (index, Ellipsis)]  # `...`: a 0-d view, not a scalar


def _select_vjp(xp, g, ans, x, axis, index):
    widths = [(0, 0)] * x.ndim
    widths[axis] = (index, x.shape[axis] - index - 1)
    return run(xp, pad, xp.expand_dims(g, axis), widths=tuple(widths), value=0)


select = defop("select", _select_forward, linear=True, promote=False, vjp=[_select_vjp],
               text="dx = zeros with g placed at the index",
               hint=("linear: the rule only moves, copies or sums g, so it is finite whenever "
                     "g is"))


# ---- split / chunk / unbind into many pieces: ONE node with one output per piece ------
# A piece recorded as its own narrow/select node gets a rule that pads its gradient to
# the input's full size: N pieces cost N full-size arrays (quadratic). One node with N
# outputs gets the N pieces' gradients as a list (None: no gradient came) and makes
# the input's gradient with one concatenation. Not in the global table: its number of
# outputs is per call (like a custom Function's entry), so one entry per count.
def _pieces_forward(x, axis, sizes, squeeze):
    """The pieces along axis, views of x (each length-1 piece without that axis if
    `squeeze`: unbind)."""
    lead = (slice(None),) * axis
    out, start = [], 0
    for s in sizes:
        # (`...`: a 0-d view where NumPy would return a copied scalar)
        out.append(x[lead + (start, Ellipsis)] if squeeze
                   else x[lead + (slice(start, start + s),)])
        start += s
    return tuple(out)


def _pieces_backward(xp, g, ans, x, *, axis, sizes, squeeze):
    """The input's gradient: the pieces' gradients concatenated, a run of pieces that
    got none filled by one block of zeros."""
    parts, gap = [], 0
    for gk, s in zip(g, sizes):
        if gk is None:
            gap += s
            continue
        if gap:
            parts.append(_zeros_block(x, axis, gap))
            gap = 0
        parts.append(xp.expand_dims(gk, axis) if squeeze else gk)
    if gap:
        parts.append(_zeros_block(x, axis, gap))
    return [parts[0] if len(parts) == 1 else run(xp, cat, *parts, axis=axis)]


def _zeros_block(x, axis, n):
    shape = list(x.shape)
    shape[axis] = n
    return np.zeros(tuple(shape), dtype=x.dtype)


_PIECES = {}


def pieces_op(n, squeeze, sizes_given=False):
    """The entry of a split into n pieces (unbind: squeeze=True; split_with_sizes: the
    sizes were given as a list, torch's SplitWithSizes)."""
    op = _PIECES.get((n, squeeze, sizes_given))
    if op is None:
        name = "unbind" if squeeze else "split_with_sizes" if sizes_given else "split"
        op = _PIECES[(n, squeeze, sizes_given)] = Op(
            name, _pieces_forward, backward=_pieces_backward, n_outputs=n, linear=True,
            promote=False, doc=f"{name} into {n} pieces (views): one node, one output each")
    return op


# ---- flip / roll / tril / triu ------------------------------------------------------
# NOTE: a copy, as in PyTorch (np.flip is a view: an in-place change would reach x).
flip = defop("flip", lambda x, axis: np.flip(x, axis=axis).copy(), linear=True, promote=False,
             vjp=[lambda xp, g, ans, x, axis: run(xp, flip, g, axis=axis)],
             text="dx = g flipped back",
             hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g "
                   "is"))


def _roll_vjp(xp, g, ans, x, shifts, axis):
    back = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
    return run(xp, roll, g, shifts=back, axis=axis)


roll = defop("roll", lambda x, shifts, axis: np.roll(x, shifts, axis=axis), linear=True,
             promote=False, vjp=[_roll_vjp],
             text="dx = g rolled back",
             hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g "
                   "is"))
tril = defop("tril", lambda x, k: np.tril(x, k), linear=True, promote=False,
             vjp=[lambda xp, g, ans, x, k: run(xp, tril, g, k=k)],
             text="dx = tril(g)",
             hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g "
                   "is"))
triu = defop("triu", lambda x, k: np.triu(x, k), linear=True, promote=False,
             vjp=[lambda xp, g, ans, x, k: run(xp, triu, g, k=k)],
             text="dx = triu(g)",
             hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g "
                   "is"))


# ---- copies, casts, aliases (linear: the gradient passes through) ----------------------
cast = defop("cast", lambda x, dtype: x.astype(dtype), promote=False, linear=True,
             vjp=[lambda xp, g, ans, x, dtype: g],
             text="dx = g cast to x's dtype",
             hint=("cast passes g on, cast back to x's dtype: finite whenever the incoming "
                   "gradient is, unless g is too large for that dtype (float16 overflows above"
                   " 65504)"),
             node="ToCopyBackward0")  # the engine casts g back to x's dtype
clone = defop("clone", lambda x: x.copy(), linear=True, promote=False,
              vjp=[lambda xp, g, ans, x: g],
              text="dx = g",
              hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g"
                    " is"))
alias = defop("alias", lambda x: x, linear=True, promote=False,
              vjp=[lambda xp, g, ans, x: g],
              doc="identity that shares memory (make_dual / unpack_dual, function transforms)",
              text="dx = g",
              hint=("linear: the rule only moves, copies or sums g, so it is finite whenever g"
                    " is"))

"""The derivative table's vocabulary: `Op` (one entry) and `defop` (make and register one).

An entry is data, in the spirit of HIPS autograd's `defvjp` and PyTorch's
`derivatives.yaml`:

    defop("exp", np.exp, promote="float", partials=[lambda xp, ans, x: ans], reads=["ans"])

(torch's node name and the promotion kind are declared in the entry too: `node=`,
`promote=`, below.)

Rule signatures (the names are the same everywhere):
    forward(*arrays, **args)                 -> array, or (array, saved) if extra=True
    vjp    (xp, g, ans, *inputs, **kw)       -> gradient for one input (any broadcast shape)
    partial(xp, ans, *inputs, **kw)          -> d ans / d input, elementwise ops only
    jvp    (xp, tangents, ans, *inputs, **kw) -> tangent of ans (tangents[i] None = zero)
    backward(xp, g, ans, *inputs, **kw)      -> one gradient per input (for ops whose
                                                inputs' gradients come from one computation:
                                                custom Functions, checkpointing; an
                                                op of N inputs, cat/stack, gives both:
                                                the engine runs `backward` once, tools
                                                needing one input's rule use `vjp`)
`kw` holds the op's arguments and the values its forward saved (`saved`).

`xp` is the array namespace the rule computes with: NumPy for an ordinary backward,
the differentiable tapegrad namespace (ops/xp.py) under `create_graph=True`; then `g`,
`ans` and the inputs are Tensors and the backward pass is itself recorded. The engine
undoes broadcasting (sums each gradient back to its input's shape) in one place, so
rules never do.

`reads` declares, per input, what that input's rule reads: names among "ans" and the
input names ("x", "y", ...), e.g. mul: reads=["y", "x"] (one string for ops with any
number of inputs: what every input's rule reads). The engine refuses to run a
rule whose inputs were changed in place since recording (PyTorch's version check), and
in-place ops keep a copy of the old value only if a rule reads it, and a node of an op
whose rules read no "ans" keeps a NaN stand-in for a large output (core/standin.py).
Linear ops read nothing; an op without a declaration is taken to read everything.

An entry also carries what the tools built on the table say about it, so that one
place holds all there is to know about an op (tests/test_op_knowledge.py checks that
every table op has it):
    text    the local rule in a learner's notation, one string, `;` between inputs:
            mul: "dx = g*y ; dy = g*x" (`g` the incoming gradient, `ans` the output);
            shown by `tg.explain` and as the tooltip of the op in `tg.viz.to_dot`.
    hint    for anomaly mode: where the derivative is infinite or undefined and the
            usual fix (sqrt: "... infinite at x = 0 ...; sqrt(x + eps)"), or, for ops
            whose rule is finite wherever its inputs are, a sentence saying so.
    edges_only  True when no rule reads an input's values, only its shape (add, sub):
            a recorded node then holds a data-free stand-in for a large non-leaf input,
            so the input's array is freed as soon as nothing else uses it (PyTorch's
            AddBackward saves nothing either). Stand-ins hold NaN: a rule that reads
            one gives NaN gradients, and tests/test_standin.py fails.
    strict  for strict mode: None (check the rule against finite differences); a
            predicate on `node.args` that is True when the rule is deliberately NOT the
            derivative (embedding with padding_idx); or a string: the reason strict
            mode cannot re-run the op at all (checkpoint).
    promote the type-promotion kind (PROMOTE_KINDS below: "float" for exp, "div" for div,
            ...), or False for ops that keep their input's dtype by construction (shape
            ops). Undeclared (True): only the result-dtype net of core/record.py
            (`keep_default_dtype`) applies.
    opmath  float16 inputs computed in float32 and the result rounded once, as PyTorch
            does (core/opmath.py): default True, False for ops declaring promote=False
            (views and indexing only move values); cumsum and the average poolings,
            promote=False but computing, declare opmath=True.
    node    torch's class name for the node that records the op (`grad_fn=<MulBackward0>`
            in a tensor's repr): a string, or a function of the recorded Node for ops that
            torch records under different nodes depending on the arguments
            (`x.sum()` SumBackward0, `x.sum(1)` SumBackward1; `1 - x` RsubBackward1).
            Without one the name is `<CamelCase op name>Backward0` (exp: ExpBackward0),
            which is torch's for most ops (core/names.py; tests/test_node_names.py
            compares a sample with torch's own `type(grad_fn).__name__`).

Elementwise ops declare `partials`; their VJP (`g * d`) and JVP (`sum t_i * d_i`) are
derived from them. Linear ops declare `linear=True`: their JVP is the op applied to
the tangent.
"""
OPS = {}


class Op:
    """One entry of the derivative table (built-in ops, custom Functions, checkpoints)."""

    __slots__ = ("name", "forward", "vjps", "backward", "jvp", "partials", "linear",
                 "has_extra", "differentiable", "promote", "promote_default", "ints_to_float",
                 "input_names", "reads",
                 "n_outputs", "doc", "text", "hint", "strict", "_reads_idx", "edges_only",
                 "keeps_ans", "node", "opmath")

    def __init__(self, name, forward, *, vjp=None, backward=None, partials=None, jvp=None,
                 linear=False, extra=False, differentiable=True, promote=True, inputs=("x",),
                 reads=None, n_outputs=1, doc=None, text=None, hint=None, strict=None,
                 edges_only=False, node=None, opmath=None):
        if not (strict is None or callable(strict) or isinstance(strict, str)):
            raise TypeError(f"op {name!r}: strict must be None, a predicate on node.args or "
                            f"a reason string, got {type(strict).__name__} {strict!r}")
        self.name = name
        self.forward = forward
        self.partials = tuple(partials) if partials is not None else None
        if vjp is None and partials is not None:
            vjp = [_vjp_from_partial(p) for p in partials]
        # a list (one rule per input) or an `EachInput` (variadic ops: rule i made on demand)
        self.vjps = tuple(vjp) if isinstance(vjp, (list, tuple)) else vjp
        self.backward = backward
        if jvp is None and partials is not None:
            jvp = _jvp_from_partials(self.partials)
        if jvp is None and linear:
            jvp = _jvp_linear(forward)
        self.jvp = jvp
        self.linear = linear
        self.has_extra = extra
        self.differentiable = differentiable and (self.vjps is not None or backward is not None)
        if not (promote in (True, False, None) or promote in PROMOTE_KINDS):
            raise ValueError(f"op {name!r}: promote must be one of {sorted(PROMOTE_KINDS)}, "
                             f"True or False, got {promote!r}")
        # the declared kind (None: none declared, or no promotion at all)
        self.promote = promote if isinstance(promote, str) else None
        # the result-dtype net of core/record.py (float64 from float32 and an integer
        # array is float32, as in torch): every op but those declaring promote=False
        self.promote_default = promote is not False and promote is not None
        self.ints_to_float = promote == FLOAT  # read by core/record.py on every call
        # float16 computed in float32 and rounded once (core/opmath.py): every op that
        # computes; ops that only move values (promote=False: views, indexing) are left
        # alone unless they declare opmath=True (cumsum, the average poolings)
        self.opmath = (promote is not False) if opmath is None else opmath
        self.input_names = tuple(inputs)
        if reads is None and linear:
            reads = ""  # a linear rule moves g; it reads no values
        self.reads = reads if reads is None or isinstance(reads, str) else tuple(reads)
        self.n_outputs = n_outputs
        self.doc = doc
        self.text = text
        self.hint = hint
        self.strict = strict
        self.node = node
        # no rule (vjp, jvp) needs the inputs' VALUES, only their shapes: a node keeps
        # edges to large non-leaf inputs, not their arrays (core/record.py `_edges`;
        # strict mode re-runs the forward on zeros there)
        self.edges_only = edges_only
        if reads is None:
            self._reads_idx = None
        elif isinstance(reads, str):
            self._reads_idx = _Each(self._parse_reads(reads))
        else:
            self._reads_idx = tuple(self._parse_reads(r) for r in self.reads)
        # does a recorded node need its output array? Not when no rule reads `ans` (an
        # op without a declaration reads everything; several outputs: always kept)
        self.keeps_ans = (self._reads_idx is None or n_outputs != 1
                          or (self._reads_idx.reads[0] if isinstance(self._reads_idx, _Each)
                              else any(a for a, _ in self._reads_idx)))

    def _parse_reads(self, text):
        names = text.replace(",", " ").split()
        for n in names:
            if n != "ans" and n not in self.input_names:
                raise ValueError(f"op {self.name!r}: reads names {n!r}, which is neither "
                                 f"'ans' nor an input {self.input_names}")
        return "ans" in names, frozenset(self.input_names.index(n) for n in names
                                         if n != "ans")

    def strict_exempt(self, args):
        """Why strict mode leaves a node with these args unchecked (a string), or None.

        A predicate `strict` exempts the nodes it is True for (the rule is deliberately
        not the derivative there); a string `strict` exempts every node of the op."""
        if self.strict is None:
            return None
        if isinstance(self.strict, str):
            return self.strict
        return "its rule is deliberately not the derivative here" if self.strict(args) else None

    def input_name(self, i):
        return self.input_names[i] if i < len(self.input_names) else f"input{i}"

    def reads_for(self, node):
        """(input indices, reads_ans) the rules that will run for `node` read: only the
        rules of inputs that require grad run (`a / 2` never runs the divisor's rule)."""
        ins = node.inputs
        if self._reads_idx is None:
            return tuple(range(len(ins))), True
        used, ans = set(), False
        for i, t in enumerate(ins):
            if getattr(t, "_rg", False):
                reads_ans, idx = self._reads_idx[i]
                ans = ans or reads_ans
                used |= idx
        return tuple(sorted(used)), ans

    def reads_input(self, i):
        """Could any rule read input i (in-place ops keep a copy of the old value then)?"""
        if self._reads_idx is None:
            return True
        if isinstance(self._reads_idx, _Each):
            return bool(self._reads_idx.reads[1])
        return any(i in idx for _, idx in self._reads_idx)

    def __repr__(self):
        return f"<op {self.name}>"


class EachInput:
    """VJP rules of an op with any number of inputs (cat, stack): rule i made on demand."""

    __slots__ = ("make", "cache")

    def __init__(self, make):
        self.make = make
        self.cache = {}

    def __getitem__(self, i):
        rule = self.cache.get(i)
        if rule is None:
            rule = self.cache[i] = self.make(i)
        return rule

    def __iter__(self):
        raise TypeError("the VJP rules of a variadic op are made per input index: "
                        "use rules[i]")

    def __repr__(self):
        return f"<one VJP per input: {self.make.__doc__ or self.make.__name__}>"


class _Each:
    """The same `reads` for every input index (variadic ops, custom Functions)."""

    __slots__ = ("reads",)

    def __init__(self, reads):
        self.reads = reads

    def __getitem__(self, i):
        return self.reads


FLOAT = "float"
# The type-promotion kinds an entry declares (torch/_refs' ELEMENTWISE_TYPE_PROMOTION_KIND):
#   "float"    integer and bool inputs are computed in the default float dtype (exp, sin,
#              sqrt: torch's INT_TO_FLOAT); core/record.py `apply` casts them before the
#              forward runs
#   "arith"    the operands are cast to torch.result_type (add, mul, maximum)
#   "sub"      as "arith", and bool operands are refused (torch's message)
#   "div"      as "arith", integer results become the default dtype (div, atan2)
#   "compare"  the operands are compared in their result type (the result is bool)
#   "pow", "remainder", "fmod", "floor_divide", "bitwise_and|or|xor": as "arith", with the
#              dtypes torch has no kernel for refused (ops/promotion.py NO_BOOL, NO_FLOAT)
# ops/promotion.py `operands(op, a, b)` casts a binary op's operands by its kind.
PROMOTE_KINDS = frozenset({FLOAT, "arith", "sub", "div", "compare", "pow", "remainder",
                           "fmod", "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor"})


def defop(name, forward, **entry):
    """Create one op of the table and register it under `name`. Returns the `Op`."""
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice")
    op = OPS[name] = Op(name, forward, **entry)
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


def _jvp_linear(forward):
    """Linear op: the tangent goes through the same op (zero tangents filled in)."""

    def jvp(xp, tangents, ans, *inputs, **kw):
        args = []
        for t, x in zip(tangents, inputs):
            if t is not None:
                args.append(t)
            elif hasattr(x, "shape"):
                args.append(xp.zeros_like(x))
            else:
                args.append(0)  # a Python-number argument of a linear op
        return forward(*args, **kw)

    return jvp

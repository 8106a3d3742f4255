"""The scalar engine: `Value`, a micrograd-compatible autodiff scalar for teaching.

    from tapegrad import Value
    w = Value(0.5, label="w"); x = Value(2.0, label="x"); b = Value(-1.0, label="b")
    loss = w * x + b
    loss.backward()
    w.grad, x.grad, b.grad          # (2.0, 0.5, 1.0)

Public names are micrograd's: `data`, `grad`, `_op`, `_prev` (the set of parents),
`_backward` (the node's local rule, callable), plus `label` and the ordered `_parents`.

How it differs from micrograd, and why:
- The recipe is DATA: each Value stores its op name (`_op`), its parents (`_parents`)
  and, for an op with a Python-number operand, that constant (`_arg`). `backward` applies
  the rule for `_op` from the table `RULES` below. micrograd stores a closure per node
  that captures its output (`out._backward` refers to `out`): a reference cycle, so every
  graph is freed by the cyclic garbage collector. Here a Value points only at its
  parents, so a graph is freed by reference counting as soon as it is dropped.
- `backward()` has no recursion: creation order is a topological order (a parent always
  exists before its child), so it collects the reachable nodes with an explicit stack and
  sorts them by creation number. A 1,000,000-node chain works.
- Edge cases follow IEEE / PyTorch instead of raising: 1/0 = inf, log(0) = -inf,
  sqrt(-1) = nan, a negative base to a non-integer power = nan, exp(1000) = inf.
- Leaf gradients accumulate across backward calls (as in PyTorch); the gradients of
  intermediate nodes are reset at the start of each backward (micrograd double-counts
  them if you call backward twice on the same graph).

The local derivatives are the same formulas as the Tensor table (ops/elementwise.py),
written for Python floats; tests/test_value.py checks every op against `tg.Tensor`
(float64) and PyTorch on the same inputs.
"""
import itertools
import math
import operator

__all__ = ["Value", "RULES"]

_inf = math.inf
_nan = math.nan
_counter = itertools.count()


# ---- IEEE-safe scalar math (Python raises where NumPy/PyTorch give inf or nan) -------

def _np_scalar(fn, *args):
    import numpy as np
    with np.errstate(all="ignore"):
        return float(fn(*(np.float64(a) for a in args)))


def _div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        import numpy as np
        return _np_scalar(np.true_divide, a, b)


def _pow(a, b):
    # NOTE: a negative base with a non-integer exponent gives nan (as PyTorch), not the
    # complex number Python would return; 0 ** negative gives inf.
    try:
        r = a ** b
    except (ZeroDivisionError, OverflowError):
        import numpy as np
        return _np_scalar(np.power, a, b)
    if type(r) is complex:
        return _nan
    return float(r)


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return _inf


def _log(x):
    if x > 0 or x != x:
        return math.log(x)
    return -_inf if x == 0 else _nan


def _sqrt(x):
    if x >= 0 or x != x:
        return math.sqrt(x)
    return _nan


def _sin(x):
    return math.sin(x) if not math.isinf(x) else _nan


def _cos(x):
    return math.cos(x) if not math.isinf(x) else _nan


def _sign(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x  # 0.0 (or -0.0) stays, nan stays nan: NumPy's sign


def _sigmoid(x):
    # Stable for large |x|: never exponentiates a large positive number.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _relu(x):
    # NOTE: nan stays nan (as np.maximum and torch.relu); micrograd returns nan too.
    return x if (x > 0 or x != x) else 0.0


# ---- the rule table: d(out)/d(parent) * out.grad, per parent --------------------------
# A rule gets the node `v` and its gradient `g` and returns the contribution for its one
# parent (unary ops, or a binary op with a number operand) or a pair (two Value parents).
# `v._arg` holds the number operand. The formulas are those of ops/elementwise.py.

def _r_add(v, g):
    return (g, g) if v._arg is None else g


def _r_sub(v, g):          # x - y
    return (g, -g) if v._arg is None else g


def _r_rsub(v, g):         # c - x
    return -g


def _r_mul(v, g):
    if v._arg is None:
        a, b = v._parents
        return (g * b.data, g * a.data)
    return g * v._arg


def _r_div(v, g):          # x / y: dx = 1/y, dy = -ans/y
    if v._arg is None:
        y = v._parents[1].data
        return (g * _div(1.0, y), g * _div(-v.data, y))
    return g * _div(1.0, v._arg)


def _r_rdiv(v, g):         # c / x: dx = -ans/x
    return g * _div(-v.data, v._parents[0].data)


def _pow_dx(x, y):
    # NOTE: d/dx x**y = y * x**(y-1), defined as 0 where y == 0 (even at x == 0), as PyTorch.
    return 0.0 if y == 0 else y * _pow(x, y - 1)


def _pow_dy(ans, x, y):
    # NOTE: d/dy x**y = x**y * log(x), defined as 0 at x == 0 with y >= 0, as PyTorch.
    return 0.0 if (x == 0 and y >= 0) else ans * _log(x)


def _r_pow(v, g):          # x ** y
    if v._arg is None:
        a, b = v._parents
        x, y = a.data, b.data
        return (g * _pow_dx(x, y), g * _pow_dy(v.data, x, y))
    return g * _pow_dx(v._parents[0].data, v._arg)


def _r_rpow(v, g):         # c ** x
    return g * _pow_dy(v.data, v._arg, v._parents[0].data)


def _r_neg(v, g):
    return -g


def _r_exp(v, g):
    return g * v.data


def _r_log(v, g):
    return g * _div(1.0, v._parents[0].data)


def _r_sqrt(v, g):
    # NOTE: sqrt'(0) = 0.5/0 = inf; times a zero upstream gives nan (worked example 5).
    return g * _div(0.5, v.data)


def _r_abs(v, g):
    # NOTE: abs'(0) is taken as 0 (sign(0)), as PyTorch does.
    return g * _sign(v._parents[0].data)


def _r_tanh(v, g):         # from the saved OUTPUT: 1 - tanh(x)**2
    a = v.data
    return g * (1.0 - a * a)


def _r_sigmoid(v, g):      # from the saved OUTPUT: s * (1 - s)
    s = v.data
    return g * (s * (1.0 - s))


def _r_relu(v, g):
    # NOTE: relu'(0) is taken as 0: the gradient passes only where the input was > 0.
    return g if v.data > 0 else 0.0


def _r_sin(v, g):
    return g * _cos(v._parents[0].data)


def _r_cos(v, g):
    return g * -_sin(v._parents[0].data)


RULES = {
    "add": _r_add, "sub": _r_sub, "rsub": _r_rsub, "mul": _r_mul, "div": _r_div,
    "rdiv": _r_rdiv, "pow": _r_pow, "rpow": _r_rpow, "neg": _r_neg, "exp": _r_exp,
    "log": _r_log, "sqrt": _r_sqrt, "abs": _r_abs, "tanh": _r_tanh,
    "sigmoid": _r_sigmoid, "relu": _r_relu, "sin": _r_sin, "cos": _r_cos,
}


class Value:
    """A scalar that remembers how it was computed, so `backward()` can fill `.grad`."""

    __slots__ = ("data", "grad", "label", "_op", "_parents", "_arg", "_id", "_bw",
                 "__weakref__")

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data if type(data) is float else float(data)
        self.grad = 0.0
        self.label = label
        self._op = _op
        self._parents = tuple(_children)
        self._arg = None
        self._id = next(_counter)
        self._bw = None

    # ---- the recipe, readable from outside --------------------------------------------
    @property
    def _prev(self):
        """micrograd's name: the set of parents (Values this one was computed from)."""
        return set(self._parents)

    @property
    def _backward(self):
        """This node's local rule as a callable (micrograd style: adds into the parents'
        `.grad` from `self.grad`). Assigning a function replaces the table rule."""
        if self._bw is not None:
            return self._bw
        return lambda: _apply_rule(self)

    @_backward.setter
    def _backward(self, fn):
        self._bw = fn

    @property
    def recipe(self):
        """A readable one-liner: how this value was computed."""
        if not self._parents:
            return f"{_name(self)} = {self.data!r} (leaf)"
        return f"{_name(self)} = {_formula(self)} = {self.data!r}"

    def __repr__(self):
        lab = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data}, grad={self.grad}{lab})"

    def __float__(self):
        return self.data

    def item(self):
        return self.data

    # ---- arithmetic ---------------------------------------------------------------
    # NOTE: + and * (most of an MLP's graph) build their output inline, without the call
    # to `_node`: the same fields in the same order.
    def __add__(self, other):
        v = _new(Value)
        if type(other) is Value or isinstance(other, Value):
            v.data = self.data + other.data
            v._parents = (self, other)
            v._arg = None
        else:
            c = _const(other)
            if c is NotImplemented:
                return c
            v.data = self.data + c
            v._parents = (self,)
            v._arg = c
        v.grad = 0.0
        v.label = ""
        v._op = "add"
        v._id = next(_counter)
        v._bw = None
        return v

    def __radd__(self, other):
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(c + self.data, "add", (self,), c)

    def __sub__(self, other):
        if isinstance(other, Value):
            return _node(self.data - other.data, "sub", (self, other), None)
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(self.data - c, "sub", (self,), c)

    def __rsub__(self, other):
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(c - self.data, "rsub", (self,), c)

    def __mul__(self, other):
        v = _new(Value)
        if type(other) is Value or isinstance(other, Value):
            v.data = self.data * other.data
            v._parents = (self, other)
            v._arg = None
        else:
            c = _const(other)
            if c is NotImplemented:
                return c
            v.data = self.data * c
            v._parents = (self,)
            v._arg = c
        v.grad = 0.0
        v.label = ""
        v._op = "mul"
        v._id = next(_counter)
        v._bw = None
        return v

    def __rmul__(self, other):
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(c * self.data, "mul", (self,), c)

    def __truediv__(self, other):
        if isinstance(other, Value):
            return _node(_div(self.data, other.data), "div", (self, other), None)
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(_div(self.data, c), "div", (self,), c)

    def __rtruediv__(self, other):
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(_div(c, self.data), "rdiv", (self,), c)

    def __pow__(self, other):
        if isinstance(other, Value):
            return _node(_pow(self.data, other.data), "pow", (self, other), None)
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(_pow(self.data, c), "pow", (self,), c)

    def __rpow__(self, other):
        c = _const(other)
        if c is NotImplemented:
            return c
        return _node(_pow(c, self.data), "rpow", (self,), c)

    def __neg__(self):
        return _node(-self.data, "neg", (self,), None)

    def __pos__(self):
        return self

    # ---- functions ------------------------------------------------------------------
    def exp(self):
        return _node(_exp(self.data), "exp", (self,), None)

    def log(self):
        return _node(_log(self.data), "log", (self,), None)

    def sqrt(self):
        return _node(_sqrt(self.data), "sqrt", (self,), None)

    def abs(self):
        return _node(abs(self.data), "abs", (self,), None)

    __abs__ = abs

    def tanh(self):
        return _node(math.tanh(self.data), "tanh", (self,), None)

    def sigmoid(self):
        return _node(_sigmoid(self.data), "sigmoid", (self,), None)

    def relu(self):
        return _node(_relu(self.data), "relu", (self,), None)

    def sin(self):
        return _node(_sin(self.data), "sin", (self,), None)

    def cos(self):
        return _node(_cos(self.data), "cos", (self,), None)

    # ---- comparisons: on .data, return bool (for branching code) ----------------------
    # NOTE: == and hash stay identity-based, so Values can live in sets and dicts.
    def __lt__(self, other):
        return self.data < _data(other)

    def __le__(self, other):
        return self.data <= _data(other)

    def __gt__(self, other):
        return self.data > _data(other)

    def __ge__(self, other):
        return self.data >= _data(other)

    # ---- backward -------------------------------------------------------------------
    def backward(self):
        """Fill `.grad` of every Value this one depends on (d self / d that value).

        Leaves accumulate (call `zero_grad` / set `.grad = 0` between steps); interior
        nodes hold this pass's gradient. `tapegrad.explain(v)` runs the same pass and
        narrates it.
        """
        run_backward(self)


def _data(other):
    return other.data if isinstance(other, Value) else other


def _const(other):
    """A Python number operand, as a float; NotImplemented for anything else."""
    t = type(other)
    if t is float:
        return other
    if t is int or t is bool:
        return float(other)
    try:
        import numbers
        if isinstance(other, numbers.Real):
            return float(other)
    except TypeError:
        pass
    return NotImplemented


_new = object.__new__


def _node(data, op, parents, arg):
    """Build an op's output without going through __init__ (hot path)."""
    v = _new(Value)
    v.data = data
    v.grad = 0.0
    v.label = ""
    v._op = op
    v._parents = parents
    v._arg = arg
    v._id = next(_counter)
    v._bw = None
    return v


# ---- the walk ---------------------------------------------------------------------

def topo_order(root):
    """Every Value reachable from `root`, children before parents (reverse topological).

    No recursion: an explicit stack collects the reachable nodes, then they are sorted by
    creation number (a parent is always created before its children).
    """
    return _collect(root, False)


_by_id = operator.attrgetter("_id")


def _collect(root, reset):
    """The reachable Values in reverse topological order; `reset`: zero the gradients of
    the interior ones on the way (they hold one pass's gradient, leaves accumulate)."""
    seen = {root}
    stack = [root]
    add = seen.add
    push = stack.append
    pop = stack.pop
    while stack:
        for p in pop()._parents:
            if p not in seen:
                add(p)
                push(p)
                if reset and p._parents:
                    p.grad = 0.0
    return sorted(seen, key=_by_id, reverse=True)


def run_backward(root, observer=None):
    """The reverse sweep over `topo_order(root)`: each node's rule from `RULES`.

    `observer(node, parent_index, parent, contribution)` (optional) is called after each
    contribution is added to a parent's `.grad`: `tapegrad.explain` uses it to narrate
    the real backward pass instead of re-implementing it. Returns the order used.
    """
    order = _collect(root, True)
    root.grad = 1.0 if root._parents else root.grad + 1.0
    rules = RULES
    fast = observer is None
    for v in order:
        ps = v._parents
        if not ps:
            continue
        g = v.grad
        if v._bw is not None:       # a micrograd-style custom `_backward` closure
            v._bw()
            if observer is not None:
                observer(v, -1, None, None)
            continue
        if fast:
            # NOTE: inline fast paths for + and * (the bulk of an MLP's graph): the same
            # formulas as _r_add and _r_mul; explain (observer set) goes through the table.
            op = v._op
            if op == "add":
                if len(ps) == 2:
                    a, b = ps
                    a.grad += g
                    b.grad += g
                else:
                    ps[0].grad += g
                continue
            if op == "mul":
                c = v._arg
                if c is None:
                    a, b = ps
                    a.grad += g * b.data
                    b.grad += g * a.data
                else:
                    ps[0].grad += g * c
                continue
        rule = rules.get(v._op)
        if rule is None:
            continue
        gs = rule(v, g)
        if len(ps) == 1:
            p = ps[0]
            p.grad += gs
            if observer is not None:
                observer(v, 0, p, gs)
        else:
            a, b = ps
            ga, gb = gs
            a.grad += ga
            if observer is not None:
                observer(v, 0, a, ga)
            b.grad += gb
            if observer is not None:
                observer(v, 1, b, gb)
    return order


def _apply_rule(v):
    """One node's local rule, micrograd's `v._backward()`: parents' grads += ..."""
    rule = RULES.get(v._op)
    if rule is None or not v._parents:
        return
    gs = rule(v, v.grad)
    if len(v._parents) == 1:
        v._parents[0].grad += gs
    else:
        a, b = v._parents
        a.grad += gs[0]
        b.grad += gs[1]


# ---- readable names and formulas (for `recipe`, explain and draw) -------------------

_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
_RINFIX = {"rsub": "-", "rdiv": "/", "rpow": "**"}


def _name(v, names=None):
    if v.label:
        return v.label
    if names is not None and v in names:
        return names[v]
    return f"v{v._id}"


def _fmt_num(c):
    return repr(c)


def _formula(v, names=None):
    """`w * x`, `v3 + 2.0`, `tanh(u)`, ... (in terms of the parents' names)."""
    op = v._op
    ps = [_name(p, names) for p in v._parents]
    if op in _INFIX:
        sym = _INFIX[op]
        if v._arg is None and len(ps) == 2:
            return f"{ps[0]} {sym} {ps[1]}"
        return f"{ps[0]} {sym} {_fmt_num(v._arg)}"
    if op in _RINFIX:
        return f"{_fmt_num(v._arg)} {_RINFIX[op]} {ps[0]}"
    if op == "neg":
        return f"-{ps[0]}"
    return f"{op}({', '.join(ps)})"

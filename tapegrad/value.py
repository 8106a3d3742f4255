"""The scalar engine: `Value`, micrograd's autodiff scalar, for the lessons.

    from tapegrad import Value
    w = Value(0.5, label="w"); x = Value(2.0, label="x"); b = Value(-1.0, label="b")
    loss = w * x + b
    loss.backward()
    w.grad, x.grad, b.grad          # (2.0, 0.5, 1.0)

The graph is micrograd's (karpathy/micrograd, engine.py) node for node, so micrograd's
`draw_dot` and the lectures' pictures come out the same: `_op` is micrograd's label
('+', '*', '**2', 'ReLU', the lectures' 'tanh', 'exp'; also 'log', 'sqrt', 'abs',
'sigmoid', 'sin', 'cos', '**' for a Value exponent); a number operand becomes a Value
node (`(Value(1.0) * 2 + 1).relu()` has 6 nodes); `-x` is `x * -1`, `a - b` is
`a + (-b)`, `a / b` is `a * b**-1`; `_prev` is the set of children, `_children` in order.

Inside: each op stores its LOCAL derivatives (d out / d child) as it runs, as karpathy's
microgpt does, and backward multiplies them by the gradient arriving. No closure per node,
so a node points only at its children and a dropped graph is freed by reference counting
(a micrograd closure captures its own output: a cycle). The walk is micrograd's
depth-first topological sort, children in order, on an explicit stack (no recursion: a
1,000,000-node chain works); same order and formulas, so the same sums: bit for bit
microgpt's gradients. Edge cases follow IEEE / PyTorch instead of raising
(_scalar_math.py). Leaf gradients accumulate across backward calls (as in PyTorch);
interior ones are reset by each backward (micrograd double-counts on a second call).
`run_backward(root, observer)` reports each contribution to `observer`: tg.explain
narrates the real pass through it (this module imports no viz).
"""
import math
import numbers

from . import _scalar_math as sm

__all__ = ["Value", "topo_order", "run_backward"]

_new = object.__new__
_MANY = object()  # `_a` of a hand-built node whose children are the tuple in `_b`


class Value:
    """A scalar that remembers how it was computed, so `backward()` can fill `.grad`."""

    # The children `_a`, `_b` (None: none) and their local derivatives `_da`, `_db` live in
    # slots, not tuples: one object per node, not three, so Python's cyclic collector,
    # which runs as the graph grows, has a third of the objects to walk.
    __slots__ = ("data", "grad", "_a", "_b", "_da", "_db", "_op", "_label", "_bw",
                 "__weakref__")

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data if type(data) is float else float(data)
        self.grad = 0.0
        # micrograd's constructor: a node has no rule (`_da` None) until `_backward` is set
        self._a, self._b, self._da = (_MANY, tuple(_children), None) if _children else (None,) * 3
        self._op = _op
        if label:
            self._label = label

    # NOTE: an unset `_label` slot reads as "": one store less per node on the hot path
    label = property(lambda self: getattr(self, "_label", ""),
                     lambda self, text: setattr(self, "_label", text))

    @property
    def _children(self):
        """The children in order (micrograd's `_children` argument)."""
        a = self._a
        if a is None:
            return ()
        b = self._b
        return b if a is _MANY else (a,) if b is None else (a, b)

    @property
    def _prev(self):
        """micrograd's name: the set of children (the Values this one was computed from)."""
        return set(self._children)

    @property
    def _local(self):
        """The local derivatives d self / d child, in the children's order (None: a
        micrograd-style `_backward` closure, or no rule)."""
        if self._a is None:
            return ()
        if self._a is _MANY:
            return None
        return (self._da,) if self._b is None else (self._da, self._db)

    @property
    def _backward(self):
        """micrograd's per-node rule as a callable: adds into the children's `.grad`.
        Assigning a function (micrograd style) replaces the stored local derivatives."""
        if self._a is _MANY:
            return getattr(self, "_bw", None) or (lambda: None)

        def _backward():
            for c, d in zip(self._children, self._local):
                c.grad += d * self.grad
        return _backward

    @_backward.setter
    def _backward(self, fn):
        self._bw = fn
        if self._a is not _MANY:     # the stored local derivatives no longer apply
            self._a, self._b, self._da = _MANY, self._children, None

    def __repr__(self):
        lab = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data}, grad={self.grad}{lab})"

    def __float__(self): return self.data
    def item(self): return self.data

    # ---- micrograd's ops: + and * build their node inline (most of a graph) -----------
    def __add__(self, other):
        if type(other) is not Value and not isinstance(other, Value):
            other = _const(other)
            if other is NotImplemented:
                return other
        out = _new(Value)
        out.data = self.data + other.data
        out.grad = 0.0
        out._a = self
        out._b = other
        out._da = out._db = 1.0
        out._op = "+"
        return out

    def __mul__(self, other):
        if type(other) is not Value and not isinstance(other, Value):
            other = _const(other)
            if other is NotImplemented:
                return other
        out = _new(Value)
        out.data = self.data * other.data
        out.grad = 0.0
        out._a = self
        out._b = other
        out._da = other.data
        out._db = self.data
        out._op = "*"
        return out

    def __pow__(self, other):
        x = self.data
        if isinstance(other, Value):  # not in micrograd: a Value exponent, two children
            y = other.data
            ans = sm.pow(x, y)
            out = _node(ans, self, sm.pow_dx(x, y), "**")
            out._b, out._db = other, sm.pow_dy(ans, x, y)
            return out
        if not isinstance(other, numbers.Real):
            return NotImplemented
        # NOTE: the label keeps the exponent as written, as micrograd: '**2', '**-0.5'
        return _node(sm.pow(x, other), self, sm.pow_dx(x, other), f"**{other}")

    def __radd__(self, other): return self + other          # other + self
    def __rmul__(self, other): return self * other          # other * self
    def __neg__(self): return self * -1                      # -self
    def __sub__(self, other): return self + (-other)         # self - other
    def __rsub__(self, other): return -self + other          # other - self
    def __rtruediv__(self, other): return self ** -1 * other  # other / self
    def __pos__(self): return self

    def __truediv__(self, other):   # self / other
        if isinstance(other, Value):
            return self * other ** -1
        c = _number(other)          # micrograd: a number's **-1 is a number, then a node
        return c if c is NotImplemented else self * sm.pow(c, -1)

    def __rpow__(self, other):      # other ** self (not in micrograd): Value(other) ** self
        other = _const(other)
        return other if other is NotImplemented else other ** self

    # ---- functions: the forward value and its local derivative ------------------------
    def exp(self):
        e = sm.exp(self.data)
        return _node(e, self, e, "exp")

    def tanh(self):                 # from the output: 1 - tanh(x)**2
        t = math.tanh(self.data)
        return _node(t, self, 1.0 - t * t, "tanh")

    def sigmoid(self):
        s = sm.sigmoid(self.data)
        return _node(s, self, s * (1.0 - s), "sigmoid")

    def sqrt(self):                 # NOTE: sqrt'(0) = 0.5/0 = inf (lesson 5)
        r = sm.sqrt(self.data)
        return _node(r, self, sm.div(0.5, r), "sqrt")

    def relu(self):                 # NOTE: relu'(0) is taken as 0, as PyTorch
        return _node(sm.relu(self.data), self, 1.0 if self.data > 0 else 0.0, "ReLU")

    def log(self): return _node(sm.log(self.data), self, sm.div(1.0, self.data), "log")
    def abs(self): return _node(abs(self.data), self, sm.sign(self.data), "abs")
    def sin(self): return _node(sm.sin(self.data), self, sm.cos(self.data), "sin")
    def cos(self): return _node(sm.cos(self.data), self, -sm.sin(self.data), "cos")
    __abs__ = abs

    # ---- comparisons on .data return bool (for branching code); == and hash stay
    # identity-based, so Values can live in sets and dicts
    def __lt__(self, other): return self.data < getattr(other, "data", other)
    def __le__(self, other): return self.data <= getattr(other, "data", other)
    def __gt__(self, other): return self.data > getattr(other, "data", other)
    def __ge__(self, other): return self.data >= getattr(other, "data", other)

    def backward(self):
        """Fill `.grad` of every Value this one depends on (d self / d that value).
        Leaves accumulate (set `.grad = 0` between steps); interior values hold this
        pass's gradient. `tapegrad.explain(v)` runs the same pass and narrates it."""
        run_backward(self)


def _node(data, child, local, op):
    """An op's output with one child (a second, if any, is set by the caller)."""
    out = _new(Value)
    out.data, out.grad, out._a, out._b, out._da, out._op = data, 0.0, child, None, local, op
    return out


def _number(c):
    """A number operand as a float; NotImplemented for anything else."""
    if type(c) is float:
        return c
    return float(c) if isinstance(c, numbers.Real) else NotImplemented


def _const(c):
    """A number operand as a leaf Value (micrograd's `Value(other)`)."""
    c = _number(c)
    if c is NotImplemented:
        return c
    out = _new(Value)
    out.data, out.grad, out._a, out._op = c, 0.0, None, ""
    return out


# ---- the walk ---------------------------------------------------------------------

def topo_order(root):
    """Every Value reachable from `root`, root first: the op nodes in the order backward
    visits them (the reverse of micrograd's depth-first `build_topo`), then the leaves."""
    order, seen, stack = [], set(), [root]
    while stack:
        v = stack.pop()
        if v is None:                 # the node below has all its children done
            order.append(stack.pop())
        elif v not in seen:
            seen.add(v)
            stack += (v, None, *reversed(v._children))
    order.reverse()
    return [v for v in order if v._a is not None] + [v for v in order if v._a is None]


def run_backward(root, observer=None):
    """micrograd's sweep, root first: each op node adds `local * grad` into each child's
    `.grad`. The order is topo_order's without the leaves (they pass nothing on)."""
    order, seen, stack = [], set(), [root]
    push, pop, add, emit = stack.append, stack.pop, seen.add, order.append
    while stack:
        v = pop()
        if v is None:
            emit(pop())
            continue
        a = v._a
        if a is None or v in seen:
            continue
        add(v)
        v.grad = 0.0                  # interior: this pass's gradient only
        push(v)
        push(None)
        b = v._b
        if a is _MANY:                # a hand-built node: its children are in `_b`
            stack += b[::-1]
            continue
        if b is not None:
            push(b)
        push(a)
    root.grad = 1.0 if root._a is not None else root.grad + 1.0
    order.reverse()
    if observer is not None:
        return _observed(order, observer)
    for v in order:
        a = v._a
        if a is _MANY:                # a micrograd-style `_backward` closure (or none)
            if getattr(v, "_bw", None):
                v._bw()
            continue
        g = v.grad
        a.grad += v._da * g
        b = v._b
        if b is not None:
            b.grad += v._db * g
    return order


def _observed(order, observer):
    """The same sweep, telling `observer` about each contribution (for tg.explain)."""
    for v in order:
        if v._a is _MANY:
            if getattr(v, "_bw", None):
                v._bw()
                observer(v, -1, None, None)
            continue
        g = v.grad
        for i, (c, d) in enumerate(zip(v._children, v._local)):
            c.grad += d * g
            observer(v, i, c, d * g)
    return order

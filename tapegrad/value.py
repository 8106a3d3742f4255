"""The scalar engine: `Value`, micrograd's autodiff scalar, for the lessons.

    from tapegrad import Value
    w = Value(0.5, label="w"); x = Value(2.0, label="x"); b = Value(-1.0, label="b")
    loss = w * x + b
    loss.backward()
    w.grad, x.grad, b.grad          # (2.0, 0.5, 1.0)

The graph is micrograd's (karpathy/micrograd, engine.py) node for node, so its
`draw_dot` pictures come out the same: `_op` is micrograd's label ('+', '*', '**2',
'ReLU', the lectures' 'tanh', 'exp'; also 'log', 'sqrt', 'abs', 'sigmoid', 'sin', 'cos',
'**' for a Value exponent), a number operand becomes a Value node, `-x` is `x * -1`,
`a - b` is `a + (-b)`, `a / b` is `a * b**-1`; `_prev` is the set of children.

Inside, each op stores its LOCAL derivatives (d out / d child), as karpathy's microgpt
does; backward multiplies them by the gradient arriving. No closure per node, so a graph
is freed by reference counting (a micrograd closure captures its own output: a cycle).
The walk is micrograd's depth-first sort on an explicit stack (no recursion): the same
sums in the same order, bit for bit microgpt's gradients. Edge cases follow PyTorch
(_scalar_math.py); leaf gradients accumulate across backward calls, interior ones are
reset. tg.explain narrates the real pass through `run_backward`'s observer (no viz here).
"""
import math
import numbers

from . import _scalar_math as sm

__all__ = ["Value", "topo_order", "run_backward"]

_new = object.__new__
_MANY = object()  # `_a` of a hand-built node whose children are the tuple in `_b`


class Value:
    """A scalar that remembers how it was computed, so `backward()` can fill `.grad`."""

    # Children `_a`, `_b` (None: none) and their local derivatives `_da`, `_db` are slots,
    # not tuples: one object per node, not three, for Python's cyclic collector to walk.
    __slots__ = ("data", "grad", "_a", "_b", "_da", "_db", "_op", "_label", "_bw", "__weakref__")

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
        a, b = self._a, getattr(self, "_b", None)
        return () if a is None else b if a is _MANY else (a,) if b is None else (a, b)

    _prev = property(lambda self: set(self._children), doc="micrograd's: the set of children")

    @property
    def _backward(self):
        """micrograd's per-node rule as a callable: adds into the children's `.grad`.
        Assigning a function (micrograd style) replaces the stored local derivatives."""
        if self._a is _MANY:
            return getattr(self, "_bw", None) or (lambda: None)

        def _backward():
            for c, d in zip(self._children, (self._da, getattr(self, "_db", None))):
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

    def item(self): return self.data
    __float__ = item

    # ---- micrograd's ops: + and * build their node inline (most of a graph) -----------
    def __add__(self, other):
        if type(other) is not Value and (other := _operand(other)) is NotImplemented:
            return other
        out = _new(Value)
        out.data = self.data + other.data
        out.grad = 0.0
        out._a, out._b = self, other
        out._da = out._db = 1.0
        out._op = "+"
        return out

    def __mul__(self, other):
        if type(other) is not Value and (other := _operand(other)) is NotImplemented:
            return other
        out = _new(Value)
        out.data = self.data * other.data
        out.grad = 0.0
        out._a, out._b = self, other
        out._da, out._db = other.data, self.data
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

    def __truediv__(self, other):   # self / other; micrograd: a number's **-1 is a number
        if isinstance(other, Value):
            return self * other ** -1
        if not isinstance(other, numbers.Real):
            return NotImplemented
        return self * sm.pow(float(other), -1)

    def __rpow__(self, other):      # other ** self (not in micrograd): Value(other) ** self
        other = _operand(other)
        return other if other is NotImplemented else other ** self

    # ---- functions: the forward value and its local derivative ------------------------
    # (the arguments run left to right: the walrus names the output for its derivative)
    def exp(self): return _node(e := sm.exp(self.data), self, e, "exp")
    def tanh(self): return _node(t := math.tanh(self.data), self, 1.0 - t * t, "tanh")
    def sigmoid(self): return _node(s := sm.sigmoid(self.data), self, s * (1.0 - s), "sigmoid")
    # NOTE: sqrt'(0) = 0.5/0 = inf (lesson 5); relu'(0) is taken as 0, as PyTorch
    def sqrt(self): return _node(r := sm.sqrt(self.data), self, sm.div(0.5, r), "sqrt")
    def relu(self): return _node(sm.relu(x := self.data), self, float(x > 0), "ReLU")
    def log(self): return _node(sm.log(self.data), self, sm.div(1.0, self.data), "log")
    def abs(self): return _node(abs(self.data), self, sm.sign(self.data), "abs")
    def sin(self): return _node(sm.sin(self.data), self, sm.cos(self.data), "sin")
    def cos(self): return _node(sm.cos(self.data), self, -sm.sin(self.data), "cos")
    __abs__ = abs

    # ---- comparisons on .data, as bools (== and hash stay identity: sets, dict keys)
    def __lt__(self, other): return self.data < getattr(other, "data", other)
    def __le__(self, other): return self.data <= getattr(other, "data", other)
    def __gt__(self, other): return self.data > getattr(other, "data", other)
    def __ge__(self, other): return self.data >= getattr(other, "data", other)

    def backward(self):
        """Fill `.grad` of every Value this one depends on (d self / d that value); leaves
        accumulate (set `.grad = 0` between steps). `tg.explain(v)` narrates the pass."""
        run_backward(self)


def _node(data, child, local, op):
    """An op's output with one child (a second, if any, is set by the caller)."""
    out = _new(Value)
    out.data, out.grad, out._a, out._b, out._da, out._op = data, 0.0, child, None, local, op
    return out


def _operand(c):
    """The other operand of + or *: a Value as it is, a number as a new leaf Value
    (micrograd's `Value(other)`), NotImplemented for anything else."""
    if isinstance(c, Value):
        return c
    return _node(float(c), None, None, "") if isinstance(c, numbers.Real) else NotImplemented


# ---- the walk ---------------------------------------------------------------------

def topo_order(root):
    """Every Value reachable from `root`, root first: the op nodes in the order backward
    visits them (the reverse of micrograd's depth-first `build_topo`), then the leaves."""
    ops, leaves, seen = _op_nodes(root), [], set()
    for v in ops or [root]:
        for c in v._children or [v]:
            if c._a is None and c not in seen:
                seen.add(c)
                leaves.append(c)
    return ops + leaves


def _op_nodes(root):
    """The op nodes reachable from `root` in micrograd's backward order (its recursive
    depth-first sort, reversed) on an explicit stack; no leaves: they pass nothing on."""
    order, seen, stack = [], set(), [root]
    push, pop, add, emit = stack.append, stack.pop, seen.add, order.append
    while stack:
        v = pop()
        if v is None:                 # the node below has all its children done
            emit(pop())
            continue
        a = v._a
        if a is None or v in seen:
            continue
        add(v)
        push(v)
        push(None)
        b = v._b
        if a is _MANY:                # a hand-built node: its children are in `_b`
            stack += b[::-1]
            continue
        if b is not None:
            push(b)
        push(a)
    order.reverse()
    return order


def run_backward(root, observer=None):
    """micrograd's sweep: each op node, root first, adds `local * grad` into each child's
    `.grad`. Returns the op nodes in the order visited."""
    order = _op_nodes(root)
    for v in order:
        v.grad = 0.0                  # interior: this pass's gradient only
    root.grad = 1.0 if order else root.grad + 1.0
    for v in order:
        a = v._a
        if a is _MANY:                # a micrograd-style `_backward` closure (or none)
            if getattr(v, "_bw", None):
                v._bw()
                if observer is not None:
                    observer(v, -1, None, None)
            continue
        g = v.grad
        d = v._da * g
        a.grad += d
        if observer is not None:
            observer(v, 0, a, d)
        b = v._b
        if b is not None:
            d = v._db * g
            b.grad += d
            if observer is not None:
                observer(v, 1, b, d)
    return order

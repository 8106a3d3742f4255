"""tg.Value: every op and random expression graphs vs tg.Tensor (float64) and PyTorch.

Value's local derivatives are written for Python floats (tapegrad/value.py), separately
from the Tensor table; these tests keep the two from drifting: each Value op is compared
with the Tensor op and with torch on the same inputs (values and gradients, including
the edge points where the result is inf or nan), and random graphs mixing all ops are
compared end to end.
"""
import gc
import math
import weakref

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tapegrad as tg
from tapegrad.value import Value, topo_order
from tapegrad.viz.rules_text import VALUE_TEXT

# inf/nan edge points are compared on purpose: NumPy's RuntimeWarnings are expected here
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

UNARY = ["neg", "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "sin", "cos"]


def _unary(lib, name, a):
    if name == "neg":
        return -a
    if lib == "value":
        return getattr(a, name)()
    return getattr(tg if lib == "tg" else torch, name)(a)


# One case per (Value op, operand kinds); the keys are the old op names (sub, div, ... are
# now micrograd's recipes of +, * and **, see test_value_micrograd_graph.py).
BINARY_CASES = {
    "add": [lambda a, b: a + b, lambda a, b: a + 2.5, lambda a, b: 2.5 + a],
    "sub": [lambda a, b: a - b, lambda a, b: a - 2.5],
    "rsub": [lambda a, b: 2.5 - a],
    "mul": [lambda a, b: a * b, lambda a, b: a * -1.5, lambda a, b: -1.5 * a],
    "div": [lambda a, b: a / b, lambda a, b: a / 4.0, lambda a, b: a / 0.0],
    "rdiv": [lambda a, b: 3.0 / a],
    "pow": [lambda a, b: a ** b, lambda a, b: a ** 2, lambda a, b: a ** 3,
            lambda a, b: a ** 0.5, lambda a, b: a ** -1, lambda a, b: a ** 0,
            lambda a, b: a ** -1.5, lambda a, b: a ** 1.3],
    "rpow": [lambda a, b: 2.0 ** a, lambda a, b: 0.0 ** a],
}

POINTS = [-3.0, -2.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.5]


def _three(fn, a0, b0):
    """Run fn on Value, tg.Tensor float64 and torch float64 leaves; return (out, ga, gb)."""
    res = []
    for lib in ("value", "tg", "torch"):
        if lib == "value":
            a, b = Value(a0), Value(b0)
        elif lib == "tg":
            a = tg.tensor(a0, dtype=tg.float64, requires_grad=True)
            b = tg.tensor(b0, dtype=tg.float64, requires_grad=True)
        else:
            a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
            b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
        out = fn(lib, a, b)
        out.backward()
        if lib == "value":
            res.append((out.data, a.grad, b.grad))
        else:
            def g(t):
                return 0.0 if t.grad is None else float(t.grad.item())
            res.append((float(out.item()), g(a), g(b)))
    return res


def _close(x, y, rtol=1e-12):
    if math.isnan(y):
        return math.isnan(x)
    if math.isinf(y):
        return x == y
    return abs(x - y) <= rtol * max(1.0, abs(y))


def _assert_same(res, what):
    v, t, p = res
    for name, got in (("tg.Value", v), ("tg.Tensor", t)):
        for i, k in enumerate(("value", "grad a", "grad b")):
            assert _close(got[i], p[i]), f"{what}: {name} {k} = {got[i]!r}, torch {p[i]!r}"


def _key(op):
    return "**c" if op.startswith("**") and len(op) > 2 else op


def test_every_op_has_a_case_and_a_text():
    a, b = Value(2.0), Value(3.0)
    ops = {_key(v._op) for f in [g for cases in BINARY_CASES.values() for g in cases]
           for v in topo_order(f(a, b)) if v._op}
    ops |= {_key(_unary("value", name, a)._op) for name in UNARY}
    assert ops == set(VALUE_TEXT), f"ops without a differential test: {ops ^ set(VALUE_TEXT)}"


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("a0", POINTS + [50.0, -50.0])
def test_unary_op_matches_tensor_and_torch(name, a0):
    res = _three(lambda lib, a, b: _unary(lib, name, a) * 1.5, a0, 0.0)
    _assert_same(res, f"{name}({a0})")


@pytest.mark.parametrize("op", sorted(BINARY_CASES))
@pytest.mark.parametrize("a0", POINTS)
@pytest.mark.parametrize("b0", [-2.0, 0.0, 0.5, 3.0])
def test_binary_op_matches_tensor_and_torch(op, a0, b0):
    for k, f in enumerate(BINARY_CASES[op]):
        # (x * 1) keeps b in the graph for every lib, so its grad is 0.0, not None.
        res = _three(lambda lib, a, b: f(a, b) + b * 0.0, a0, b0)
        _assert_same(res, f"{op} case {k} at ({a0}, {b0})")


def test_value_records_micrograd_labels():
    a, b = Value(2.0), Value(3.0)
    want = {"add": "+", "sub": "+", "rsub": "+", "mul": "*", "div": "*", "rdiv": "*",
            "rpow": "**"}
    for op, cases in BINARY_CASES.items():
        for f in cases:
            assert f(a, b)._op == want.get(op, f(a, b)._op)
    assert [(a ** k)._op for k in (2, 3, 0.5, -1, 0, -1.5)] == \
        ["**2", "**3", "**0.5", "**-1", "**0", "**-1.5"]
    assert (a ** b)._op == "**"
    labels = {"neg": "*", "relu": "ReLU"}
    for name in UNARY:
        assert _unary("value", name, a)._op == labels.get(name, name)


# ---- random expression graphs --------------------------------------------------------

def _build(lib, prog, leaves0):
    """Interpret `prog` (a list of steps) with one library; return leaves and the root."""
    if lib == "value":
        leaves = [Value(x) for x in leaves0]
    elif lib == "tg":
        leaves = [tg.tensor(x, dtype=tg.float64, requires_grad=True) for x in leaves0]
    else:
        leaves = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in leaves0]
    pool = list(leaves)

    def unary(name, a):
        return _unary(lib, name, a)

    for kind, i, j, c in prog:
        a = pool[i % len(pool)]
        b = pool[j % len(pool)]
        if kind == "add":
            r = a + b
        elif kind == "sub":
            r = a - b
        elif kind == "mul":
            r = a * b
        elif kind == "addc":
            r = c + a
        elif kind == "rsub":
            r = c - a
        elif kind == "mulc":
            r = a * c
        elif kind == "div":       # denominator kept away from 0: |b| + 0.5
            r = a / (unary("abs", b) + 0.5)
        elif kind == "rdiv":
            r = c / (unary("abs", a) + 0.25)
        elif kind == "powc":      # integer powers of anything, real powers of positives
            r = a ** 2 if c > 0 else (unary("abs", a) + 0.5) ** (c / 2)
        elif kind == "pow":
            r = (unary("abs", a) + 0.5) ** unary("tanh", b)
        elif kind == "rpow":
            r = 1.5 ** unary("tanh", a)
        elif kind in ("log", "sqrt"):
            r = unary(kind, unary("abs", a) + 0.1)
        elif kind == "exp":
            r = unary("exp", unary("tanh", a) * 2.0)
        else:
            r = unary(kind, a)
        pool.append(r)
    # The root uses the last few results so most of the graph matters.
    root = pool[-1]
    for r in pool[-4:-1]:
        root = root + r * 0.5
    return leaves, root


KINDS = ["add", "sub", "mul", "addc", "rsub", "mulc", "div", "rdiv", "powc", "pow",
         "rpow", "log", "sqrt", "exp", "neg", "abs", "tanh", "sigmoid", "relu", "sin", "cos"]
_step = st.tuples(st.sampled_from(KINDS), st.integers(0, 50), st.integers(0, 50),
                  st.sampled_from([-2.0, -1.0, -0.5, 0.5, 1.5, 3.0]))
_val = st.floats(-2.0, 2.0, allow_nan=False).map(lambda x: round(x, 3))


@settings(max_examples=50, deadline=None)
@given(prog=st.lists(_step, min_size=1, max_size=25),
       leaves=st.lists(_val, min_size=1, max_size=4))
def test_random_graphs_match_tensor_and_torch(prog, leaves):
    out = {}
    for lib in ("value", "tg", "torch"):
        ls, root = _build(lib, prog, leaves)
        root.backward()
        if lib == "value":
            out[lib] = (root.data, [x.grad for x in ls])
        else:
            out[lib] = (float(root.item()),
                        [0.0 if x.grad is None else float(x.grad.item()) for x in ls])
    ref_val, ref_grads = out["torch"]
    scale = max([1.0, abs(ref_val)] + [abs(g) for g in ref_grads if math.isfinite(g)])
    for lib in ("value", "tg"):
        val, grads = out[lib]
        np.testing.assert_allclose(val, ref_val, rtol=1e-10, atol=1e-12 * scale)
        np.testing.assert_allclose(grads, ref_grads, rtol=1e-9, atol=1e-11 * scale,
                                   err_msg=f"{lib} gradients vs torch")


# ---- behaviour ----------------------------------------------------------------------

def test_worked_example_2():
    w, x, b = Value(0.5, label="w"), Value(2.0, label="x"), Value(-1.0, label="b")
    u = w * x
    v = u + b
    loss = v
    assert (u.data, v.data) == (1.0, 0.0)
    order = topo_order(loss)
    assert order[:2] == [v, u] and set(order[2:]) == {w, x, b}
    loss.backward()
    assert (loss.grad, u.grad, b.grad, w.grad, x.grad) == (1.0, 1.0, 1.0, 2.0, 0.5)


def test_micrograd_public_names():
    a, b = Value(2.0), Value(3.0)
    c = a * b
    assert c._prev == {a, b} and c._op == "*" and c._children == (a, b)
    assert Value(1.0)._prev == set()
    assert c.grad == 0
    # micrograd-style constructor and a custom _backward closure
    d = Value(c.data * 2, (c,), "double")

    def _backward():
        c.grad += 2 * d.grad
    d._backward = _backward
    d.backward()
    assert (a.grad, b.grad) == (6.0, 4.0)
    # calling a node's _backward by hand (the micrograd lecture's manual walk)
    a2, b2 = Value(2.0), Value(3.0)
    o = a2 * b2
    o.grad = 1.0
    o._backward()
    assert (a2.grad, b2.grad) == (3.0, 2.0)
    from tapegrad.viz.explain import recipe_lines
    assert "v1 = w * x = 2.0" in recipe_lines(Value(1.0, label="w") * Value(2.0, label="x"))


def test_comparisons_are_on_data_and_return_bool():
    a, b = Value(2.0), Value(3.0)
    assert (a < b) is True and (a <= 2) is True and (b > a) is True and (a >= 2.5) is False
    assert (1.0 < a) is True and (3 > a) is True
    assert a != Value(2.0)  # identity equality: Values work as dict keys and set members
    assert len({a, b, a}) == 2


def test_leaf_grads_accumulate_interior_reset():
    w = Value(0.5)
    for k in (1, 2, 3):
        L = 0.5 * (w * 2.0 - 3.0) ** 2
        L.backward()
        assert w.grad == -4.0 * k
    x = Value(3.0)
    y = x * x
    z = y * 2.0
    z.backward()
    z.backward()  # same graph twice: interior y.grad is this pass's, x accumulates
    assert y.grad == 2.0 and x.grad == 24.0
    tx = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    tz = (tx * tx) * 2.0
    tz.backward(retain_graph=True)
    tz.backward()
    assert x.grad == tx.grad.item()


def test_shared_use_sums():
    a = Value(-2.0)
    y = a * a + a.tanh() + a
    y.backward()
    ta = torch.tensor(-2.0, dtype=torch.float64, requires_grad=True)
    (ta * ta + ta.tanh() + ta).backward()
    assert _close(a.grad, ta.grad.item())


def test_negative_base_fractional_power_is_nan_like_torch():
    x = Value(-8.0)
    y = x ** (1 / 3)
    y.backward()
    tx = torch.tensor(-8.0, dtype=torch.float64, requires_grad=True)
    ty = tx ** (1 / 3)
    ty.backward()
    assert math.isnan(y.data) and math.isnan(ty.item())
    assert math.isnan(x.grad) and math.isnan(tx.grad.item())


def test_million_node_chain_no_recursion():
    x = Value(1.0)
    y = x
    for _ in range(1_000_000):
        y = y + 1.0
    y.backward()
    assert x.grad == 1.0 and y.data == 1_000_001.0
    ref = weakref.ref(y)
    del y
    assert ref() is None


def test_graph_freed_by_refcount_alone():
    gc.disable()
    try:
        a = Value(1.5)
        y = ((a * 2.0).tanh() + a.exp()) ** 2
        y.backward()
        ref = weakref.ref(y)
        mid = weakref.ref(y._children[0])
        del y
        assert ref() is None and mid() is None  # no cycle: freed without gc.collect()
        assert a.grad != 0.0
    finally:
        gc.enable()


def test_numpy_and_int_operands():
    a = Value(2)
    assert type(a.data) is float
    y = a * np.float64(3.0) + 1
    y.backward()
    assert y.data == 7.0 and a.grad == 3.0
    with pytest.raises(TypeError):
        a + "x"




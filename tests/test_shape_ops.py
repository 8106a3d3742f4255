"""Shape ops beyond the op database: forward-mode rules, errors as PyTorch, speed.

Values, gradients, gradcheck, second order and hypothesis runs of every shape and
indexing op are in the op database (tests/opdb/shape_views.py and
tests/opdb/indexing.py, run by tests/test_opdb.py).
Here:
  * the mode identity <u, J v> = <J^T u, v> for every entry of those two families (the JVP
    rules of the table against its VJP rules), with PyTorch's forward mode as a
    second reference for the J v values;
  * error cases: same exception type as PyTorch, messages naming the op and shapes;
  * cat/stack/split backward stay vectorized (timed against a budget).
"""

import numpy as np
import pytest
import torch
import torch.func

import tapegrad as tg
from opdb.indexing import ENTRIES as INDEXING
from opdb.shape_views import ENTRIES as SHAPE_VIEWS

# The ops of ops/shape.py and ops/indexing.py. The two families hold other entries too:
# products of other modules whose table op is a shape or indexing one (median runs as
# gather, scatter_reduce, as_strided, ...); those are not this file's subject.
SHAPE_AND_INDEX_OPS = {
    "squeeze", "unsqueeze", "flatten", "unflatten", "repeat", "permute", "cat", "stack",
    "narrow", "select", "flip", "roll", "tril", "triu", "pad", "getitem", "setitem", "gather",
    "scatter", "scatter_add", "index_select", "index_add", "masked_fill"}
ENTRIES = [e for e in SHAPE_VIEWS + INDEXING
           if e.name in SHAPE_AND_INDEX_OPS and "median" not in e.variant]


def _cases():
    out = []
    for e in ENTRIES:
        for k, s in enumerate(e.samples(np.random.default_rng(0), e)):
            if e.differentiable:
                out.append(pytest.param(e, s, id=f"{e.id}-{k}-{s.id()}"))
    return out


def _split_args(sample, lib):
    """Float arrays are the differentiable primals; everything else is fixed."""
    prim, where, fixed = [], [], list(sample.args)
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f" and i not in sample.nograd:
                prim.append(lib.tensor(a))
                where.append(i)
            else:
                fixed[i] = lib.tensor(a)
    return prim, where, fixed


def _as_fn(entry, sample, lib, where, fixed):
    fn = entry.tg_fn if lib is tg else entry.torch_fn

    def f(*xs):
        args = list(fixed)
        for i, x in zip(where, xs):
            args[i] = x
        out = fn(*args, **sample.kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return tuple(o for o in outs if o.is_floating_point())
    return f


@pytest.mark.parametrize("entry,sample", _cases())
def test_jvp_matches_vjp_and_torch(entry, sample):
    rng = np.random.default_rng(3)
    prim, where, fixed = _split_args(sample, tg)
    if not prim:
        pytest.skip("no differentiable input")
    f = _as_fn(entry, sample, tg, where, fixed)
    tans = [tg.tensor(rng.standard_normal(p.shape)) for p in prim]
    outs, jv = tg.func.jvp(f, tuple(prim), tuple(tans))
    outs2, pullback = tg.func.vjp(f, *prim)
    us = [tg.tensor(rng.standard_normal(o.shape)) for o in outs2]
    jtu = pullback(tuple(us))
    lhs = sum(float((u.numpy(force=True) * t.numpy(force=True)).sum()) for u, t in zip(us, jv))
    rhs = sum(float((g.numpy(force=True) * t.numpy(force=True)).sum()) for g, t in zip(jtu, tans) if g is not None)
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-12)
    # PyTorch's forward mode gives the same J v
    tprim, _, tfixed = _split_args(sample, torch)
    tf = _as_fn(entry, sample, torch, where, tfixed)
    _, tjv = torch.func.jvp(tf, tuple(tprim), tuple(torch.tensor(t.numpy(force=True)) for t in tans))
    for a, b in zip(jv, tjv):
        np.testing.assert_allclose(a.numpy(force=True), b.numpy(), rtol=1e-10, atol=1e-12)


# ---- errors as PyTorch ----------------------------------------------------------------
def _raises_like_torch(fn, *words):
    """fn(lib) must fail in both libraries with the same exception type; our message
    must contain `words` (the op name, the shapes)."""
    with pytest.raises(Exception) as th:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(tg)
    assert isinstance(ours.value, type(th.value)), (
        f"torch raised {type(th.value).__name__}: {th.value}; tapegrad raised "
        f"{type(ours.value).__name__}: {ours.value}")
    for w in words:
        assert w in str(ours.value), f"{w!r} not in message: {ours.value}"
    return str(ours.value)


def test_cat_errors_name_the_op_and_both_shapes():
    _raises_like_torch(lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 4)]),
                       "cat", "(2, 3)", "(2, 4)", "dimension 0")
    _raises_like_torch(lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 3, 1)], 1),
                       "cat", "same number of dimensions", "(2, 3, 1)")
    _raises_like_torch(lambda L: L.cat([]), "non-empty")
    _raises_like_torch(lambda L: L.cat([L.zeros(2), L.zeros(2)], 1), "Dimension out of range")
    _raises_like_torch(lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)]), "zero-dimensional")


def test_stack_split_errors():
    _raises_like_torch(lambda L: L.stack([L.zeros(2, 3), L.zeros(2, 4)]),
                       "stack", "[2, 3]", "[2, 4]")
    _raises_like_torch(lambda L: L.split(L.zeros(5), [2, 2]), "split_with_sizes", "5")
    _raises_like_torch(lambda L: L.chunk(L.zeros(5), 0), "chunk")
    _raises_like_torch(lambda L: L.zeros(3, 4).narrow(1, 3, 2), "exceeds dimension size (4)")
    _raises_like_torch(lambda L: L.zeros(3, 4).select(0, 5), "select()", "[3, 4]")


def test_reshape_family_errors():
    _raises_like_torch(lambda L: L.zeros(3, 4).unflatten(1, (3, 2)), "unflatten", "(4)")
    _raises_like_torch(lambda L: L.zeros(3, 4).flatten(1, 0), "start_dim")
    _raises_like_torch(lambda L: L.zeros(3, 4).repeat(2), "repeat dims")
    _raises_like_torch(lambda L: L.zeros(3, 4).squeeze(3), "[-2, 1]", "got 3")
    _raises_like_torch(lambda L: L.zeros(3, 4).unsqueeze(3), "[-3, 2]")
    _raises_like_torch(lambda L: L.zeros(3).tril(), "tril", "2 dimensions")
    _raises_like_torch(lambda L: L.zeros(3).flip(0, 0), "appears multiple times")
    _raises_like_torch(lambda L: L.movedim(L.zeros(2, 3), (0, 1), (1,)), "movedim")


def test_pad_errors():
    F = lambda L: L.nn.functional  # noqa: E731
    _raises_like_torch(lambda L: F(L).pad(L.zeros(3, 4), (1,)), "divisible by 2")
    _raises_like_torch(lambda L: F(L).pad(L.zeros(3, 4), (1, 1, 1, 1, 1, 1)),
                       "Padding length", "6")
    _raises_like_torch(lambda L: F(L).pad(L.zeros(1, 2, 3), (3, 0), mode="reflect"),
                       "Padding size")


def test_squeeze_keeps_non_unit_dims_and_tuple_dims():
    x = tg.zeros(1, 3, 1, 2)
    assert x.squeeze((0, 1, 2)).shape == (3, 2)
    assert tg.squeeze(x, 1).shape == (1, 3, 1, 2)
    assert x.squeeze().shape == (3, 2)


def test_split_pieces_are_one_node_and_chunk_sizes_match_torch():
    x = tg.randn(7, 2, requires_grad=True)
    parts = x.chunk(3)
    assert [p.shape[0] for p in parts] == [t.shape[0] for t in torch.zeros(7, 2).chunk(3)]
    # one node with an output per piece (its backward is one concatenation)
    assert all(p.grad_fn is parts[0].grad_fn for p in parts)
    assert parts[0].grad_fn.name == "split" and [p._out for p in parts] == [1, 2, 3]  # output index + 1
    assert x.unbind(1)[0].grad_fn.name == "unbind"
    assert [p.shape for p in tg.zeros(6, 2).chunk(4)] == \
        [tuple(p.shape) for p in torch.zeros(6, 2).chunk(4)]
    assert len(tg.zeros(0).chunk(3)) == len(torch.zeros(0).chunk(3))


def test_cat_graph_is_one_node_and_gradient_slices():
    xs = [tg.randn(2, k, requires_grad=True) for k in (1, 2, 3)]
    y = tg.cat(xs, dim=1)
    assert y.grad_fn.name == "cat" and len(y.grad_fn.inputs) == 3
    w = tg.randn(2, 6)
    (y * w).sum().backward()
    np.testing.assert_array_equal(xs[0].grad.numpy(force=True), w.numpy(force=True)[:, :1])
    np.testing.assert_array_equal(xs[2].grad.numpy(force=True), w.numpy(force=True)[:, 3:])


def test_cat_promotes_like_torch():
    a = tg.ones(2, dtype=tg.float32)
    b = tg.ones(2, dtype=tg.float64)
    i = tg.ones(2, dtype=tg.int64)
    assert tg.cat([a, b]).dtype == tg.float64
    assert tg.cat([i, a]).dtype == tg.float32
    assert tg.cat([i, i]).dtype == tg.int64


# ---- cat/stack backward on many inputs (speed: bench, not tests) ---------------------------
def test_cat_stack_backward_many_inputs():
    xs = [tg.randn(64, 256, requires_grad=True) for _ in range(64)]

    y = tg.cat(xs, 0).sum() + tg.stack(xs, 1).sum()
    y.backward()
    for x in xs:  # one use in cat, one in stack: the two gradients of 1 add
        np.testing.assert_array_equal(x.grad.numpy(force=True), np.full((64, 256), 2.0, np.float32))

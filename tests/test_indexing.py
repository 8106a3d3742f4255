"""Indexing beyond the op database: x[key] = v semantics, integer-valued helpers, errors,
and the speed of the integer-array paths (Embedding, cross-entropy picking).

Values, gradients, gradcheck and second order of the differentiable indexing ops are in
tests/opdb/indexing.py (run by tests/test_opdb.py).
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tapegrad as tg

from _helpers import to_numpy as _np


def _same(a, b, rtol=1e-10, atol=1e-12):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype.kind == b.dtype.kind, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _pair(a, requires_grad=True):
    return (tg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


# ---- x[key] = v -------------------------------------------------------------------------
def _fill_rows(lib, x, w):
    """Build a matrix row by row with setitem, as RNN code does."""
    out = lib.zeros(4, 3, dtype=x.dtype)
    h = x
    for t in range(4):
        h = lib.tanh(h @ w)
        out[t] = h
    out[1:3, 0] = x[:2] * 2          # overwrite part of earlier rows
    out[[0, 3], [2, 2]] = x[2]       # advanced pairs, broadcast value
    out[out > 0.5] = 0.5             # mask, Python number
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_setitem_sequence_matches_torch(dtype):
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal(3).astype(dtype), rng.standard_normal((3, 3)).astype(dtype)
    (x, tx), (w, tw) = _pair(x0), _pair(w0)
    y, ty = _fill_rows(tg, x, w), _fill_rows(torch, tx, tw)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    _same(y, ty, **tol)
    c = rng.standard_normal((4, 3)).astype(dtype)
    (y * tg.tensor(c)).sum().backward()
    (ty * torch.tensor(c)).sum().backward()
    _same(x.grad, tx.grad, **tol)
    _same(w.grad, tw.grad, **tol)


def test_setitem_rebases_history_onto_a_copy():
    x = tg.randn(3, 4, requires_grad=True)
    y = x * 2
    before = y.numpy(force=True).copy()
    mul_node = y.grad_fn
    y[0] = 7.0
    node = y.grad_fn
    assert node.name == "setitem"
    old = node.inputs[0]
    assert old is not y and old.grad_fn is mul_node       # the old history lives on
    np.testing.assert_array_equal(old.numpy(force=True), before)       # with the old values
    assert (y.numpy(force=True)[0] == 7).all() and y._version == 1
    y.sum().backward()
    expect = np.full((3, 4), 2.0, np.float32)
    expect[0] = 0                                         # overwritten: no gradient
    np.testing.assert_array_equal(x.grad.numpy(force=True), expect)


def test_setitem_value_gets_gathered_gradient_summed_over_broadcast():
    x, tx = _pair(np.zeros((3, 4)), requires_grad=False)
    v, tv = _pair(np.array([1.0, 2.0]))
    x[:, 1:3] = v
    tx[:, 1:3] = tv
    c = np.arange(12.0).reshape(3, 4)
    (x * tg.tensor(c)).sum().backward()
    (tx * torch.tensor(c)).sum().backward()
    _same(v.grad, tv.grad)
    assert x.grad_fn.name == "setitem" and x.requires_grad


def test_setitem_on_leaf_requiring_grad_raises_but_works_under_no_grad():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 1.0
    with tg.no_grad():
        x[0] = 1.0
    assert x.numpy(force=True)[0] == 1 and x._version == 1 and x.grad_fn is None


def test_setitem_on_saved_tensor_is_caught_in_backward():
    for lib in (torch, tg):
        x = lib.randn(3, requires_grad=True)
        y = x.exp()
        y[0] = 1.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_setitem_errors():
    x = tg.zeros(3, 4)
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):
        x[5] = 1.0
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[0] = tg.ones(5)
    with pytest.raises(RuntimeError):
        torch.zeros(3, 4)[0] = torch.ones(5)


def test_setitem_into_int_tensor_copies_value_without_graph():
    for lib in (tg, torch):
        x = lib.zeros(3, dtype=lib.int64)
        x[0] = lib.tensor(1.5, requires_grad=True)
        assert x.tolist() == [1, 0, 0] and not x.requires_grad


def test_setitem_int_tensor_and_views_share_memory():
    a = tg.arange(6)
    a[a > 2] = 0
    np.testing.assert_array_equal(a.numpy(force=True), [0, 1, 2, 0, 0, 0])
    b = tg.zeros(2, 3)
    row = b[1]                       # a view, as in PyTorch
    with tg.no_grad():
        row[0] = 5.0
    assert b.numpy(force=True)[1, 0] == 5.0


# ---- getitem ----------------------------------------------------------------------------
def test_getitem_errors_like_torch():
    for key in (5, (slice(None), [0, 7]), (0, 0, 0)):
        with pytest.raises(IndexError):
            torch.zeros(3, 4)[key]
        with pytest.raises(IndexError):
            tg.zeros(3, 4)[key]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        tg.zeros(3, 4)[5]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        tg.zeros(3, 4)[tg.tensor([0.5])]
    with pytest.raises(IndexError, match="0-dim"):
        tg.tensor(1.0)[0]


def test_repeated_indices_add_in_backward():
    x = tg.zeros(4, requires_grad=True)
    x[[0, 0, 0, 2, 2]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(force=True), [3, 0, 2, 0])


def test_getitem_of_int_and_bool_tensors():
    a, ta = tg.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4)
    for key in [(slice(None), [1, 1]), a > 5, ([0, 2], [3, 0]), (1, Ellipsis)]:
        tk = ta > 5 if isinstance(key, tg.Tensor) else key
        _same(a[key], ta[tk])
    b = tg.tensor([True, False, True])
    assert b[[0, 2]].dtype == tg.bool


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_getitem_bool_and_int_tensor_keys_hypothesis(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))
    x0 = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:1]))
    idx = data.draw(hnp.arrays(np.int64, (data.draw(st.integers(0, 5)),),
                               elements=st.integers(-shape[-1], shape[-1] - 1)))
    x, tx = _pair(x0)
    y = x[tg.tensor(mask)][..., tg.tensor(idx)]
    ty = tx[torch.tensor(mask)][..., torch.tensor(idx)]
    _same(y, ty)
    c = np.cos(np.arange(y.numel())).reshape(y.shape)
    (y * tg.tensor(c)).sum().backward()
    (ty * torch.tensor(c)).sum().backward()
    _same(x.grad, tx.grad)


# ---- other errors ---------------------------------------------------------------------------
def _raises_like_torch(fn, match):
    with pytest.raises(Exception) as th:
        fn(torch)
    with pytest.raises(type(th.value), match=match):
        fn(tg)


def test_index_op_errors_like_torch():
    z = lambda L: L.zeros(3, 4)  # noqa: E731
    _raises_like_torch(lambda L: z(L).gather(1, L.tensor([[5]])), "index 5 is out of bounds")
    _raises_like_torch(lambda L: z(L).gather(1, L.tensor([[-1]])), "index -1 is out of bounds")
    _raises_like_torch(lambda L: z(L).gather(1, L.tensor([0])), "same number of dimensions")
    _raises_like_torch(lambda L: z(L).gather(1, L.tensor([[0.0]])), "int64")
    _raises_like_torch(lambda L: z(L).scatter(1, L.tensor([[5]]), 1.0), "out of bounds")
    _raises_like_torch(lambda L: z(L).index_select(0, L.tensor([[0]])), "vector")
    _raises_like_torch(lambda L: z(L).index_add(0, L.tensor([5]), L.ones(1, 4)), "out of bounds")
    _raises_like_torch(lambda L: z(L).masked_fill(L.zeros(3, 4, dtype=L.long), 1.0), "boolean")
    _raises_like_torch(lambda L: z(L).masked_fill(L.zeros(3, 4, dtype=L.bool), L.zeros(2)),
                       "0-dimensional")
    _raises_like_torch(lambda L: z(L).topk(5), "k out of range")
    _raises_like_torch(lambda L: z(L).scatter(1, L.tensor([[0]]), L.ones(1, 1).double()),
                       "dtype")
    _raises_like_torch(lambda L: z(L).long().scatter_add(1, L.tensor([[0]]), L.ones(1, 1)),
                       "dtype")
    _raises_like_torch(lambda L: z(L).index_add(1, L.tensor([0]), L.ones(3, 1).double()),
                       "same scalar type")
    _raises_like_torch(lambda L: z(L).long().masked_fill(
        L.ones(3, 4).bool(), L.tensor(1.5, requires_grad=True)), "integer|Long")
    _raises_like_torch(lambda L: L.nn.functional.one_hot(L.tensor([0, 5]), 3), "smaller than")
    _raises_like_torch(lambda L: L.nn.functional.one_hot(L.tensor([0, -1])), "non-negative")
    _raises_like_torch(lambda L: L.nn.functional.one_hot(L.tensor([0.0])), "LongTensor")
    _raises_like_torch(lambda L: L.multinomial(L.tensor([0.5, 0.5]), 3), "without replacement")
    _raises_like_torch(lambda L: L.multinomial(L.tensor([0.5, -0.5]), 1), "element < 0")


# ---- integer-valued helpers ---------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.data())
def test_sort_argsort_stable_with_ties_and_nan(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    a = data.draw(hnp.arrays(np.float64, shape,
                             elements=st.sampled_from([0.0, 1.0, -1.0, 2.5, np.nan])))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    desc = data.draw(st.booleans())
    x, tx = _pair(a)
    v, i = tg.sort(x, dim=dim, descending=desc, stable=True)
    tv, ti = torch.sort(tx, dim=dim, descending=desc, stable=True)
    _same(v, tv)
    _same(i, ti)
    _same(tg.argsort(x, dim=dim, descending=desc, stable=True),
          torch.argsort(tx, dim=dim, descending=desc, stable=True))
    g = np.cos(np.arange(v.numel())).reshape(v.shape)
    (v * tg.tensor(g)).sum().backward()
    (tv * torch.tensor(g)).sum().backward()
    _same(x.grad, tx.grad)


def test_sort_and_topk_return_named_pairs():
    x = tg.tensor([3.0, 1.0, 2.0])
    s = x.sort()
    assert s.values.tolist() == [1.0, 2.0, 3.0] and s.indices.tolist() == [1, 2, 0]
    t = x.topk(2)
    assert t.values.tolist() == [3.0, 2.0] and t.indices.dtype == tg.int64
    assert tg.sort(tg.tensor(2.0)).values.item() == 2.0


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_unique_nonzero_one_hot_vs_torch(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 3)))
    x, tx = tg.tensor(a), torch.tensor(a)
    inv, cnt = data.draw(st.booleans()), data.draw(st.booleans())
    ours = tg.unique(x, return_inverse=inv, return_counts=cnt)
    theirs = torch.unique(tx, return_inverse=inv, return_counts=cnt)
    for p, q in zip(ours if isinstance(ours, tuple) else [ours],
                    theirs if isinstance(theirs, tuple) else [theirs]):
        _same(p, q)
    _same(tg.nonzero(x), torch.nonzero(tx))
    for p, q in zip(tg.nonzero(x, as_tuple=True), torch.nonzero(tx, as_tuple=True)):
        _same(p, q)
    _same(tg.argwhere(x), torch.argwhere(tx))
    if a.size:
        _same(tg.nn.functional.one_hot(x), torch.nn.functional.one_hot(tx))
        _same(tg.nn.functional.one_hot(x, 6), torch.nn.functional.one_hot(tx, 6))


def test_unique_along_dim():
    a = np.array([[1, 2], [1, 2], [0, 5]])
    for p, q in zip(tg.unique(tg.tensor(a), dim=0, return_inverse=True, return_counts=True),
                    torch.unique(torch.tensor(a), dim=0, return_inverse=True,
                                 return_counts=True)):
        _same(p, q)


def test_multinomial_distribution_and_reproducibility():
    p = tg.tensor([[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.25, 0.25]])
    tg.manual_seed(1)
    s = tg.multinomial(p, 20000, replacement=True)
    assert s.shape == (2, 20000) and s.dtype == tg.int64
    freq = np.stack([np.bincount(r, minlength=4) for r in s.numpy(force=True)]) / 20000
    np.testing.assert_allclose(freq, p.numpy(force=True), atol=0.015)
    assert (s.numpy(force=True)[0] != 1).all()                          # zero weight: never drawn
    tg.manual_seed(1)
    assert (tg.multinomial(p, 20000, replacement=True).numpy(force=True) == s.numpy(force=True)).all()
    w = tg.multinomial(tg.tensor([1.0, 5.0, 0.0, 2.0]), 3)
    assert sorted(w.tolist()) == [0, 1, 3]                 # without replacement: distinct
    # first draw without replacement follows p (exponential race)
    first = [tg.multinomial(tg.tensor([1.0, 3.0]), 2)[0].item() for _ in range(4000)]
    assert abs(np.mean(first) - 0.75) < 0.03
    g = tg.Generator().manual_seed(5)
    a = tg.multinomial(p, 5, replacement=True, generator=g)
    g.manual_seed(5)
    assert (tg.multinomial(p, 5, replacement=True, generator=g).numpy(force=True) == a.numpy(force=True)).all()


# ---- integer-array paths used by Embedding and cross-entropy (speed: bench, not tests) ---
def test_embedding_style_getitem_backward():
    V, D = 5000, 64
    w = tg.randn(V, D, requires_grad=True)
    idx = tg.randint(0, V, (32, 64))
    tw = torch.tensor(w.numpy(force=True), requires_grad=True)

    def run():
        w.grad = None
        w[idx].sum().backward()
    run()
    tw[torch.tensor(idx.numpy(force=True))].sum().backward()
    _same(w.grad, tw.grad, rtol=1e-6, atol=1e-5)


def test_pick_by_target_backward():
    N, C = 4096, 100
    logp = tg.randn(N, C, requires_grad=True)
    target = tg.randint(0, C, (N,))

    def run():
        logp.grad = None
        logp[tg.arange(N), target].sum().backward()
    run()
    assert logp.grad.numpy(force=True).sum() == N
    np.testing.assert_array_equal(logp.grad.numpy(force=True)[np.arange(N), target.numpy(force=True)], np.ones(N))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_add_rows_equals_np_add_at(data):
    """The vectorized scatter-add behind getitem/index_select backward, in all its regimes
    (few repeats: rounds; many: bincount; tiny: add.at), against np.add.at."""
    from tapegrad.ops.rules.indexing import add_rows
    V = data.draw(st.integers(1, 40))
    width = data.draw(st.sampled_from([1, 3, 200]))
    n = data.draw(st.sampled_from([0, 5, 50, 3000]))
    spread = data.draw(st.integers(1, V))  # small spread: many repeats of each index
    idx = data.draw(hnp.arrays(np.int64, n, elements=st.integers(-spread, spread - 1)))
    rows = np.random.default_rng(n).standard_normal((n, width))
    out = np.random.default_rng(1).standard_normal((V, width))
    ref = out.copy()
    np.add.at(ref, idx, rows)
    np.testing.assert_allclose(add_rows(out, idx, rows), ref, rtol=1e-12, atol=1e-12)


def _inplace_forms(lib, x, s):
    y = x * 1
    y.scatter_(1, lib.tensor([[0, 2], [1, 0]]), s)
    y.scatter_add_(0, lib.tensor([[0, 1, 1]]), x[:1] * 3)
    y.index_add_(1, lib.tensor([2, 2]), s, alpha=0.5)
    return y


def test_inplace_scatter_and_index_add_match_torch():
    rng = np.random.default_rng(0)
    (x, tx), (s, ts) = _pair(rng.standard_normal((2, 3))), _pair(rng.standard_normal((2, 2)))
    y, ty = _inplace_forms(tg, x, s), _inplace_forms(torch, tx, ts)
    _same(y, ty)
    assert y.grad_fn.name == "index_add" and y._version == 3
    c = rng.standard_normal((2, 3))
    (y * tg.tensor(c)).sum().backward()
    (ty * torch.tensor(c)).sum().backward()
    _same(x.grad, tx.grad)
    _same(s.grad, ts.grad)
    leaf = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.index_add_(0, tg.tensor([0]), tg.ones(1))


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
def test_list_keys_follow_torchs_sequence_rule():
    x, y = torch.arange(12).reshape(3, 4), tg.arange(12).reshape(3, 4)
    for key in ([[0, 1], [1, 2]], [[0, 1]], [0, [1, 2]], [slice(None), 1], [None, 1],
                [[True, False, True]], [1, 2], [2, -1, 0]):
        _same(y[key], x[key])
    _same(y[[tg.tensor(1), tg.tensor(2)]], x[[torch.tensor(1), torch.tensor(2)]])


def test_where_with_one_argument_is_nonzero_as_tuple():
    a = np.array([[0, 1, 3], [2, 0, 0]])
    ours = tg.where(tg.tensor(a) > 0)
    theirs = torch.where(torch.tensor(a) > 0)
    assert len(ours) == len(theirs) == 2
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(force=True), t.numpy())


# ---- shapes torch accepts at the edges: empty gather indices, 0-d index_add ---------------
def _both(fn, *arrays, grad=True):
    """fn on torch and on tapegrad tensors of the same float64 values: (results, grads)."""
    out = []
    for L in (torch, tg):
        xs = [L.tensor(a, requires_grad=grad and a.dtype == np.float64) for a in arrays]
        y = fn(L, *xs)
        if grad:
            (y * L.arange(y.numel(), dtype=L.float64).view(y.shape)).sum().backward()
        out.append((to_values(y), [to_values(x.grad) for x in xs if x.requires_grad]))
    return out


def to_values(t):
    return None if t is None else (tuple(t.shape), str(t.dtype).split(".")[-1],
                                   np.asarray(t.detach().numpy()).tolist())


@pytest.mark.parametrize("xshape,ishape,dim", [((5,), (2, 0), 0), ((3, 4), (0,), 1),
                                               ((3, 4), (5, 0, 2), 1), ((), (0,), 0)])
def test_gather_empty_index(xshape, ishape, dim):
    x = np.random.default_rng(0).standard_normal(xshape)
    idx = np.zeros(ishape, dtype=np.int64)
    want, got = _both(lambda L, a, i: L.gather(a, dim, i), x, idx)
    assert got == want


@pytest.mark.parametrize("alpha", [-1, 0, 2])
def test_index_add_0d(alpha):
    x, s = np.array(1.5), np.array(-2.0)
    want, got = _both(lambda L, a, b: L.index_add(a, 0, L.tensor([0]), b, alpha=alpha), x, s)
    assert got == want


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_index_add_integer_alpha_wraps(dtype):
    res = [L.index_add(L.tensor([5, 7, 9], dtype=getattr(L, dtype)), 0, L.tensor([2, 0]),
                       L.tensor([1, 3], dtype=getattr(L, dtype)), alpha=-1).tolist()
           for L in (torch, tg)]
    assert res[0] == res[1]

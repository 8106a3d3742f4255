"""Sorting/searching, logical and memory-query functions and methods against torch
(ops/sorting.py, comparison.py, pointwise.py, conversion.py): the functions without a
gradient (searchsorted, bucketize, isin, unique_consecutive, the logical ops in place,
memory queries, legacy constructors), the in-place forms (with their gradients), and the
errors: same exception type, same message start. (Values and gradients of the
differentiable ones: the op database, tests/opdb/<family>.py.)"""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch, assert_same_result


def _both(fn, *arrays):
    """fn(lib, *tensors) in both libraries -> (tapegrad result, torch result)."""
    return (fn(tg, *[tg.tensor(a) for a in arrays]),
            fn(torch, *[torch.tensor(a) for a in arrays]))




SEQ = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
ROWS = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
NO_GRAD = [
    ("searchsorted", lambda lib, s, v: lib.searchsorted(s, v), (SEQ, np.array([[3.0, 6.0], [9.0, 0.0]]))),
    ("searchsorted right", lambda lib, s, v: lib.searchsorted(s, v, right=True), (SEQ, np.array([3.0, 6.0, 10.0]))),
    ("searchsorted side", lambda lib, s, v: lib.searchsorted(s, v, side="right", out_int32=True), (SEQ, np.array([3.0, 5.0]))),
    ("searchsorted rows", lambda lib, s, v: lib.searchsorted(s, v), (ROWS, np.array([[3.0, 0.0], [7.0, 4.0]]))),
    ("searchsorted scalar", lambda lib, s: lib.searchsorted(s, 4.0), (SEQ,)),
    ("bucketize", lambda lib, v, b: lib.bucketize(v, b), (np.array([[0.5, 3.0], [7.5, 11.0]]), SEQ)),
    ("bucketize right int32", lambda lib, v, b: lib.bucketize(v, b, right=True, out_int32=True), (np.array([3.0, 9.0]), SEQ)),
    ("isin", lambda lib, e, t: lib.isin(e, t), (np.array([[1, 2], [3, 4]]), np.array([2, 4, 6]))),
    ("isin invert", lambda lib, e, t: lib.isin(e, t, invert=True), (np.array([1.0, 2.0, 3.0]), np.array([2.0]))),
    ("unique_consecutive", lambda lib, x: lib.unique_consecutive(x), (np.array([1, 1, 2, 2, 3, 1, 1, 2]),)),
    ("unique_consecutive inverse counts", lambda lib, x: x.unique_consecutive(return_inverse=True, return_counts=True), (np.array([[1, 1], [2, 2], [2, 3]]),)),
    ("unique_consecutive dim", lambda lib, x: lib.unique_consecutive(x, return_counts=True, dim=0), (np.array([[1, 2], [1, 2], [3, 4], [1, 2]]),)),
    ("logical_and method", lambda lib, a, b: a.logical_and(b), (np.array([1.0, 0.0, 2.0]), np.array([True, True, False]))),
    ("logical_or method", lambda lib, a, b: a.logical_or(b), (np.array([1, 0, 0]), np.array([0, 0, 3]))),
    ("logical_xor method", lambda lib, a, b: a.logical_xor(b), (np.array([True, False]), np.array([True, True]))),
    ("logical_and_", lambda lib, a, b: a.logical_and_(b), (np.array([1.0, 0.0, 2.0]), np.array([3.0, 1.0, 0.0]))),
    ("logical_or_", lambda lib, a, b: a.logical_or_(b), (np.array([1, 0, 0]), np.array([0, 0, 3]))),
    ("logical_xor_", lambda lib, a, b: a.logical_xor_(b), (np.array([True, False]), np.array([True, True]))),
    ("logical_not_", lambda lib, a: a.logical_not_(), (np.array([1.5, 0.0]),)),
    ("less", lambda lib, a, b: a.less(b), (np.array([1.0, 2.0]), np.array([2.0, 2.0]))),
    ("less_equal", lambda lib, a, b: a.less_equal(b), (np.array([1.0, 2.0]), np.array([2.0, 2.0]))),
    ("greater", lambda lib, a, b: a.greater(b), (np.array([1.0, 3.0]), np.array([2.0, 2.0]))),
    ("greater_equal", lambda lib, a: a.greater_equal(2), (np.array([1, 2, 3]),)),
    ("not_equal", lambda lib, a, b: a.not_equal(b), (np.array([1.0, 2.0]), np.array([2.0, 2.0]))),
    ("byte", lambda lib, a: a.byte(), (np.array([1.7, 200.0]),)),
    ("short", lambda lib, a: a.short(), (np.array([1.7, -2.5]),)),
    ("char", lambda lib, a: a.char(), (np.array([1.7, -2.5]),)),
    ("new sizes", lambda lib, a: a.new(2, 3).shape, (np.array([1.0]),)),
    ("new data", lambda lib, a: a.new([1, 2]), (np.array([1.0]),)),
    ("new empty", lambda lib, a: a.new().shape, (np.array([1]),)),
    ("new tuple", lambda lib, a: a.new((2, 1)).dtype.is_floating_point, (np.array([1.0]),)),
    ("element_size", lambda lib, a: (a.element_size(), a.double().element_size(), a.byte().element_size()), (np.array([1.0]),)),
    ("nbytes", lambda lib, a: a.nbytes, (np.ones((3, 4)),)),
    ("ndimension", lambda lib, a: a.ndimension(), (np.ones((3, 4, 1)),)),
    ("is_floating_point", lambda lib, a: (lib.is_floating_point(a), lib.is_floating_point(a.long())), (np.ones(2),)),
]


@pytest.mark.parametrize("name,fn,arrays", NO_GRAD, ids=[n for n, _, _ in NO_GRAD])
def test_functions_without_gradient(name, fn, arrays):
    got, want = _both(fn, *arrays)
    if name.startswith("new empty") or name.startswith("new sizes"):
        got, want = tuple(got), tuple(want)
    elif name == "new tuple":
        got = got is True or got  # tapegrad dtypes answer is_floating_point as torch's do
    assert_same_result(got, want)


def test_data_ptr_is_the_address_and_views_share_it():
    x = tg.zeros(4, 3)
    assert x.data_ptr() == x.numpy().__array_interface__["data"][0]
    assert x[1].data_ptr() == x.data_ptr() + 3 * x.element_size()
    assert x.data_ptr() != tg.zeros(4, 3).data_ptr()


# ---- in place: values, the version counter and gradients as torch --------------------
INPLACE = [
    ("index_fill_", lambda lib, x, v: x.index_fill_(1, lib.tensor([0, 2]), v)),
    ("index_copy_", lambda lib, x, s: x.index_copy_(1, lib.tensor([2, 0]), s[:, :2])),
    ("masked_scatter_", lambda lib, x, s: x.masked_scatter_(
        lib.tensor([[True, False, True], [False, True, False]]), s.reshape(-1))),
    ("frac_", lambda lib, x, s: x.frac_() * s),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_forms_values_and_gradients(name, fn):
    rng = np.random.default_rng(0)
    a, s = rng.uniform(-3, 3, (2, 3)), rng.uniform(-3, 3, (2, 3))
    res = []
    for lib in (tg, torch):
        x0 = lib.tensor(a, requires_grad=True)
        src = lib.tensor(s, requires_grad=True)
        v = src[0, 0] if name == "index_fill_" else src
        x = x0 * 2  # a non-leaf: in place on it keeps the history
        out = fn(lib, x, v)
        (out * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        res.append((out.detach().numpy(), x0.grad.numpy(), src.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_inplace_on_a_leaf_requiring_grad_is_refused():
    for lib, err in ((tg, RuntimeError), (torch, RuntimeError)):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(err, match="leaf Variable that requires grad"):
            x.index_fill_(1, lib.tensor([0]), 0.0)


# ---- errors: the same exception type and message as torch -----------------------------
ERRORS = [
    ("unfold size", lambda lib: lib.arange(5.0).unfold(0, 6, 1)),
    ("unfold step", lambda lib: lib.arange(5.0).unfold(0, 2, 0)),
    ("unfold dim", lambda lib: lib.arange(5.0).unfold(1, 2, 1)),
    ("diff 0-d", lambda lib: lib.diff(lib.tensor(1.0))),
    ("diff order", lambda lib: lib.diff(lib.ones(3), n=-1)),
    ("take int32", lambda lib: lib.take(lib.ones(3), lib.tensor([0], dtype=lib.int32))),
    ("take range", lambda lib: lib.take(lib.ones(2, 3), lib.tensor([6]))),
    ("take negative range", lambda lib: lib.ones(2, 3).take(lib.tensor([-7]))),
    ("index_fill int32", lambda lib: lib.ones(3).index_fill(0, lib.tensor([0], dtype=lib.int32), 1.0)),
    ("index_fill 2-d index", lambda lib: lib.ones(3).index_fill(0, lib.tensor([[0]]), 1.0)),
    ("index_fill value dims", lambda lib: lib.ones(3).index_fill(0, lib.tensor([0]), lib.ones(1))),
    ("index_copy dtype", lambda lib: lib.ones(3).index_copy(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64))),
    ("index_copy shape", lambda lib: lib.ones(3, 2).index_copy(0, lib.tensor([0]), lib.ones(1, 3))),
    ("masked_scatter mask dtype", lambda lib: lib.ones(3).masked_scatter(lib.tensor([1, 0, 1]), lib.ones(3))),
    ("masked_scatter dtype", lambda lib: lib.ones(3).masked_scatter(lib.tensor([True, False, True]), lib.ones(3, dtype=lib.float64))),
    ("quantile q range", lambda lib: lib.quantile(lib.ones(3), 1.5)),
    ("quantile int input", lambda lib: lib.quantile(lib.tensor([1, 2]), 0.5)),
    ("quantile empty", lambda lib: lib.quantile(lib.ones(0), 0.5)),
    ("quantile q dtype", lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64))),
    ("quantile q 2-d", lambda lib: lib.quantile(lib.ones(3), lib.tensor([[0.5]]))),
    ("quantile interpolation", lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="cubic")),
    ("cdist int", lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3))),
    ("cdist 1-d", lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3))),
    ("cdist columns", lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4))),
    ("cdist p", lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1.0)),
    ("rot90 dims count", lambda lib: lib.rot90(lib.ones(2, 3), 1, (0, 1, 2))),
    ("rot90 1-d", lambda lib: lib.rot90(lib.ones(3), 1, (0, 0))),
    ("rot90 same dims", lambda lib: lib.rot90(lib.ones(2, 3), 1, (1, 1))),
    ("logaddexp number", lambda lib: lib.logaddexp(lib.ones(2), 1.0)),
    ("nanmean int", lambda lib: lib.nanmean(lib.tensor([1, 2]))),
    ("frac int", lambda lib: lib.frac(lib.tensor([1, 2]))),
    ("searchsorted side", lambda lib: lib.searchsorted(lib.ones(3), lib.ones(2), side="middle")),
    ("searchsorted opposite", lambda lib: lib.searchsorted(lib.ones(3), lib.ones(2), right=True, side="left")),
    ("searchsorted rows", lambda lib: lib.searchsorted(lib.ones(2, 3), lib.ones(3, 2))),
    ("bucketize 2-d boundaries", lambda lib: lib.bucketize(lib.ones(3), lib.ones(2, 2))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_errors_as_torch(name, fn):
    assert_raises_as_torch(fn, tg)


EMPTY_SHAPES = [(0,), (0, 3), (3, 0), (2, 0, 3), (2, 3, 0)]


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
def test_searchsorted_with_empty_rows(shape):
    # (0, 3) boundaries have no rows: -1 cannot be inferred when reshaping them
    seq = np.sort(np.random.default_rng(0).normal(size=shape), axis=-1)
    vals = np.zeros(shape[:-1] + (4,))
    for right in (False, True):
        got, want = _both(lambda lib, s, v: lib.searchsorted(s, v, right=right), seq, vals)
        assert_same_result(got, want)


@pytest.mark.parametrize("shape,dim", [(s, d) for s in EMPTY_SHAPES for d in (None, 0, -1, 1)
                                       if d is None or d < len(s)])
def test_unique_and_unique_consecutive_of_empty_tensors(shape, dim):
    # torch refuses a dim whose slices are empty ("0 sized dimensions ... aren't selected")
    for name in ("unique", "unique_consecutive"):
        def fn(lib, name=name):
            return getattr(lib, name)(lib.zeros(shape), return_inverse=True,
                                      return_counts=True, dim=dim)
        try:
            want = fn(torch)
        except RuntimeError:
            assert_raises_as_torch(fn, tg)
            continue
        assert_same_result(fn(tg), want)


# ---- empty inputs: searchsorted rows of size 0, unique_consecutive over an empty dim -------
@pytest.mark.parametrize("seq_shape,val_shape", [((0, 0), (0, 0)), ((2, 0), (2, 3)),
                                                 ((0, 4), (0, 2)), ((3, 4), (3, 0))])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_empty(seq_shape, val_shape, right):
    seq = np.sort(np.random.default_rng(0).standard_normal(seq_shape), -1)
    val = np.random.default_rng(1).standard_normal(val_shape)
    res = [L.searchsorted(L.tensor(seq), L.tensor(val), right=right) for L in (torch, tg)]
    assert tuple(res[0].shape) == tuple(res[1].shape)
    assert res[0].tolist() == res[1].tolist()


@pytest.mark.parametrize("dim", [None, 0, 1, 2])
def test_unique_consecutive_empty_dim(dim):
    def run(L):
        try:
            out = L.unique_consecutive(L.zeros(5, 0, 5), return_inverse=True,
                                       return_counts=True, dim=dim)
        except RuntimeError as e:
            return "RuntimeError", str(e)
        return [(tuple(t.shape), t.tolist()) for t in out]
    assert run(tg) == run(torch)

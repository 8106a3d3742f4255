"""The functional scatters against torch: select_scatter, slice_scatter,
diagonal_scatter, as_strided_scatter (a copy of input with one view of it replaced by
src), put/put_ (flat indices) and index_reduce/index_reduce_ (prod, mean, amax, amin):
values, dtypes, refusals and gradients for input and src. Also the shape helpers that
build index sets: tril_indices/triu_indices, unravel_index, cartesian_prod, and the
other shape functions: constant_pad_nd, unsafe_split/unsafe_chunk, msort,
fft.fftshift/ifftshift."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch, assert_same_result, grads_of

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce.. is in beta")  # torch's warning

R = np.random.default_rng(3)
X = R.standard_normal((3, 4))
A = R.standard_normal((2, 3, 3))

VALUES = {
    "select_scatter": lambda L: (L.select_scatter(L.zeros(2, 3), L.ones(3), 0, -1),
                                 L.zeros(2, 3).select_scatter(L.ones(2), 1, 2)),
    "select_scatter ints, 0-d src": lambda L: (
        L.select_scatter(L.zeros(2, 3, dtype=L.int64), L.ones(3, dtype=L.int64), 0, 0),
        L.select_scatter(L.zeros(3), L.tensor(5.0), 0, 1)),
    "slice_scatter": lambda L: (
        L.slice_scatter(L.zeros(4, 3), L.ones(2, 3), start=1, end=None, step=2),
        L.slice_scatter(L.zeros(4, 3), L.ones(4, 1), dim=1, start=-1),
        L.slice_scatter(L.zeros(4, 3), L.ones(4, 3)),
        L.slice_scatter(L.zeros(4, 3), L.ones(0, 3), start=2, end=2)),
    "diagonal_scatter": lambda L: (L.diagonal_scatter(L.zeros(3, 4), L.ones(3), 1),
                                   L.diagonal_scatter(L.zeros(3, 4), L.ones(2), -1),
                                   L.diagonal_scatter(L.zeros(2, 3, 3), L.ones(3, 2), 0, 0, 2)),
    "as_strided_scatter": lambda L: (
        L.as_strided_scatter(L.zeros(3, 3), L.arange(4.0).reshape(2, 2), (2, 2), (1, 2), 1),
        L.as_strided_scatter(L.zeros(16), L.ones(2, 2, 2, 2), (2, 2, 2, 2), (8, 4, 2, 1))),
    "as_strided_scatter of a transpose": lambda L: L.as_strided_scatter(
        L.zeros(3, 3).t(), L.arange(4.0).reshape(2, 2), (2, 2), (1, 2)),
    "put": lambda L: (L.put(L.zeros(2, 3), L.tensor([0, -1, 4]), L.tensor([1.0, 2.0, 3.0])),
                      L.put(L.zeros(2, 3), L.tensor([0, 0, 4]), L.tensor([1.0, 2.0, 3.0]),
                            accumulate=True),
                      L.put(L.zeros(2, 3), L.tensor([], dtype=L.int64), L.tensor([])),
                      L.zeros(2, 3, dtype=L.int32).put(L.tensor([1]), L.tensor([7], dtype=L.int32))),
    "put_ and a 2-d index": lambda L: L.zeros(2, 3).put_(L.tensor([[0], [5]]), L.tensor([1.0, 2.0])),
    "index_reduce": lambda L: tuple(
        L.index_reduce(L.tensor(X), 0, L.tensor([0, 2, 0]), L.tensor(X[:, ::-1].copy()), r,
                       include_self=s)
        for r in ("prod", "mean", "amax", "amin") for s in (True, False)),
    "index_reduce along dim 1, ints": lambda L: (
        L.index_reduce(L.tensor(X), 1, L.tensor([0, 0, 3, 1]), L.tensor(X), "mean",
                       include_self=False),
        L.index_reduce(L.tensor([[1, 2], [3, 4]]), 0, L.tensor([1, 1]),
                       L.tensor([[2, 2], [3, 3]]), "prod"),
        L.index_reduce(L.tensor([[1, 2], [3, 4]]), 0, L.tensor([1, 1]),
                       L.tensor([[2, 2], [3, 3]]), "mean")),
    "index_reduce mean in float16 (torch's float16 sums)": lambda L: tuple(
        L.index_reduce(L.tensor(X * 7, dtype=L.float16), 1, L.tensor([0, 0, 3, 0, 0, 1]),
                       L.tensor(np.hstack([X, X[:, :2]]) * 5, dtype=L.float16), "mean",
                       include_self=s) for s in (True, False)),
    "index_reduce_": lambda L: L.tensor(X).index_reduce_(0, L.tensor([1]), L.tensor(X[:1]), "amin"),
    "tril/triu_indices": lambda L: (L.tril_indices(4, 3, -1), L.triu_indices(3, 5, 2, dtype=L.int32),
                                    L.triu_indices(3, 3, 10), L.tril_indices(0, 3),
                                    L.tril_indices(3, 3, -10)),
    "unravel_index": lambda L: (L.unravel_index(L.tensor([[5, 7], [0, 11]]), (3, 4)),
                                L.unravel_index(L.tensor([5], dtype=L.int32), 12),
                                L.unravel_index(L.tensor([13, -1]), (3, 4)),
                                L.unravel_index(L.tensor(7), (2, 2, 2)),
                                L.unravel_index(L.tensor([0]), ())),
    "cartesian_prod": lambda L: (L.cartesian_prod(L.tensor([1, 2]), L.tensor([3, 4, 5])),
                                 L.cartesian_prod(L.tensor([1.0, 2.0])),
                                 L.cartesian_prod(L.tensor([1]), L.tensor([3, 4]),
                                                  L.tensor([5, 6])),
                                 L.cartesian_prod(L.tensor([1, 2]), L.tensor([], dtype=L.int64))),
    "constant_pad_nd": lambda L: (L.constant_pad_nd(L.tensor(X), (1, 2), 3.5),
                                  L.constant_pad_nd(L.tensor([[1, 2]]), (1, 1, -1, 1), 7),
                                  L.constant_pad_nd(L.tensor([True]), (1, 1)),
                                  L.constant_pad_nd(L.zeros(0, 3), (1, 1))),
    "unsafe_split/unsafe_chunk": lambda L: (L.unsafe_split(L.tensor(X), 3, 1),
                                            L.tensor(X).unsafe_chunk(2, 0),
                                            L.tensor(X).unsafe_split(2, -1)),
    "msort": lambda L: (L.msort(L.tensor([[3, 1], [2, 5], [1, 4]])), L.tensor(X).msort(),
                        L.msort(L.tensor(3))),
    "fftshift": lambda L: (L.fft.fftshift(L.tensor([0, 1, 2, 3, 4])),
                           L.fft.ifftshift(L.tensor([0, 1, 2, 3, 4])),
                           L.fft.fftshift(L.tensor(A), dim=(0, -1)),
                           L.fft.ifftshift(L.tensor(A), dim=1), L.fft.fftshift(L.zeros(0, 3))),
}


@pytest.mark.parametrize("case", list(VALUES))
def test_values_as_torch(case):
    assert_same_result(VALUES[case](tg), VALUES[case](torch), rtol=1e-12)


REFUSALS = {
    "select_scatter size": lambda L: L.select_scatter(L.zeros(2, 3), L.ones(2), 0, 0),
    "slice_scatter size": lambda L: L.slice_scatter(L.zeros(4, 3), L.ones(3, 3)),
    "diagonal_scatter size": lambda L: L.diagonal_scatter(L.zeros(3, 3), L.ones(2)),
    "as_strided_scatter out of bounds": lambda L: L.as_strided_scatter(
        L.zeros(3), L.ones(4), (4,), (1,)),
    "put index out of range": lambda L: L.put(L.zeros(2, 3), L.tensor([6]), L.tensor([1.0])),
    "put int32 index": lambda L: L.put(L.zeros(2, 3), L.tensor([1], dtype=L.int32), L.tensor([1.0])),
    "put numel": lambda L: L.put(L.zeros(2, 3), L.tensor([1, 2]), L.tensor([1.0])),
    "put dtype": lambda L: L.put(L.zeros(2, 3), L.tensor([1]), L.tensor([1.0], dtype=L.float64)),
    "index_reduce sum": lambda L: L.index_reduce(L.zeros(2), 0, L.tensor([0]), L.ones(1), "sum"),
    "index_reduce count": lambda L: L.index_reduce(L.zeros(2), 0, L.tensor([0, 1]), L.ones(1), "amax"),
    "index_reduce range": lambda L: L.index_reduce(L.zeros(2), 0, L.tensor([5]), L.ones(1), "amax"),
    "index_reduce float index": lambda L: L.index_reduce(L.zeros(2), 0, L.tensor([0.0]), L.ones(1),
                                                         "amax"),
    "index_reduce 2-d index": lambda L: L.index_reduce(L.zeros(2), 0, L.tensor([[0]]), L.ones(1),
                                                       "amax"),
    "tril_indices negative row": lambda L: L.tril_indices(-1, 3),
    "triu_indices float": lambda L: L.triu_indices(3, 3, dtype=L.float32),
    "unravel_index of floats": lambda L: L.unravel_index(L.tensor([1.0]), (3, 4)),
    "unravel_index negative shape": lambda L: L.unravel_index(L.tensor([1]), (-3, 4)),
    "unravel_index float shape": lambda L: L.unravel_index(L.tensor([1]), (2.0, 3)),
    "cartesian_prod of 2-d": lambda L: L.cartesian_prod(L.tensor([[1, 2]]), L.tensor([1])),
    "cartesian_prod dtypes": lambda L: L.cartesian_prod(L.tensor([1]), L.tensor([1.0])),
    "constant_pad_nd odd": lambda L: L.constant_pad_nd(L.tensor([[1, 2]]), (1,)),
    "constant_pad_nd too long": lambda L: L.constant_pad_nd(L.tensor([1, 2]), (1, 1, 1, 1)),
    "fftshift of 0-d": lambda L: L.fft.fftshift(L.tensor(3.0)),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusals_as_torch(case):
    assert_raises_as_torch(REFUSALS[case], tg, chars=0)




GRADS = {
    "select_scatter": (lambda L, x, s: L.select_scatter(x, s, 1, -2), X, X[:, 0]),
    "slice_scatter": (lambda L, x, s: L.slice_scatter(x, s, 1, 0, None, 2), X, X[:, :2] * 2),
    "diagonal_scatter": (lambda L, x, s: L.diagonal_scatter(x, s, 1, 2, 0), A, A[0, :, :1] ** 2),
    "put": (lambda L, x, s: L.put(x, L.tensor([0, 11, -2]), s), X, X[0, :3]),
    "put accumulate": (lambda L, x, s: L.put(x, L.tensor([0, 0, -2]), s, accumulate=True),
                       X, X[0, :3]),
    "index_reduce mean": (lambda L, x, s: L.index_reduce(x, 0, L.tensor([0, 2, 0]), s, "mean"),
                          X, X[::-1].copy()),
    "index_reduce amax, without self": (
        lambda L, x, s: L.index_reduce(x, 1, L.tensor([1, 0, 1, 3]), s, "amax",
                                       include_self=False), X, X[:, ::-1].copy()),
    "index_reduce prod": (lambda L, x, s: L.index_reduce(x, 0, L.tensor([1, 1, 2]), s, "prod"),
                          X, X + 3.0),
    "index_reduce prod, zeros in source and self": (
        lambda L, x, s: L.index_reduce(x, 0, L.tensor([1, 1, 2, 1, 0]), s, "prod"),
        np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 2.0], [0.5, 1.0, 0.0]]),
        np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 0.0], [1.0, 2.0, 0.0], [2.0, 2.0, 1.0],
                  [0.0, 0.0, 4.0]])),
    "index_reduce prod with zeros, without self": (
        lambda L, x, s: L.index_reduce(x, 1, L.tensor([2, 2, 0]), s, "prod", include_self=False),
        np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 2.0]]),
        np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]])),
    "cartesian_prod": (lambda L, a, b: L.cartesian_prod(a, b), X[0], X[1, :3]),
    "constant_pad_nd": (lambda L, x: L.constant_pad_nd(x, (1, -1, 2, 0), 2.0), X),
    "unsafe_split": (lambda L, x: L.unsafe_split(x, 3, 1), X),
    "msort": (lambda L, x: L.msort(x), X),
    "fftshift": (lambda L, x: L.fft.fftshift(x, dim=(0, 2)) * x, A),
}


@pytest.mark.parametrize("case", list(GRADS))
def test_gradients_as_torch(case):
    fn, *arrays = GRADS[case]
    for g, w in zip(grads_of(tg, fn, *arrays), grads_of(torch, fn, *arrays)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)


def test_as_strided_scatter_gradient_is_the_derivative():
    # torch 2.13's input gradient is g AT the scattered elements (its gradcheck fails);
    # the derivative is g with those elements zeroed, src's is g there
    x = tg.zeros(3, 3, dtype=tg.float64, requires_grad=True)
    s = tg.zeros(2, 2, dtype=tg.float64, requires_grad=True)
    g = tg.arange(1.0, 10.0, dtype=tg.float64).reshape(3, 3)
    gx, gs = tg.autograd.grad(tg.as_strided_scatter(x, s, (2, 2), (1, 2), 1), (x, s), g)
    assert gx.reshape(-1).tolist() == [1.0, 0, 0, 0, 0, 6, 7, 8, 9]
    assert gs.tolist() == [[2.0, 4.0], [3.0, 5.0]]


def test_scatters_leave_input_unchanged_and_second_order():
    x = tg.tensor(X, requires_grad=True)
    s = tg.tensor(X[0], requires_grad=True)
    out = tg.select_scatter(x, s * s, 0, 1)
    assert np.array_equal(x.detach().numpy(), X)
    (gs,) = tg.autograd.grad((out ** 3).sum(), s, create_graph=True)
    (gss,) = tg.autograd.grad(gs.sum(), s)
    np.testing.assert_allclose(gss.numpy(), 30 * X[0] ** 4, rtol=1e-12)


def test_index_reduce_prod_second_order_with_a_zero_as_torch():
    x0 = np.array([[1.5, 2.0], [0.5, -1.0]])
    s0 = np.array([[0.0, 2.0], [3.0, 0.5], [1.0, -2.0]])
    res = []
    for L in (tg, torch):
        x = L.tensor(x0, requires_grad=True)
        s = L.tensor(s0, requires_grad=True)
        out = L.index_reduce(x, 0, L.tensor([1, 1, 0]), s, "prod")
        gx, gs = L.autograd.grad((out * out).sum(), (x, s), create_graph=True)
        res.append(L.autograd.grad((gx.sum() + (gs * gs).sum()), (x, s)))
    for g, w in zip(*res):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)

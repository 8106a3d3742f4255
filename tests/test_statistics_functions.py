"""torch's statistics and numerical-calculus functions against torch: cov (weights,
correction), corrcoef, logcumsumexp (stability, infinities, torch's backward, second
order), cumulative_trapezoid, gradient (uniform spacing, coordinates, edge orders),
histogramdd, mode, sum_to_size: values, dtypes, refusals, gradients."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch, assert_same_result

# both libraries warn when cov's degrees of freedom are <= 0 (the empty samples)
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")

R = np.random.default_rng(7)
X = R.standard_normal((3, 5))
V = R.standard_normal(6)
Y = R.standard_normal((2, 4))
Z = R.standard_normal((3, 4))
PTS = R.uniform(-1, 1, (20, 3))

VALUES = {
    "cov": lambda L: L.cov(L.tensor(X)),
    "cov float32": lambda L: L.cov(L.tensor(X, dtype=L.float32)),
    "cov of ints": lambda L: L.cov(L.tensor([[1, 2, 4], [3, 1, 1]])),
    "cov 1-d and one observation": lambda L: (L.cov(L.tensor(V)), L.cov(L.tensor([[1.0], [2.0]]))),
    "cov correction": lambda L: (L.cov(L.tensor(X), correction=0), L.cov(L.tensor(X), correction=3)),
    "cov fweights": lambda L: L.cov(L.tensor(X), fweights=L.tensor([1, 2, 0, 1, 3])),
    "cov both weights": lambda L: L.cov(L.tensor(X), fweights=L.tensor([1, 2, 0, 1, 3]),
                                        aweights=L.tensor([0.5, 1, 2, 1, 0.1], dtype=L.float64)),
    "cov empty and 0-d": lambda L: (L.cov(L.zeros(2, 0)), L.cov(L.tensor(3.0))),
    "corrcoef": lambda L: (L.corrcoef(L.tensor(X)), L.tensor(X).corrcoef()),
    "corrcoef 1-d, ints, constant row": lambda L: (
        L.corrcoef(L.tensor(V)), L.corrcoef(L.tensor([[1, 2, 4], [3, 1, 1]])),
        L.corrcoef(L.tensor([[1.0, 1.0], [1.0, 2.0]]))),
    "logcumsumexp": lambda L: (L.logcumsumexp(L.tensor(X), 1), L.tensor(X).logcumsumexp(dim=0)),
    "logcumsumexp far apart": lambda L: L.logcumsumexp(L.tensor([-1000.0, 0.0, 800.0],
                                                                dtype=L.float64), 0),
    "logcumsumexp infinities": lambda L: L.logcumsumexp(
        L.tensor([float("-inf"), 0.0, float("inf"), 1.0]), 0),
    "logcumsumexp float16, 0-d, empty": lambda L: (
        L.logcumsumexp(L.tensor([1.0, 2.0, 3.5], dtype=L.float16), 0),
        L.logcumsumexp(L.tensor(2.0), 0), L.logcumsumexp(L.zeros(0, 3), 1)),
    "logcumsumexp out": lambda L: L.logcumsumexp(L.tensor([1.0, 2.0]), 0, out=L.zeros(2)),
    "cumulative_trapezoid": lambda L: (L.cumulative_trapezoid(L.tensor(X)),
                                       L.cumulative_trapezoid(L.tensor(X), dim=0)),
    "cumulative_trapezoid ints and dx": lambda L: (
        L.cumulative_trapezoid(L.tensor([1, 2, 4])),
        L.cumulative_trapezoid(L.tensor([1.0, 2.0, 4.0]), dx=2)),
    "cumulative_trapezoid x": lambda L: (
        L.cumulative_trapezoid(L.tensor(Y), L.tensor([0.0, 0.5, 2.0, 2.5])),
        L.cumulative_trapezoid(L.tensor([1, 2, 4]), L.tensor([0, 1, 3])),
        L.cumulative_trapezoid(L.tensor(Y), L.tensor(Y[:1] ** 2))),
    "cumulative_trapezoid size 1": lambda L: L.cumulative_trapezoid(L.tensor([1.0])),
    "gradient": lambda L: L.gradient(L.tensor([1.0, 4.0, 9.0, 16.0, 25.0])),
    "gradient 2-d, spacing, edge order 2": lambda L: (
        L.gradient(L.tensor(Y)), L.gradient(L.tensor(Z), spacing=2.0, edge_order=2),
        L.gradient(L.tensor(Y), spacing=[2.0], dim=[1]), L.gradient(L.tensor(Y), dim=1)),
    "gradient of ints": lambda L: L.gradient(L.tensor([1, 4, 9, 16])),
    "gradient coordinates": lambda L: (
        L.gradient(L.tensor([1.0, 4.0, 9.0, 16.0]), spacing=(L.tensor([0.0, 1.0, 1.5, 3.5]),)),
        L.gradient(L.tensor([1.0, 4.0, 9.0, 16.0]), spacing=(L.tensor([0.0, 1.0, 1.5, 3.5]),),
                   edge_order=2),
        L.gradient(L.tensor([1.0, 4.0, 9.0, 16.0]), spacing=[L.tensor([0, 1, 2, 4])])),
    "histogramdd": lambda L: tuple(L.histogramdd(L.tensor(PTS), bins=[2, 3, 4])),
    "histogramdd range, weights, density": lambda L: tuple(L.histogramdd(
        L.tensor(PTS[:, :2]), bins=3, range=[-1.0, 1.0, 0.0, 1.0], weight=L.tensor(PTS[:, 2]),
        density=True)),
    "histogramdd edges": lambda L: tuple(L.histogramdd(
        L.tensor([[0.0, 1.0], [1.0, 1.0], [2.0, 0.5]]),
        bins=[L.tensor([0.0, 0.5, 2.0]), L.tensor([0.0, 1.0])])),
    "histogramdd one value, empty": lambda L: (
        tuple(L.histogramdd(L.ones(3, 2), bins=2)), tuple(L.histogramdd(L.zeros(0, 2), bins=2))),
    "mode": lambda L: tuple(L.mode(L.tensor([[1, 2, 2, 3], [4, 4, 1, 1]]), 1)),
    "mode keepdim, floats": lambda L: tuple(L.tensor([[1.5, 2.0], [1.5, 0.5], [2.0, 0.5]]).mode(
        0, True)),
    "mode 0-d, bool": lambda L: (tuple(L.mode(L.tensor(3.5))),
                                 tuple(L.mode(L.tensor([True, False, True])))),
    "mode empty other dim": lambda L: tuple(L.mode(L.zeros(0, 3), 1)),
    "mode out": lambda L: tuple(L.mode(L.tensor([1.0, 1.0, 2.0]),
                                       out=(L.zeros(()), L.zeros((), dtype=L.int64)))),
    "sum_to_size": lambda L: (L.ones(2, 3, 4).sum_to_size(3, 1), L.ones(2, 3).sum_to_size((2, 3)),
                              L.ones(2, 3, dtype=L.int32).sum_to_size(1, 3),
                              L.ones(2, 3, dtype=L.int32).sum_to_size(())),
}


@pytest.mark.parametrize("case", list(VALUES))
def test_values_as_torch(case):
    assert_same_result(VALUES[case](tg), VALUES[case](torch), rtol=1e-6)


REFUSALS = {
    "cov of 3-d": lambda L: L.cov(L.zeros(2, 2, 2)),
    "cov float fweights": lambda L: L.cov(L.zeros(2, 3), fweights=L.ones(3)),
    "cov int aweights": lambda L: L.cov(L.zeros(2, 3), aweights=L.ones(3, dtype=L.int64)),
    "cov negative weights": lambda L: L.cov(L.zeros(2, 3), fweights=L.tensor([1, -1, 1])),
    "cov weights' numel": lambda L: L.cov(L.zeros(2, 3), aweights=L.ones(2)),
    "logcumsumexp of ints": lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    "logcumsumexp dim": lambda L: L.logcumsumexp(L.zeros(2), 1),
    "cumulative_trapezoid 0-d": lambda L: L.cumulative_trapezoid(L.tensor(1.0)),
    "cumulative_trapezoid x size": lambda L: L.cumulative_trapezoid(L.zeros(2), L.zeros(3)),
    "gradient edge order": lambda L: L.gradient(L.zeros(4), edge_order=3),
    "gradient short dim": lambda L: L.gradient(L.zeros(2, 2), edge_order=2),
    "gradient repeated dim": lambda L: L.gradient(L.zeros(3, 3), dim=(1, 1)),
    "gradient spacing length": lambda L: L.gradient(L.zeros(3, 3), spacing=[1.0], dim=(0, 1)),
    "histogramdd of ints": lambda L: L.histogramdd(L.zeros(2, 2, dtype=L.int64), bins=2),
    "histogramdd 1-d": lambda L: L.histogramdd(L.zeros(3), bins=[2]),
    "histogramdd bins count": lambda L: L.histogramdd(L.zeros(3, 2), bins=[2, 2, 2]),
    "mode of an empty dim": lambda L: L.mode(L.zeros(0, 3), 0),
    "sum_to_size": lambda L: L.ones(2, 3).sum_to_size(4),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusals_as_torch(case):
    assert_raises_as_torch(REFUSALS[case], tg, chars=0)


def _grads(L, fn, *arrays, create_graph=False):
    xs = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
    out = fn(L, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    gs = [L.tensor(np.linspace(-1.0, 2.0, int(np.prod(o.shape))).reshape(tuple(o.shape)))
          for o in outs]
    return L.autograd.grad(outs, xs, gs, allow_unused=True, create_graph=create_graph)


GRADS = {
    "cov": (lambda L, x: L.cov(x), X),
    "cov aweights (both)": (lambda L, x, w: L.cov(x, aweights=w.abs() + 0.1), X, V[:5]),
    "corrcoef": (lambda L, x: L.corrcoef(x), X),
    "logcumsumexp": (lambda L, x: L.logcumsumexp(x, 1), X),
    "logcumsumexp far apart": (lambda L, x: L.logcumsumexp(x * 400.0, 0), V),
    "cumulative_trapezoid (y and x)": (lambda L, y, x: L.cumulative_trapezoid(y, x), Y, Y[0]),
    "gradient": (lambda L, x: L.gradient(x, edge_order=2), Z),
    "gradient coordinates": (lambda L, x, c: L.gradient(x, spacing=(c.cumsum(0),), edge_order=2),
                             V, np.abs(V) + 0.5),
    "mode": (lambda L, x: L.mode(x, 0).values, np.round(X * 2) / 2),
    "sum_to_size": (lambda L, x: x.sum_to_size(1, 5), X),
}


@pytest.mark.parametrize("case", list(GRADS))
def test_gradients_as_torch(case):
    fn, *arrays = GRADS[case]
    for g, w in zip(_grads(tg, fn, *arrays), _grads(torch, fn, *arrays)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", ["cov", "corrcoef", "logcumsumexp", "logcumsumexp far apart"])
def test_second_order_as_torch(case):
    fn, *arrays = GRADS[case]
    res = []
    for L in (tg, torch):  # the gradient of (the first gradient's sum) w.r.t. the inputs
        xs = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
        out = fn(L, *xs)
        first = L.autograd.grad((out * out).sum(), xs, create_graph=True)
        res.append(L.autograd.grad(sum(f.sin().sum() for f in first), xs))
    for g, w in zip(*res):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12)


def test_logcumsumexp_gradgrad():
    x = torch.tensor(X, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: torch.logcumsumexp(t, 1), (x,))
    t = tg.tensor(X, requires_grad=True)
    (g,) = tg.autograd.grad(tg.logcumsumexp(t, 1).sin().sum(), t, create_graph=True)
    (gg,) = tg.autograd.grad(g.sum(), t)
    (g_t,) = torch.autograd.grad(torch.logcumsumexp(x, 1).sin().sum(), x, create_graph=True)
    (gg_t,) = torch.autograd.grad(g_t.sum(), x)
    np.testing.assert_allclose(gg.numpy(), gg_t.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n", [17, 100, 1000, 8000])
def test_mode_index_of_long_rows_as_torch(n):
    # torch's kernel reports the last index of the mode's run after an unstable std::sort
    rng = np.random.default_rng(n)
    for a in (rng.integers(-6, 6, (3, n)), rng.integers(0, 3, (2, n)).astype(np.float32),
              np.sort(rng.integers(0, 40, n))[None, :]):
        for dim in (-1, 0) if a.shape[0] > 1 else (-1,):
            assert_same_result(tuple(tg.mode(tg.tensor(a), dim)),
                               tuple(torch.mode(torch.tensor(a), dim)))

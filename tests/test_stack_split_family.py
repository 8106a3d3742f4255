"""column_stack, dstack, hsplit, vsplit, dsplit against torch: values, gradients through
every piece, edge ranks (0-D, 1-D), refusals with torch's type and message."""
import numpy as np
import pytest
import torch

import tapegrad as tg

RNG = np.random.default_rng(0)


def _grads(fn, arrays):
    """fn's outputs (a tensor or a tuple) and the inputs' gradients, in both libraries."""
    res = []
    for L in (torch, tg):
        ts = [L.tensor(a, requires_grad=True) for a in arrays]
        out = fn(L, ts)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        total = sum((o * L.tensor(np.arange(o.numel(), dtype=np.float64).reshape(
            tuple(o.shape)))).sum() for o in outs)
        total.backward()
        res.append(([o.detach().numpy() for o in outs], [t.grad.numpy() for t in ts]))
    (wo, wg), (go, gg) = res
    assert len(wo) == len(go)
    for a, b in zip(go + gg, wo + wg):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("name", ["column_stack", "dstack"])
@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(), ()], [(3, 2), (3,)], [(2, 3), (2, 3)],
                                    [(2, 3, 4), (2, 3, 1)], [(0,), (0,)]])
def test_stacks(name, shapes):
    if name == "dstack" and shapes == [(3, 2), (3,)]:
        shapes = [(1, 3), (3,)]
    if name == "column_stack" and shapes == [(2, 3, 4), (2, 3, 1)]:
        shapes = [(2, 3, 4), (2, 1, 4)]
    arrays = [RNG.standard_normal(s) for s in shapes]
    _grads(lambda L, ts: getattr(L, name)(ts), arrays)


@pytest.mark.parametrize("name,shape,arg", [
    ("hsplit", (4, 6), 3), ("hsplit", (6,), 2), ("hsplit", (4, 6), [1, 4]),
    ("vsplit", (4, 6), 2), ("vsplit", (5, 2), [2]), ("dsplit", (2, 3, 4), 2),
    ("dsplit", (2, 3, 4), [1, 3])])
def test_splits(name, shape, arg):
    a = RNG.standard_normal(shape)
    _grads(lambda L, ts: getattr(L, name)(ts[0], arg), [a])
    _grads(lambda L, ts: getattr(ts[0], name)(arg), [a])


@pytest.mark.parametrize("case", [
    lambda L: L.hsplit(L.zeros(()), 1), lambda L: L.vsplit(L.zeros(3), 1),
    lambda L: L.hsplit(L.zeros(3, 5), 2), lambda L: L.dsplit(L.zeros(2, 2), 1)])
def test_refusals_like_torch(case):
    with pytest.raises(RuntimeError) as want:
        case(torch)
    with pytest.raises(RuntimeError) as got:
        case(tg)
    assert str(got.value) == str(want.value)


def test_out():
    out = tg.empty(0)
    tg.column_stack([tg.tensor([1., 2.]), tg.tensor([3., 4.])], out=out)
    np.testing.assert_array_equal(out.numpy(), [[1., 3.], [2., 4.]])

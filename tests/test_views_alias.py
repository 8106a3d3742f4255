"""Views alias, as torch's: every op torch documents as a view (tensor_view.html) returns a
tensor on its input's memory and version counter. Differential against torch, float64,
random small shapes (size-1 dims, 0-d results) for each view op:
(a) an in-place write through the view reaches the base (values);
(b) the version counter is shared, `_is_view()` / `_base` answer as torch's;
(c) through a graph (the view of a non-leaf changed in place: torch's CopySlices), the
    gradients of the leaf and of the written value equal torch's;
(d) torch's errors: views of leaves, outputs of split/unbind, overlapping memory.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _helpers import assert_close as _close


# (name, base shapes, fn(lib, x) -> a view of x). Each shape gives one case.
VIEWS = [
    ("getitem_int", [(3,), (4, 1), (1, 3, 2)], lambda L, x: x[0]),
    ("getitem_ints_0d", [(3, 2), (1, 1)], lambda L, x: x[-1, 0]),
    ("getitem_slice", [(5,), (4, 3)], lambda L, x: x[1:4:2]),
    ("getitem_mixed", [(3, 4, 2), (2, 1, 3)], lambda L, x: x[1, ..., None, :1]),
    ("getitem_ellipsis", [(3,), ()], lambda L, x: x[...]),
    ("select", [(3, 4), (2, 1, 3)], lambda L, x: x.select(1, -1)),
    ("select_0d", [(4,)], lambda L, x: x.select(0, 2)),
    ("narrow", [(5, 2), (3, 4)], lambda L, x: x.narrow(0, 1, 2)),
    ("diagonal", [(3, 3), (2, 4), (1, 3, 3)], lambda L, x: x.diagonal()),
    ("diagonal_offset", [(4, 3), (3, 2, 4)], lambda L, x: x.diagonal(-1, 0, -1)),
    ("unfold", [(7,), (2, 6), (5, 1)], lambda L, x: x.unfold(0, 2, 2)),
    ("unfold_last", [(3, 5)], lambda L, x: x.unfold(-1, 2, 3)),
    ("unfold_of_transpose", [(4, 5)], lambda L, x: x.t().unfold(1, 2, 2)),
    ("as_strided", [(6,), (2, 3)], lambda L, x: x.as_strided((2, 2), (1, 3))),
    ("as_strided_offset", [(3, 4)], lambda L, x: x.as_strided((2, 3), (4, 1), 5)),
    ("as_strided_0d", [(4,)], lambda L, x: x.as_strided((), (), 3)),
    ("view", [(2, 3), (4, 1)], lambda L, x: x.view(-1)),
    ("view_same_shape", [(2, 3)], lambda L, x: x.view(2, 3)),
    ("view_as", [(2, 6)], lambda L, x: x.view_as(L.zeros(3, 4))),
    ("view_then_int", [(2, 2)], lambda L, x: x.view(4)[3]),
    ("reshape", [(2, 3), (6, 1)], lambda L, x: x.reshape(3, 2)),
    ("reshape_same_shape", [(3, 2)], lambda L, x: x.reshape(3, 2)),
    ("reshape_as", [(2, 6)], lambda L, x: x.reshape_as(L.zeros(4, 3))),
    ("t", [(2, 3), (4,)], lambda L, x: x.t()),
    ("T", [(2, 3)], lambda L, x: x.T),
    ("mT", [(2, 3, 4)], lambda L, x: x.mT),
    ("transpose", [(2, 3, 4), (1, 3)], lambda L, x: x.transpose(0, -1)),
    ("swapaxes", [(2, 3)], lambda L, x: x.swapaxes(0, 1)),
    ("permute", [(2, 3, 4), (1, 2, 1)], lambda L, x: x.permute(2, 0, 1)),
    ("squeeze", [(1, 3, 1), (2, 1)], lambda L, x: x.squeeze()),
    ("squeeze_dim", [(3, 1, 2)], lambda L, x: x.squeeze(1)),
    ("squeeze_nothing", [(2, 3)], lambda L, x: x.squeeze()),
    ("unsqueeze", [(3,), (2, 3), ()], lambda L, x: x.unsqueeze(-1)),
    ("movedim", [(2, 3, 4)], lambda L, x: x.movedim(0, 2)),
    ("moveaxis", [(2, 3)], lambda L, x: x.moveaxis(1, 0)),
    ("flatten", [(2, 3, 2), (1, 4)], lambda L, x: x.flatten()),
    ("flatten_range", [(2, 3, 2)], lambda L, x: x.flatten(1)),
    ("unflatten", [(2, 6)], lambda L, x: x.unflatten(1, (3, 2))),
    ("ravel", [(3, 2)], lambda L, x: x.ravel()),
    ("split_piece", [(5, 2)], lambda L, x: x.split(2)[1]),
    ("chunk_piece", [(4, 3)], lambda L, x: x.chunk(2, 1)[0]),
    ("split_sizes_piece", [(4, 3)], lambda L, x: x.split([1, 3])[1]),
    ("unbind_piece", [(3, 2), (4,)], lambda L, x: x.unbind(0)[1]),
    ("tensor_split_piece", [(5, 2)], lambda L, x: x.tensor_split(2)[1]),
    ("atleast_3d", [(2, 3)], lambda L, x: L.atleast_3d(x)),
    ("view_of_view", [(3, 4)], lambda L, x: x.t()[1:].unsqueeze(0)[0, 2]),
]

# the ones torch refuses to write through when it requires grad (several views at once)
MULTI = {"split_piece": "Split", "chunk_piece": "Split", "split_sizes_piece": "SplitWithSizes",
         "unbind_piece": "Unbind"}

# view/reshape to the same shape without history: tapegrad returns x itself, where torch
# returns a new view (values and versions alias either way); a tensor made outside the
# op table would break tg.compile's capture
SAME_OBJECT = {"view_same_shape", "reshape_same_shape"}

CASES = [pytest.param(name, shape, fn, id=f"{name}-{'x'.join(map(str, shape)) or '0d'}")
         for name, shapes, fn in VIEWS for shape in shapes]


def _arr(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


def _pair(arr, requires_grad=False):
    return (tg.tensor(arr, requires_grad=requires_grad),
            torch.tensor(arr, requires_grad=requires_grad))


@pytest.mark.parametrize("name,shape,fn", CASES)
def test_write_through_view_reaches_base(name, shape, fn):
    """(a) and (b): values, version counters, _is_view/_base."""
    gx, tx = _pair(_arr(shape, 1))
    gv, tv = fn(tg, gx), fn(torch, tx)
    if name in SAME_OBJECT:  # the known gap: tapegrad returns x itself (same memory)
        assert gv is gx and tv._base is tx
    else:
        assert gv._is_view() == tv._is_view() is True
        assert (gv._base is gx) == (tv._base is tx) is True
    assert gx._is_view() is tx._is_view() is False
    w = _arr(tuple(tv.shape), 2)
    tv.mul_(torch.tensor(w)).add_(0.5)
    gv.mul_(tg.tensor(w)).add_(0.5)
    _close(gx, tx, rtol=1e-12, atol=1e-12)
    _close(gv, tv, rtol=1e-12, atol=1e-12)
    assert gx._version == tx._version
    assert gv._version == tv._version
    assert gv._version_counter is gx._version_counter  # one shared counter


@pytest.mark.parametrize("name,shape,fn", CASES)
def test_base_changes_show_in_view(name, shape, fn):
    """A change of the base is a change of the view (values and version)."""
    gx, tx = _pair(_arr(shape, 3))
    gv, tv = fn(tg, gx), fn(torch, tx)
    tx.mul_(-3.0)
    gx.mul_(-3.0)
    _close(gv, tv, rtol=1e-12, atol=1e-12)
    assert gv._version == tv._version == 1


@pytest.mark.parametrize("name,shape,fn", CASES)
def test_gradients_through_written_view(name, shape, fn):
    """(c): h = x * 1 (a non-leaf), its view changed in place by w; the loss reads h
    (torch's CopySlices history) and the view; then (d) for split/unbind pieces."""
    arr, c = _arr(shape, 4), _arr(shape, 5)
    res = {}
    for L in (tg, torch):
        x = L.tensor(arr, requires_grad=True)
        h = x * 1.0
        v = fn(L, h)
        w = L.tensor(_arr(tuple(v.shape), 6), requires_grad=True)
        if name in MULTI:
            with pytest.raises(RuntimeError, match=f"Output . of {MULTI[name]} is a view and "
                               "is being modified inplace"):
                v.mul_(w)
            continue
        v.mul_(w)
        loss = (h * L.tensor(c)).sum() + (v * v).sum()
        loss.backward()
        res[L] = (h.detach(), x.grad, w.grad)
    if name not in MULTI:
        for a, b in zip(res[tg], res[torch]):
            _close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,shape,fn", CASES)
def test_view_of_leaf_refuses_in_place(name, shape, fn):
    """(d): a view of a leaf that requires grad is not written in place under grad mode;
    under no_grad it is (the leaf's values change, as torch's)."""
    arr = _arr(shape, 7)
    msgs = []
    for L in (tg, torch):
        x = L.tensor(arr, requires_grad=True)
        v = fn(L, x)
        with pytest.raises(RuntimeError) as e:
            v.add_(1.0)
        msgs.append(str(e.value))
        with L.no_grad():
            fn(L, x).add_(1.0)
        msgs.append(x.detach().numpy().copy())
    assert msgs[0].split(".")[0] == msgs[2].split(".")[0]
    np.testing.assert_allclose(msgs[1], msgs[3], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(MULTI))
def test_piece_used_after_base_changed_raises(name):
    """(d): torch refuses a split/unbind piece whose base changed in place afterwards
    (torch at the piece's use, tapegrad when its gradient is needed)."""
    fn = dict((n, f) for n, _, f in VIEWS)[name]
    for L in (tg, torch):
        x = L.tensor(_arr((4, 3), 8), requires_grad=True)
        h = x * 1.0
        v = fn(L, h)
        h.mul_(3.0)
        with pytest.raises(RuntimeError, match=f"Output . of {MULTI[name]} is a view and its "
                           "base or another view of its base has been modified inplace"):
            (v * v).sum().backward()


@pytest.mark.parametrize("shape,fn", [((1, 3), lambda L, x: x.expand(4, 3)),
                                      ((3, 1), lambda L, x: L.broadcast_to(x, (3, 2))),
                                      ((2,), lambda L, x: x.as_strided((3, 2), (0, 1))),
                                      ((4,), lambda L, x: x.unsqueeze(0).expand(2, 4).t())])
def test_overlapping_views_refuse_writes(shape, fn):
    """(d): torch refuses an in-place write into memory several elements share, and the
    view still aliases for reading (a base change shows)."""
    gx, tx = _pair(_arr(shape, 9))
    gv, tv = fn(tg, gx), fn(torch, tx)
    assert gv._is_view() and gv._base is gx and tv._base is tx
    for v in (gv, tv):
        with pytest.raises(RuntimeError, match="more than one element of the written-to "
                           "tensor refers to a single memory location"):
            v.add_(1.0)
    gx.add_(2.0)
    tx.add_(2.0)
    _close(gv, tv, rtol=1e-12, atol=1e-12)


def test_issue_repros():
    """The issue's reproductions, each torch's result."""
    x = tg.zeros(3)
    x[0].add_(1)
    assert x.tolist() == [1.0, 0.0, 0.0]
    x = tg.zeros(2, 3)
    x.unbind(0)[1].fill_(2)
    assert x.tolist() == [[0.0] * 3, [2.0] * 3]
    x = tg.zeros(3, 3)
    x.diagonal().add_(1)
    assert x.tolist() == np.eye(3).tolist()
    x = tg.ones(6)
    x.unfold(0, 2, 2).mul_(3)
    assert x.tolist() == [3.0] * 6
    x = tg.zeros(6)
    x.as_strided((2,), (2,)).add_(1)
    assert x.tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    x = tg.zeros(2, 2)
    x.view(4)[3].add_(1)
    assert x.tolist() == [[0.0, 0.0], [0.0, 1.0]]
    x = tg.ones(3, requires_grad=True)
    h = x * 1
    h[1].mul_(10)
    h.sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 1.0]
    x = tg.ones(3, requires_grad=True)
    h = x * 1
    v = h.split(1)[0]
    h.mul_(3)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base"):
        (v * v).sum().backward()


def test_not_views_as_torch():
    """Ops torch documents as copies are no views here either (a write does not reach x)."""
    for fn in (lambda L, x: x[[0, 1]], lambda L, x: x[x > 0], lambda L, x: L.diag(x),
               lambda L, x: x.flip(0), lambda L, x: x.t().reshape(-1), lambda L, x: x.detach(),
               lambda L, x: x.unfold(0, 1, 1).contiguous() * 1):
        gx, tx = _pair(_arr((2, 2), 11))
        gy, ty = fn(tg, gx), fn(torch, tx)
        assert gy._is_view() == ty._is_view()
        gy.add_(1.0)
        ty.add_(1.0)
        _close(gx, tx, rtol=0, atol=0)


def test_view_of_non_grad_base_written_with_grad_value():
    """A view of a plain tensor written by a value that requires grad: the base gets the
    history (torch's CopySlices), and its gradient reaches the value."""
    arr, c = _arr((3, 4), 12), _arr((3, 4), 13)
    res = []
    for L in (tg, torch):
        x = L.tensor(arr)
        w = L.tensor(_arr((4,), 14), requires_grad=True)
        x[1].mul_(w)
        assert x.requires_grad
        (x * L.tensor(c)).sum().backward()
        res.append((x.detach(), w.grad))
    _close(res[0][0], res[1][0], rtol=1e-12, atol=1e-12)
    _close(res[0][1], res[1][1], rtol=1e-12, atol=1e-12)


def test_other_views_see_the_new_history():
    """Two views of one non-leaf: writing through one gives the other the new values and
    a history that reads them (torch regenerates the view's grad_fn)."""
    arr = _arr((3, 3), 15)
    res = []
    for L in (tg, torch):
        x = L.tensor(arr, requires_grad=True)
        h = x * 2.0
        a, b = h.diagonal(), h.t()[0]
        a.mul_(L.tensor([1.0, -2.0, 3.0], dtype=L.float64))
        (b * b * b).sum().backward()
        res.append((b.detach(), x.grad))
    _close(res[0][0], res[1][0], rtol=1e-12, atol=1e-12)
    _close(res[0][1], res[1][1], rtol=1e-12, atol=1e-12)


def test_float32_write_through_view():
    arr = _arr((4, 3), 16).astype(np.float32)
    gx, tx = tg.tensor(arr), torch.tensor(arr)
    for L, x in ((tg, gx), (torch, tx)):
        x.unfold(0, 2, 2)[1].mul_(2.5)
        x.diagonal().sub_(1.0)
        x[2, 1].fill_(7.0)
    _close(gx, tx, rtol=1e-6, atol=1e-6)
    assert gx.dtype == tg.float32


@pytest.mark.parametrize("fn", [lambda L, x: x.as_strided((2, 3), (1, 2), 1),
                                lambda L, x: x.t().as_strided((3, 2), (2, 0)),
                                lambda L, x: x.unfold(1, 2, 1),
                                lambda L, x: x[1:].unfold(0, 1, 1).diagonal(0, 1, 2)])
def test_strided_views_first_and_second_order(fn):
    """The as_strided rules (overlapping windows add their gradients), to second order."""
    arr, c = _arr((3, 4), 17), None
    res = []
    for L in (tg, torch):
        x = L.tensor(arr, requires_grad=True)
        y = fn(L, x)
        c = L.tensor(_arr(tuple(y.shape), 18))
        (g,) = L.autograd.grad((y * y * c).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)
        res.append((y.detach(), g.detach(), gg))
    for a, b in zip(*res):
        _close(a, b, rtol=1e-10, atol=1e-12)


def test_forward_mode_through_as_strided():
    from tapegrad.autograd import forward_ad as fwAD
    arr, tan = _arr((3, 4), 19), _arr((3, 4), 20)
    res = []
    for L, F in ((tg, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            x = F.make_dual(L.tensor(arr), L.tensor(tan))
            y = x.t().as_strided((2, 2), (1, 3), 2)
            res.append(F.unpack_dual(y).tangent)
    _close(res[0], res[1], rtol=1e-12, atol=1e-12)

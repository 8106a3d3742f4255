"""The copying twins of the view ops (torch.<view>_copy, declared by ops/public.py's
`public_copy`), differential against torch: the view's values in a contiguous tensor of
its own (a write to the copy leaves the input alone, and the reverse), gradients
(float64, gradcheck and gradgradcheck), float32, edge shapes, out= and the errors."""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _helpers import assert_close as _close
from _helpers import assert_raises_as_torch

# (name, input shape, args): torch.<name>(x, *args)
CASES = [
    ("alias_copy", (2, 3), ()),
    ("alias_copy", (), ()),
    ("view_copy", (2, 3), ((3, 2),)),
    ("view_copy", (2, 3), ((-1,),)),
    ("view_copy", (0, 3), ((3, 0),)),
    ("expand_copy", (3, 1), ((3, 4),)),
    ("expand_copy", (), ((2, 2),)),
    ("expand_copy", (1, 2), ((2, -1, 2),)),
    ("permute_copy", (2, 3, 4), ((2, 0, 1),)),
    ("transpose_copy", (2, 3, 4), (0, -1)),
    ("t_copy", (2, 3), ()),
    ("t_copy", (3,), ()),
    ("diagonal_copy", (3, 4), ()),
    ("diagonal_copy", (2, 3, 3), (1, 1, 2)),
    ("squeeze_copy", (1, 3, 1), ()),
    ("squeeze_copy", (1, 3, 1), (2,)),
    ("unsqueeze_copy", (2, 3), (1,)),
    ("unsqueeze_copy", (), (0,)),
    ("narrow_copy", (4, 3), (0, 1, 2)),
    ("narrow_copy", (4, 3), (-1, 0, 0)),
    ("select_copy", (4, 3), (1, -1)),
    ("split_copy", (5, 2), (2,)),
    ("split_with_sizes_copy", (5, 2), ([1, 4],)),
    ("split_with_sizes_copy", (2, 5), ([2, 0, 3], 1)),
    ("unbind_copy", (3, 2), ()),
    ("unbind_copy", (3, 2), (1,)),
    ("unfold_copy", (7,), (0, 2, 2)),
    ("unfold_copy", (3, 5), (-1, 3, 1)),
    ("as_strided_copy", (6,), ((2, 2), (1, 3))),
    ("as_strided_copy", (3, 4), ((2, 3), (4, 1), 5)),
]
IDS = [f"{n}-{s}-{a}" for n, s, a in CASES]


def _pieces(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name,shape,args", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_values_and_fresh_memory_as_torch(name, shape, args, dtype):
    a = np.random.default_rng(0).standard_normal(shape) * 10
    xt = torch.tensor(a).to(getattr(torch, dtype))
    x = tg.tensor(xt.numpy())
    want, got = _pieces(getattr(torch, name)(xt, *args)), _pieces(getattr(tg, name)(x, *args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype).replace("torch", "tapegrad")
        assert np.array_equal(g.numpy(), w.numpy())
        assert g.is_contiguous() and w.is_contiguous()
        assert g._base is None and not np.shares_memory(g.numpy(), x.numpy())
    before = x.numpy().copy()
    for g in got:
        g.fill_(7)  # the copy owns its memory: the input is unchanged
    assert np.array_equal(x.numpy(), before)
    x.fill_(-1)  # and the reverse
    assert all(np.all(g.numpy() == 7) for g in got)


@pytest.mark.parametrize("name,shape,args", CASES, ids=IDS)
def test_gradients_as_torch(name, shape, args):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    xt = torch.tensor(a, requires_grad=True)
    x = tg.tensor(a, requires_grad=True)
    outs_t = _pieces(getattr(torch, name)(xt, *args))
    outs = _pieces(getattr(tg, name)(x, *args))
    cots = [rng.standard_normal(tuple(o.shape)) for o in outs_t]
    sum(((o * torch.tensor(c)).sum() for o, c in zip(outs_t, cots)), torch.zeros(())).backward()
    sum(((o * tg.tensor(c)).sum() for o, c in zip(outs, cots)), tg.zeros(())).backward()
    _close(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("name,args", [("permute_copy", ((1, 0),)), ("diagonal_copy", ()),
                                       ("unfold_copy", (1, 2, 1)), ("narrow_copy", (0, 1, 2)),
                                       ("expand_copy", ((2, 3, 3),))])
def test_gradcheck_and_gradgradcheck(name, args):
    x = tg.tensor(np.random.default_rng(2).standard_normal((3, 3)), requires_grad=True)
    fn = getattr(tg, name)
    assert tg.autograd.gradcheck(lambda t: fn(t, *args), (x,))
    assert tg.autograd.gradgradcheck(lambda t: fn(t, *args), (x,))


def test_out_and_the_method():
    a = np.arange(6.0).reshape(2, 3)
    x, xt = tg.tensor(a), torch.tensor(a)
    out, out_t = tg.empty(3, 2, dtype=tg.float64), torch.empty(3, 2, dtype=torch.float64)
    assert tg.t_copy(x, out=out) is out
    torch.t_copy(xt, out=out_t)
    assert np.array_equal(out.numpy(), out_t.numpy())
    assert np.array_equal(x.narrow_copy(1, 1, 2).numpy(), xt.narrow_copy(1, 1, 2).numpy())
    assert tg.view_copy(x, tg.int64).dtype == tg.int64  # view(dtype): the bytes reread
    assert np.array_equal(tg.view_copy(x, tg.int64).numpy(), torch.view_copy(xt, torch.int64).numpy())


def test_view_copy_takes_any_strides():
    a = np.arange(6.0).reshape(2, 3)
    want = torch.view_copy(torch.tensor(a).t(), (6,))  # torch's view would refuse
    assert np.array_equal(tg.view_copy(tg.tensor(a).t(), (6,)).numpy(), want.numpy())


def test_alias_is_a_view():
    x = tg.zeros(3)
    a = tg.alias(x)
    a.add_(1)
    assert x.tolist() == [1.0, 1.0, 1.0] and a._base is x


def test_names():
    for name in ("view_copy", "unbind_copy", "unfold_copy", "narrow_copy"):
        assert getattr(tg, name).__name__ == name
        assert getattr(torch, name).__doc__ and getattr(tg, name).__doc__


@pytest.mark.parametrize("call", [
    lambda L, x: L.t_copy(L.zeros(2, 2, 2)),
    lambda L, x: L.narrow_copy(x, 2, 0, 1),
    lambda L, x: L.narrow_copy(x, -3, 0, 1),
    lambda L, x: L.narrow_copy(x, 0, 0, 5),
    lambda L, x: L.view_copy(x, (4,)),
    lambda L, x: L.unbind_copy(x, 2),
    lambda L, x: L.expand_copy(x, (3,)),
])
def test_errors_as_torch(call):
    assert_raises_as_torch(lambda L: call(L, L.zeros(2, 3)), tg, chars=0, same_type=True)


@pytest.mark.parametrize("name,kwargs", [
    ("view_copy", dict(size=(4, 6))), ("expand_copy", dict(size=(2, 2, 3, 4))),
    ("permute_copy", dict(dims=(2, 0, 1))), ("transpose_copy", dict(dim0=0, dim1=2)),
    ("diagonal_copy", dict(offset=1, dim1=1, dim2=2)), ("squeeze_copy", dict(dim=(0,))),
    ("unsqueeze_copy", dict(dim=1)), ("narrow_copy", dict(dim=1, start=1, length=2)),
    ("select_copy", dict(dim=1, index=2)), ("split_copy", dict(split_size=1, dim=1)),
    ("split_with_sizes_copy", dict(split_sizes=[1, 2], dim=1)), ("unbind_copy", dict(dim=2)),
    ("unfold_copy", dict(dimension=2, size=2, step=1)),
    ("as_strided_copy", dict(size=(2, 2), stride=(1, 2), storage_offset=1)),
])
def test_torch_keyword_names(name, kwargs):
    a = np.arange(24.0).reshape(2, 3, 4)
    want = _pieces(getattr(torch, name)(torch.tensor(a), **kwargs))
    got = _pieces(getattr(tg, name)(tg.tensor(a), **kwargs))
    assert len(got) == len(want)
    assert all(np.array_equal(g.numpy(), w.numpy()) for g, w in zip(got, want))

"""tg.masked (torch.masked's reductions and normalizations) against torch: values in
float64, float32 and integer dtypes, gradients (float64, random cotangent; masked-out
elements get zero), gradcheck/gradgradcheck, masks that broadcast, rows with every element
masked out, 0-d and empty inputs, and torch's refusals."""
import warnings

import numpy as np
import pytest
import torch
import torch.masked  # noqa: F401  (the namespace is imported lazily by torch)

import tapegrad as tg
from _helpers import assert_raises_as_torch

# (op, args, kwargs): torch.masked.<op>(x, *args, mask=m, **kwargs)
REDUCTIONS = [
    ("sum", (), {}), ("sum", (1,), {"keepdim": True}), ("sum", ((0, 2),), {}),
    ("prod", (), {}), ("prod", (-1,), {}), ("prod", ((0, 1),), {"keepdim": True}),
    ("amax", (1,), {}), ("amax", (), {}), ("amin", ((0, 2),), {"keepdim": True}),
    ("mean", (1,), {}), ("mean", (), {}), ("mean", ((0, 1),), {"keepdim": True}),
    ("median", (1,), {}), ("median", (-1,), {"keepdim": True}),
    ("logsumexp", (2,), {}), ("logsumexp", ((0, 1),), {"keepdim": True}),
    ("norm", (2.0, 1), {}), ("norm", (1.0, None), {}), ("norm", (float("inf"), 2), {}),
    ("norm", (float("-inf"), (0, 1)), {}), ("norm", (3.5, 2), {"keepdim": True}),
    ("var", (1,), {}), ("var", (1, False), {"keepdim": True}), ("std", ((0, 2),), {}),
    ("var", (None,), {"correction": 0}), ("std", (2,), {"correction": 2}),
    ("cumsum", (1,), {}), ("cumprod", (-1,), {}),
    ("softmax", (1,), {}), ("log_softmax", (2,), {}), ("softmin", (0,), {}),
    ("normalize", (2.0, 1), {}), ("normalize", (1.0, -1), {"eps": 1e-3}),
]
IDS = [f"{n}{a}{k}" for n, a, k in REDUCTIONS]
SHAPE = (3, 4, 2)


def _data(dtype=np.float64, shape=SHAPE, seed=0, full_row=True):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    m = rng.random(shape) > 0.4
    if full_row and len(shape) == 3:
        m[0, :, 0] = False  # a row (along dim 1) with every element masked out
    return x, m


def _both(name, args, kwargs, x, m, grad=False):
    xt = torch.tensor(x, requires_grad=grad)
    xg = tg.tensor(x, requires_grad=grad)
    mt = None if m is None else torch.tensor(m)
    mg = None if m is None else tg.tensor(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(torch.masked, name)(xt, *args, mask=mt, **kwargs)
    got = getattr(tg.masked, name)(xg, *args, mask=mg, **kwargs)
    return xt, xg, want, got


def _same(got, want, rtol=1e-10, atol=1e-12):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)


@pytest.mark.parametrize("name,args,kwargs", REDUCTIONS, ids=IDS)
@pytest.mark.parametrize("masked", [True, False], ids=["mask", "no_mask"])
def test_float64_values_and_gradients(name, args, kwargs, masked):
    x, m = _data()
    xt, xg, want, got = _both(name, args, kwargs, x, m if masked else None, grad=True)
    _same(got, want)
    cot = np.random.default_rng(1).standard_normal(tuple(want.shape))
    ok = np.isfinite(want.detach().numpy())  # NaN/inf results (a fully masked-out row)
    cot = np.where(ok, cot, 0.0)             # get a zero cotangent in both libraries
    (want * torch.tensor(cot)).nan_to_num(0.0).sum().backward()
    (got * tg.tensor(cot)).nan_to_num(0.0).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("name,args,kwargs", REDUCTIONS, ids=IDS)
def test_float32(name, args, kwargs):
    x, m = _data(np.float32)
    _, _, want, got = _both(name, args, kwargs, x, m)
    _same(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,args,kwargs", [
    ("sum", (1,), {}), ("prod", (), {}), ("amax", (0,), {}), ("amin", (), {}),
    ("cumsum", (1,), {}), ("cumprod", (0,), {}), ("argmax", (1,), {}), ("argmin", (), {}),
    ("var", (1,), {}), ("std", (), {}),
])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_integer_inputs(name, args, kwargs, dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (3, 4)).astype(dtype)
    m = rng.random((3, 4)) > 0.3
    tkw = dict(kwargs)
    gkw = {k: (tg.float64 if v is torch.float64 else v) for k, v in kwargs.items()}
    try:
        want = getattr(torch.masked, name)(torch.tensor(x), *args, mask=torch.tensor(m), **tkw)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(tg.masked, name)(tg.tensor(x), *args, mask=tg.tensor(m), **gkw)
        return
    got = getattr(tg.masked, name)(tg.tensor(x), *args, mask=tg.tensor(m), **gkw)
    _same(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dim", [None, 0, 2])
def test_arg_reductions(name, dim):
    x, m = _data(full_row=False)
    _, _, want, got = _both(name, (dim,), {"keepdim": dim == 2}, x, m)
    _same(got, want)


@pytest.mark.parametrize("name,args", [("sum", (1,)), ("amax", (1,)), ("softmax", (0,)),
                                       ("mean", (0,)), ("var", (1,)), ("norm", (2.0, 1))])
def test_mask_broadcasts(name, args):
    x, _ = _data(shape=(3, 4))
    m = np.array([True, False, True, True])  # one mask for every row
    _, _, want, got = _both(name, args, {}, x, m)
    _same(got, want)


def test_logaddexp_with_two_masks():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    ma, mb = rng.random((3, 4)) > 0.5, rng.random((3, 4)) > 0.5
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ag, bg = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    want = torch.masked.logaddexp(at, bt, input_mask=torch.tensor(ma), other_mask=torch.tensor(mb))
    got = tg.masked.logaddexp(ag, bg, input_mask=tg.tensor(ma), other_mask=tg.tensor(mb))
    _same(got, want)
    cot = np.where(np.isfinite(want.detach().numpy()), 1.0, 0.0)
    (want * torch.tensor(cot)).nan_to_num(0.0).sum().backward()
    (got * tg.tensor(cot)).nan_to_num(0.0).sum().backward()
    np.testing.assert_allclose(ag.grad.numpy(), at.grad.numpy(), rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(bg.grad.numpy(), bt.grad.numpy(), rtol=1e-10, equal_nan=True)


# (amax of an empty input: tg.amax's own error type, op_db's amax:err)
@pytest.mark.parametrize("name,args", [("sum", ()), ("prod", ()), ("amax", (-1,)), ("mean", ()),
                                       ("norm", (2.0,)), ("logsumexp", ()), ("var", ()),
                                       ("softmax", (0,)), ("cumsum", (0,)), ("median", (0,))])
@pytest.mark.parametrize("shape", [(), (0, 3), (1,)], ids=["0d", "empty", "size1"])
def test_edge_shapes(name, args, shape):
    x = np.random.default_rng(5).standard_normal(shape)
    m = np.ones(shape, bool)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(torch.masked, name)(torch.tensor(x), *args, mask=torch.tensor(m))
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(tg.masked, name)(tg.tensor(x), *args, mask=tg.tensor(m))
        return
    _same(getattr(tg.masked, name)(tg.tensor(x), *args, mask=tg.tensor(m)), want)


@pytest.mark.parametrize("name,args,kwargs", [
    ("sum", (1,), {}), ("prod", (1,), {}), ("amax", (0,), {}), ("mean", (1,), {}),
    ("logsumexp", (1,), {}), ("norm", (2.0, 1), {}), ("var", (1,), {}), ("std", (0,), {}),
    ("softmax", (1,), {}), ("softmin", (1,), {}),
    ("normalize", (2.0, 1), {}), ("cumsum", (1,), {}), ("cumprod", (0,), {}),
])  # (log_softmax: its -inf entries make the central differences NaN)
def test_gradcheck_and_gradgradcheck(name, args, kwargs):
    rng = np.random.default_rng(6)
    x = tg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    m = tg.tensor(np.array([[True, False, True, True], [True, True, False, True],
                            [False, True, True, True]]))
    fn = getattr(tg.masked, name)
    assert tg.autograd.gradcheck(lambda t: fn(t, *args, mask=m, **kwargs), (x,))
    assert tg.autograd.gradgradcheck(lambda t: fn(t, *args, mask=m, **kwargs), (x,))


def test_masked_out_elements_get_no_gradient():
    x = tg.tensor([1.0, 5.0, 3.0], requires_grad=True)
    tg.masked.amax(x, mask=tg.tensor([True, False, True])).backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("call", [
    lambda L, x, m: L.masked.sum(x, 1, mask=m.unsqueeze(0)),       # mask of more dims
    lambda L, x, m: L.masked.sum(x, (1, 1), mask=m),               # a dim twice
    lambda L, x, m: L.masked.sum(x, 2, mask=m),                    # dim out of range
    lambda L, x, m: L.masked.mean(x.long(), 1, mask=m),            # an integer mean
    lambda L, x, m: L.masked.median(x.long(), 1, mask=m & False),  # integer, all masked
])
def test_refusals_as_torch(call):
    x = np.arange(6.0).reshape(2, 3)
    m = np.array([[True, False, True], [True, True, True]])
    assert_raises_as_torch(lambda L: call(L, L.tensor(x), L.tensor(m)), tg, chars=0,
                           same_type=True)


def test_names_and_namespace():
    assert sorted(tg.masked.__all__) == sorted(n for n in torch.masked.__all__
                                               if n not in ("MaskedTensor", "as_masked_tensor",
                                                            "is_masked_tensor", "masked_tensor"))
    for n in tg.masked.__all__:
        fn = getattr(tg.masked, n)
        assert fn.__name__ == n and "<locals>" not in fn.__qualname__ and fn.__doc__

"""Reduction edges against torch: var_mean / std_mean with the legacy positional
`unbiased` (a reduction over all elements, gradients included); diff with n=0 returns
the input (prepend / append ignored)."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _pair(shape, seed, dtype="float64"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True))


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("shape", [(2, 3), (5,), (3, 1, 4), ()])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_stat_mean_positional_unbiased(name, unbiased, shape, dtype):
    t, g = _pair(shape, 1, dtype)
    rt, rg = getattr(torch, name)(t, unbiased), getattr(tg, name)(g, unbiased)
    tol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(rg, rt):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(2).standard_normal(2)
    (rt[0] * w[0] + rt[1] * w[1]).backward()
    (rg[0] * w[0] + rg[1] * w[1]).backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("kw", [{}, {"prepend": [[9.0, 8.0, 7.0]]}, {"append": [[1.0, 2.0, 3.0]],
                                                                  "prepend": [[0.5, 0.5, 0.5]]}])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_diff_n(kw, n):
    t, g = _pair((4, 3), 3)
    kt = {k: torch.tensor(v, dtype=torch.float64) for k, v in kw.items()}
    kg = {k: tg.tensor(v, dtype=tg.float64) for k, v in kw.items()}
    rt, rg = torch.diff(t, n=n, dim=0, **kt), tg.diff(g, n=n, dim=0, **kg)
    assert tuple(rg.shape) == tuple(rt.shape)
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-12)
    w = np.random.default_rng(4).standard_normal(tuple(rt.shape))
    (rt * torch.tensor(w)).sum().backward()
    (rg * tg.tensor(w)).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("src", ["int8", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "bool", "float64", None])
@pytest.mark.parametrize("call", [
    lambda L, x, d: L.sum(x, dtype=d), lambda L, x, d: L.sum(x, 0, dtype=d),
    lambda L, x, d: L.prod(x, dtype=d), lambda L, x, d: L.prod(x, 1, keepdim=True, dtype=d),
    lambda L, x, d: L.cumsum(x, 0, dtype=d), lambda L, x, d: L.cumprod(x, 1, dtype=d),
])
def test_integer_reductions_keep_the_requested_dtype(src, dtype, call):
    vals = [[1, 0, 3], [2, 2, 1]]

    def run(L):
        x = L.tensor(vals, dtype=getattr(L, src))
        try:
            return call(L, x, None if dtype is None else getattr(L, dtype))
        except Exception as e:  # noqa: BLE001 (torch's refusals are compared)
            return type(e)
    t, g = run(torch), run(tg)
    if isinstance(t, type):
        assert g is t, (g, t)
        return
    assert _dtype_name(g) == _dtype_name(t)
    np.testing.assert_array_equal(g.numpy(), t.numpy())


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dtype", ["uint8", "bool", "int64", "float32"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_all_any_dtype(name, dtype, dim):
    vals = [[0, 2, 3], [1, 1, 0]]
    outs = []
    for L in (torch, tg):
        x = L.tensor(vals, dtype=getattr(L, dtype))
        outs.append(getattr(L, name)(x) if dim is None else getattr(L, name)(x, dim))
    assert _dtype_name(outs[1]) == _dtype_name(outs[0])
    np.testing.assert_array_equal(outs[1].numpy(), outs[0].numpy())


@pytest.mark.parametrize("data,bins,kw", [
    ([], 3, {}), ([], 2, {"range": (3.0, 3.0)}), ([2.0, 2.0], 2, {}), ([0.0, 0.0], 2, {}),
    ([1.0, 5.0], 4, {"range": (0.0, 0.0)}), ([], 4, {"density": True}),
    ([0.5, 1.0, 1.0, 3.0], 3, {"weight": [1.5, -2.0, 0.25, 4.0]}),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_histogram_edges(data, bins, kw, dtype):
    outs = []
    for L in (torch, tg):
        k = dict(kw)
        if "weight" in k:
            k["weight"] = L.tensor(k["weight"], dtype=getattr(L, dtype))
        outs.append(L.histogram(L.tensor(data, dtype=getattr(L, dtype)), bins, **k))
    for a, b in zip(outs[1], outs[0]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, equal_nan=True)


def test_histogram_float32_weights_accumulate_as_torch():
    rng = np.random.default_rng(5)
    a = rng.uniform(-9, 9, (5, 5, 5)).astype(np.float32)
    w = rng.uniform(-9, 9, (5, 5, 5)).astype(np.float32)
    for bins in (1, 3, 4):
        ht = torch.histogram(torch.tensor(a), bins, weight=torch.tensor(w))
        hg = tg.histogram(tg.tensor(a), bins, weight=tg.tensor(w))
        np.testing.assert_allclose(hg[0].numpy(), ht[0].numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(hg[1].numpy(), ht[1].numpy())


@pytest.mark.parametrize("name", ["logsumexp", "nanmean", "sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dim", [0, -1, (0,)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_zero_dim_reductions_over_dim(name, dim, keepdim):
    t, g = _pair((), 6)
    rt = getattr(torch, name)(t, dim, keepdim=keepdim)
    rg = getattr(tg, name)(g, dim, keepdim=keepdim)
    assert tuple(rg.shape) == tuple(rt.shape)
    np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-12)
    rt.backward()
    rg.backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "bool"])
def test_logsumexp_integer_gives_default_float(dtype):
    vals = [[1, 0, 3], [2, 2, 1]]
    rt = torch.logsumexp(torch.tensor(vals, dtype=getattr(torch, dtype)), 1)
    rg = tg.logsumexp(tg.tensor(vals, dtype=getattr(tg, dtype)), 1)
    assert _dtype_name(rg) == _dtype_name(rt)
    np.testing.assert_allclose(rg.numpy(), rt.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["trapezoid", "trapz"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "float64", "float32"])
@pytest.mark.parametrize("kw", [{}, {"dx": 2}, {"dx": 0.5}, {"x": [1, 4, 9, 10]}, {"dim": 0}])
def test_trapezoid_as_torch(name, dtype, kw):
    vals = [[10, 200, 3, 90], [250, 1, 7, 120], [4, 5, 6, 255]]
    if dtype == "int8":  # values that wrap in int8 sums
        vals = [[10, 100, 3, 90], [120, -1, 7, 120], [4, -128, 6, 127]]

    def run(L):
        k = dict(kw)
        if "x" in k:
            k["x"] = L.tensor(k["x"], dtype=getattr(L, dtype))
        return getattr(L, name)(L.tensor(vals, dtype=getattr(L, dtype)), **k)
    rt, rg = run(torch), run(tg)
    assert _dtype_name(rg) == _dtype_name(rt)
    np.testing.assert_allclose(rg.numpy(), rt.numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape,dim", [((4, 5), -1), ((3, 1), -1), ((2, 6), 0), ((3, 0), 0)])
def test_trapezoid_gradients(shape, dim):
    t, g = _pair(shape, 7)
    xs = np.sort(np.random.default_rng(8).standard_normal(shape[dim]))
    for kw in ({}, {"dx": 0.3}, {"x": xs}):
        kt = {k: torch.tensor(v) if k == "x" else v for k, v in kw.items()}
        kg = {k: tg.tensor(v) if k == "x" else v for k, v in kw.items()}
        rt, rg = torch.trapezoid(t, dim=dim, **kt), tg.trapezoid(g, dim=dim, **kg)
        np.testing.assert_allclose(rg.detach().numpy(), rt.detach().numpy(), rtol=1e-12, atol=1e-14)
        w = np.random.default_rng(9).standard_normal(tuple(rt.shape))
        gt, = torch.autograd.grad((rt * torch.tensor(w)).sum(), t)
        gg, = tg.autograd.grad((rg * tg.tensor(w)).sum(), g)
        np.testing.assert_allclose(gg.numpy(), gt.numpy(), rtol=1e-12, atol=1e-14)


# ---- quantile's gradient w.r.t. q (linear interpolation: (b - a) * (n - 1)) ------------
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "midpoint"])
@pytest.mark.parametrize("qv,dim", [([0.3], None), ([0.1, 0.55, 0.9], 1), (0.7, 0)])
def test_quantile_gradient_of_q(name, interpolation, qv, dim):
    x0 = np.random.default_rng(7).standard_normal((4, 5))
    x0[1, 2] = np.nan if name == "nanquantile" else x0[1, 2]
    grads = []
    for L in (torch, tg):
        x = L.tensor(x0, requires_grad=True)
        q = L.tensor(qv, dtype=L.float64, requires_grad=True)
        y = getattr(L, name)(x, q, dim=dim, interpolation=interpolation)
        L.nan_to_num(y * L.arange(1, y.numel() + 1, dtype=L.float64).view(y.shape)).sum() \
            .backward()
        grads.append((x.grad.numpy(), None if q.grad is None else q.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-10, atol=1e-12)
    if grads[0][1] is None:  # the rounded interpolations: q is not in torch's graph
        assert grads[1][1] is None
    else:
        np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-10, atol=1e-12)


def test_quantile_gradcheck_q():
    x = tg.tensor(np.random.default_rng(8).standard_normal((3, 6)))
    q = tg.tensor([0.23, 0.65], dtype=tg.float64, requires_grad=True)  # (not at a kink)
    assert tg.autograd.gradcheck(lambda q: tg.quantile(x, q, dim=1), (q,))

"""lgamma, digamma, polygamma, mvlgamma and the tapegrad.special namespace against torch:
values (float64 tight, float32, float16), first and second derivatives, gradcheck.

polygamma(n >= 1) (trigamma: digamma's derivative, lgamma's second) is compared at
rtol 1e-8: torch's own kernel is off by up to ~5e-10 relative (SciPy, which tapegrad
uses, agrees with mpmath to 1e-15: polygamma(1, 0.3) = 12.245364546107732)."""
import numpy as np
import pytest
import torch

import tapegrad as tg

TRI = dict(rtol=1e-8, atol=1e-10)
RNG = np.random.default_rng(0)
# away from the poles at 0, -1, -2, ... (negative non-integers included)
X = np.concatenate([RNG.uniform(0.05, 12, 20), RNG.uniform(-4.9, -0.1, 10) + 0.03,
                    [1.0, 2.0, 0.5, 100.0, 1e-3]])


def _pair(fn_t, fn_g, x, **tol):
    want = fn_t(torch.tensor(x)).numpy()
    got = fn_g(tg.tensor(x)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
@pytest.mark.parametrize("dtype,tol", [("float64", dict(rtol=1e-12, atol=1e-12)),
                                       ("float32", dict(rtol=1e-5, atol=1e-5)),
                                       ("float16", dict(rtol=2e-3, atol=2e-3))])
def test_values(name, dtype, tol):
    x = X.astype(dtype)
    x = x[np.abs(x - np.round(x)) > 0.01] if dtype == "float16" else x  # float16 near poles
    _pair(getattr(torch, name), getattr(tg, name), x, **tol)
    _pair(lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), x, **tol)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma_values(n):
    _pair(lambda t: torch.polygamma(n, t), lambda t: tg.polygamma(n, t), X, **TRI)
    _pair(lambda t: t.polygamma(n), lambda t: t.polygamma(n), X, **TRI)


def test_edges_match_torch():
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-300])
    for name in ("lgamma", "digamma"):
        _pair(getattr(torch, name), getattr(tg, name), x, rtol=1e-12)
    _pair(torch.lgamma, tg.lgamma, np.array([1, 2, 5]))  # integers: default float dtype
    assert tg.lgamma(tg.zeros(0, 3)).shape == (0, 3)
    assert tg.lgamma(tg.tensor(3.0)).shape == ()


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma1", "mvlgamma3"])
def test_first_and_second_derivatives(name):
    x = np.abs(X[:12]) + 1.5
    fns = {"lgamma": lambda L, t: L.lgamma(t), "digamma": lambda L, t: L.digamma(t),
           "polygamma1": lambda L, t: L.polygamma(1, t),
           "mvlgamma3": lambda L, t: L.mvlgamma(t, 3)}
    out = []
    for L in (torch, tg):
        t = L.tensor(x, requires_grad=True)
        y = fns[name](L, t)
        w = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        g, = L.autograd.grad((y * w).sum(), t, create_graph=True)
        h, = L.autograd.grad(g.sum(), t)
        out.append((y.detach().numpy(), g.detach().numpy(), h.numpy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, **TRI)


def test_gradcheck():
    x = tg.tensor(np.abs(X[:6]) + 0.7, requires_grad=True)
    assert tg.autograd.gradcheck(lambda t: tg.lgamma(t) + tg.digamma(t) + tg.polygamma(2, t),
                                 (x,))


def test_mvlgamma_edges_and_refusals_like_torch():
    # torch 2.13 gives inf at lgamma's poles (no "(p-1)/2" refusal) and takes integers
    _pair(lambda t: torch.mvlgamma(t, 3), lambda t: tg.mvlgamma(t, 3), np.array([0.5, 2.0]))
    _pair(lambda t: torch.mvlgamma(t, 1), lambda t: tg.mvlgamma(t, 1), np.array([3, 4]),
          rtol=1e-6)
    for L in (torch, tg):
        with pytest.raises(RuntimeError):
            L.polygamma(-1, L.tensor([1.0]))


def test_inplace_and_out():
    a = np.array([0.5, 2.5, 7.0])
    for name in ("lgamma", "digamma"):
        t, g = torch.tensor(a), tg.tensor(a)
        getattr(t, name + "_")()
        getattr(g, name + "_")()
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)
    t, g = torch.tensor(a), tg.tensor(a)
    t.polygamma_(1)
    g.polygamma_(1)
    np.testing.assert_allclose(g.numpy(), t.numpy(), **TRI)
    out = tg.empty(3, dtype=tg.float64)
    tg.lgamma(tg.tensor(a), out=out)
    np.testing.assert_allclose(out.numpy(), torch.lgamma(torch.tensor(a)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,args", [
    ("gammaln", ()), ("psi", ()), ("digamma", ()), ("expit", ()), ("logit", ()),
    ("erf", ()), ("erfc", ()), ("erfinv", ()), ("expm1", ()), ("exp2", ()), ("log1p", ()),
    ("sinc", ()), ("round", ()), ("softmax", (0,)), ("log_softmax", (0,)),
    ("logsumexp", (0,)), ("multigammaln", (2,))])
def test_special_namespace(name, args):
    a = np.array([0.6, 0.25, 0.9, 0.75]) + (1.0 if name == "multigammaln" else 0.0)
    want = getattr(torch.special, name)(torch.tensor(a), *args).numpy()
    got = getattr(tg.special, name)(tg.tensor(a), *args).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_special_polygamma_and_xlogy():
    a = np.array([0.6, 2.5])
    np.testing.assert_allclose(tg.special.polygamma(2, tg.tensor(a)).numpy(),
                               torch.special.polygamma(2, torch.tensor(a)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tg.special.xlogy(tg.tensor(a), tg.tensor(a)).numpy(),
                               torch.special.xlogy(torch.tensor(a), torch.tensor(a)).numpy())

"""torch.special's Bessel family, normal distribution, entr, erfcx, xlog1py, zeta, the
incomplete gamma (igamma/igammac) and the orthogonal polynomials against torch: values in
float64/float32/float16 and at the edges (0, +-inf, nan, poles), integer and bool inputs,
dtypes, out=, the Tensor methods and in-place forms, gradients (first and second order,
gradcheck) where torch has a formula, torch's refusals where it has none.

Where torch's own kernel is the less accurate one the comparison says so: float64
bessel_j0/j1/y0/y1 near x ~ 5-10 (torch off by up to ~7e-7; SciPy, which tapegrad uses,
agrees with mpmath), airy_ai at x = -3.5 (~4e-10 relative), igammac for tiny a (torch
drops Euler's constant: Q(a, x) ~ a*E1(x)), P(30, 30) (~6e-10). The float32 Chebyshev
polynomials inside (-1, 1) above degree ~8 (cos(n*acos(x)) in float32) differ from torch's
by the C library's last-ulp rounding of acosf/cosf, amplified by n."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.core.names import node_name
from _helpers import assert_raises_as_torch, assert_same_result

F64 = dict(rtol=1e-10, atol=1e-12)
EDGES = np.array([-np.inf, -50., -10., -3.5, -1., -0.5, -0.0, 0.0, 1e-300, 1e-8, 0.3, 1.,
                  3.7, 8., 8.5, 30., 100., 700., 800., np.inf, np.nan])
WITH_GRAD = ["i0", "special.i0", "special.i0e", "special.i1", "special.i1e", "special.entr",
             "special.erfcx", "special.ndtr", "special.ndtri", "special.log_ndtr"]
NO_GRAD = ["special.modified_bessel_i0", "special.modified_bessel_i1",
           "special.modified_bessel_k0", "special.modified_bessel_k1",
           "special.scaled_modified_bessel_k0", "special.scaled_modified_bessel_k1",
           "special.bessel_j0", "special.bessel_j1", "special.bessel_y0", "special.bessel_y1",
           "special.spherical_bessel_j0", "special.airy_ai"]
# torch's float64 ordinary Bessel kernels are off by up to ~7e-7 near x ~ 5-10, its airy_ai
# by ~4e-10 relative at x = -3.5 (tapegrad's SciPy values agree with mpmath there)
LOOSE = {"special.bessel_j0", "special.bessel_j1", "special.bessel_y0", "special.bessel_y1",
         "special.airy_ai"}
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


def _fn(lib, name):
    obj = lib
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _both(name, *arrays, **kw):
    """(tapegrad result, torch result) of `name` on the same arrays."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _fn(tg, name)(*[tg.tensor(a) if isinstance(a, np.ndarray) else a
                              for a in arrays], **kw)
        want = _fn(torch, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a
                                  for a in arrays], **kw)
    return got, want


def _same(got, want, rtol, atol=0.0):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy().astype(np.float64),
                               want.detach().numpy().astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)


# ---- values ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", WITH_GRAD + NO_GRAD)
def test_unary_values_float64_edges(name):
    got, want = _both(name, EDGES)
    _same(got, want, rtol=1e-5 if name in LOOSE else 1e-12, atol=1e-300)


@pytest.mark.parametrize("name", WITH_GRAD + NO_GRAD)
def test_unary_values_float32(name):
    x = np.random.default_rng(1).uniform(-6, 6, (4, 5)).astype(np.float32)
    x = np.abs(x) + 0.1 if "k0" in name or "k1" in name or "y0" in name or "y1" in name \
        or name == "special.entr" else x
    x = (x - x.min()) / (x.max() - x.min()) * 0.98 + 0.01 if name == "special.ndtri" else x
    got, want = _both(name, x)
    _same(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["i0", "special.i0e", "special.i1", "special.i1e",
                                  "special.entr", "special.ndtr"])
def test_float16_computed_in_float32(name):
    x = np.linspace(0.05, 4, 41).astype(np.float16)
    got, want = _both(name, x)
    # ndtr is torch's composite (1 + erf(x/sqrt 2))/2 step by step in float16: bit for bit
    _same(got, want, rtol=0 if name == "special.ndtr" else 1e-3, atol=0)


@pytest.mark.parametrize("name", WITH_GRAD + NO_GRAD)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_integer_inputs_promote_to_the_default_dtype(name, dtype):
    if name == "special.ndtri" and dtype is not np.bool_:
        x = np.array([0, 1, 0, 1], dtype=dtype)
    else:
        x = np.array([0, 1, 2, 5] if dtype is not np.bool_ else [True, False, True, True],
                     dtype=dtype)
    got, want = _both(name, x)
    _same(got, want, rtol=1e-5 if name in LOOSE else 1e-6)
    assert got.dtype == tg.float32


@pytest.mark.parametrize("name", WITH_GRAD + NO_GRAD)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 0, 3), (1, 1, 1)])
def test_shapes(name, shape):
    x = np.full(shape, 0.7)
    got, want = _both(name, x)
    _same(got, want, rtol=1e-12)


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc",
                                  "special.gammaincc", "special.zeta", "special.xlog1py"])
def test_binary_values_edges(name):
    a, x = np.meshgrid(EDGES, EDGES)
    got, want = _both(name, a, x)
    if "gamma" in name:
        # torch drops Euler's constant for tiny a (Q(a, x) ~ a*E1(x)): Q(1e-8, 0.3) =
        # 9.05676653296e-09 in SciPy (tapegrad) and mpmath, 9.05676656804e-09 in torch,
        # and off by a factor ~2 at a = 1e-300; at a, x ~ 30-100 torch's series is off by
        # ~6e-10 relative (P(30, 30) = 0.52428301389368 in SciPy and mpmath, torch
        # 0.5242830135558)
        keep = np.broadcast_to(a > 1e-8, a.shape)
        g, w = got.numpy()[keep], want.numpy()[keep]
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-300, equal_nan=True)
        assert got.dtype == tg.float64
    else:
        _same(got, want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.zeta", "special.xlog1py"])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float32", "float64"),
                                    ("int64", "int64"), ("int32", "float32"),
                                    ("bool", "int64")])
def test_binary_promotion(name, dtypes):
    a = np.array([1, 2, 3, 0] if dtypes[0] != "bool" else [True, False, True, True],
                 dtype=dtypes[0])
    x = np.array([2, 3, 5, 1], dtype=dtypes[1])
    try:
        want = _fn(torch, name)(torch.tensor(a), torch.tensor(x))
    except RuntimeError:  # igamma of integers: NotImplementedError (a RuntimeError)
        assert_raises_as_torch(lambda lib: _fn(lib, name)(lib.tensor(a), lib.tensor(x)), tg,
                               chars=0)
        return
    got = _fn(tg, name)(tg.tensor(a), tg.tensor(x))
    _same(got, want, rtol=1e-6)


@pytest.mark.parametrize("name", ["special.zeta", "special.xlog1py"])
def test_binary_numbers(name):
    x = np.array([1.5, 2.5, 4.0])
    for args in [(x, 2.0), (3.0, x), (x, 2)]:
        got, want = _both(name, *args)
        _same(got, want, rtol=1e-12)
    assert_raises_as_torch(lambda lib: _fn(lib, name)(2.0, 3.0), tg, chars=0)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_refuses_numbers(name):
    t = np.array([1.0, 2.0])
    assert_raises_as_torch(lambda lib: _fn(lib, name)(lib.tensor(t), 2.0), tg, chars=0)
    assert_raises_as_torch(lambda lib: _fn(lib, name)(2.0, lib.tensor(t)), tg, chars=0)


def test_binary_broadcasting_and_empty():
    a = np.random.default_rng(2).uniform(0.5, 3, (4, 1, 3))
    x = np.random.default_rng(3).uniform(0.5, 3, (2, 1))
    for name in ["igamma", "igammac", "special.zeta", "special.xlog1py"]:
        got, want = _both(name, a + 1, x)
        _same(got, want, rtol=1e-12)
        got, want = _both(name, np.ones((0, 1, 3)), np.ones((0, 2, 3)))
        _same(got, want, rtol=0)


# ---- polynomials -------------------------------------------------------------------------
POINTS = np.array([-2.0, -1.3, -1.0, -0.999, -0.7, -0.2, 0.0, 1e-9, 0.3, 0.5, 0.9, 1.0,
                   1.2, 3.0, np.inf, -np.inf])
DEGREES = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 20, 33])


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_float64_int_degrees(name):
    got, want = _both("special." + name, POINTS[:, None], DEGREES)
    _same(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_float_degrees_are_truncated(name):
    n = np.array([2.7, -0.5, 5.99, 9.2, 0.3, -2.5])
    got, want = _both("special." + name, POINTS[:, None], n)
    _same(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("n", [0, 3, 7, 11, 3.9])
def test_polynomial_number_degree(name, n):
    got, want = _both("special." + name, POINTS, n)
    _same(got, want, rtol=1e-10, atol=1e-12)
    got, want = _both("special." + name, POINTS.astype(np.float32), n)
    _same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_number_x_and_dtypes(name):
    n = np.array([0, 1, 4, 6])
    got, want = _both("special." + name, 0.3, n)  # x a number: n's tensor decides
    _same(got, want, rtol=1e-6)
    for xd, nd in [("float32", "int64"), ("int64", "int64"), ("int32", "float64"),
                   ("float32", "float64"), ("bool", "int64")]:
        x = np.array([0, 1, 1, 0]).astype(xd)
        got, want = _both("special." + name, x, n.astype(nd))
        _same(got, want, rtol=1e-6)
    assert_raises_as_torch(lambda lib: _fn(lib, "special." + name)(2.0, 3), tg, chars=0)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_float32(name):
    # the recurrence with torch's fused multiply-subtract: torch's float32 values to the
    # bit, cancellation included (below the trigonometric form's degrees)
    x = np.linspace(-3.1, 3.1, 63).astype(np.float32)[:, None]
    n = np.array([0, 1, 2, 3, 4], dtype=np.float32)  # shifted W: closed form above 4
    got, want = _both("special." + name, x, n)
    _same(got, want, rtol=0, atol=0)
    # the closed forms inside (-1, 1): acosf/cosf's last ulp, amplified by the degree
    x = np.linspace(-0.95, 0.95, 39).astype(np.float32)[:, None]
    got, want = _both("special." + name, x, np.array([9, 12, 20], dtype=np.float32))
    _same(got, want, rtol=2e-4, atol=2e-5)


def test_hermite_degree_limits():
    # torch returns nan beyond degree 128 (float32) / 512 (float64)
    for name in ["hermite_polynomial_h", "hermite_polynomial_he"]:
        for x, n in [(np.array([0.1], np.float32), 129), (np.array([0.1]), 513),
                     (np.array([0.1]), 200)]:
            got, want = _both("special." + name, x, n)
            _same(got, want, rtol=1e-8)


# ---- methods, in-place, out= ---------------------------------------------------------------
def test_tensor_methods_and_inplace():
    x = np.array([0.5, 1.5, -2.0])
    y = np.array([1.0, 2.0, 0.5])
    assert_same_result(tg.tensor(x).i0(), torch.tensor(x).i0(), rtol=1e-12)
    assert_same_result(tg.tensor(x).abs().igamma(tg.tensor(y)),
                       torch.tensor(x).abs().igamma(torch.tensor(y)), rtol=1e-12)
    assert_same_result(tg.tensor(x).abs().igammac(tg.tensor(y)),
                       torch.tensor(x).abs().igammac(torch.tensor(y)), rtol=1e-12)
    for method in ["i0_"]:
        g, t = tg.tensor(x), torch.tensor(x)
        assert getattr(g, method)() is g
        getattr(t, method)()
        assert_same_result(g, t, rtol=1e-12)
    g, t = tg.tensor(x), torch.tensor(x)
    tg.i0_(g), torch.i0_(t)
    assert_same_result(g, t, rtol=1e-12)
    for method in ["igamma_", "igammac_"]:
        g, t = tg.tensor(np.abs(x)), torch.tensor(np.abs(x))
        assert getattr(g, method)(tg.tensor(y)) is g
        getattr(t, method)(torch.tensor(y))
        assert_same_result(g, t, rtol=1e-12)
    # an integer tensor cannot hold i0's float result in place
    assert_raises_as_torch(lambda lib: lib.tensor([1, 2]).i0_(), tg, chars=0)


@pytest.mark.parametrize("name,args", [("i0", (0,)), ("special.i1e", (0,)),
                                       ("special.ndtri", (1,)), ("igamma", (0, 1)),
                                       ("special.gammaincc", (0, 1)), ("special.zeta", (0, 1)),
                                       ("special.chebyshev_polynomial_t", (0, 1)),
                                       ("special.xlog1py", (0, 1)), ("special.erf", (0,)),
                                       ("special.xlogy", (0, 1)), ("special.logit", (0,)),
                                       ("special.sinc", (0,)), ("special.psi", (0,))])
def test_out(name, args):
    arrays = [np.array([0.3, 0.6]) + 1.1 * i for i in args]
    if name in ("special.ndtri", "special.logit"):
        arrays = [np.array([0.3, 0.6])]
    got_out, want_out = tg.empty(2, dtype=tg.float64), torch.empty(2, dtype=torch.float64)
    got = _fn(tg, name)(*[tg.tensor(a) for a in arrays], out=got_out)
    want = _fn(torch, name)(*[torch.tensor(a) for a in arrays], out=want_out)
    assert got is got_out
    _same(got_out, want_out, rtol=1e-12)
    assert want is want_out


# ---- gradients ---------------------------------------------------------------------------
GRAD_X = np.array([-3.2, -1.0, -0.3, 0.4, 1.1, 2.5, 6.0])


def _domain(name):
    if name in ("special.entr",):
        return np.abs(GRAD_X) + 0.2
    if name == "special.ndtri":
        return np.array([0.02, 0.2, 0.5, 0.7, 0.97])
    return GRAD_X


def _two_orders_like_torch(gy, ty, gx, tx):
    """d(sum y)/dx and its own derivative, tapegrad's as torch's (float64)."""
    (gg,) = tg.autograd.grad(gy.sum(), gx, create_graph=True)
    (tgr,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    _same(gg, tgr, **F64)
    (ggg,) = tg.autograd.grad(gg.sum(), gx)
    (tgg,) = torch.autograd.grad(tgr.sum(), tx)
    _same(ggg, tgg, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", WITH_GRAD)
def test_first_and_second_derivatives_vs_torch(name):
    x = _domain(name)
    gx = tg.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    gy, ty = _fn(tg, name)(gx), _fn(torch, name)(tx)
    _two_orders_like_torch(gy, ty, gx, tx)


@pytest.mark.parametrize("name", WITH_GRAD)
def test_gradcheck(name):
    x = tg.tensor(_domain(name), requires_grad=True)
    assert tg.autograd.gradcheck(_fn(tg, name), (x,))
    assert tg.autograd.gradgradcheck(_fn(tg, name), (x,))


@pytest.mark.parametrize("name", ["special.i1", "special.i1e"])
def test_i1_gradient_at_zero_is_torch_limit(name):
    x = np.array([0.0, -0.0, 1e-20, np.nan, 2.0])
    gx, tx = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    _fn(tg, name)(gx).sum().backward()
    _fn(torch, name)(tx).sum().backward()
    _same(gx.grad, tx.grad, **F64)


@pytest.mark.parametrize("name", ["special.entr", "special.ndtri", "special.log_ndtr",
                                  "special.erfcx"])
def test_gradient_edges(name):
    x = np.array([-1.0, -0.0, 0.0, 1.0, 1e-300, -40.0, 40.0, np.inf, -np.inf])
    gx, tx = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fn(tg, name)(gx).sum().backward()
        _fn(torch, name)(tx).sum().backward()
    _same(gx.grad, tx.grad, rtol=1e-10, atol=1e-300)


def test_xlog1py_gradients():
    x = np.array([0.0, 0.0, 1.5, -2.0, 0.0, 3.0])
    y = np.array([-1.0, -2.0, 0.5, 3.0, 0.2, -1.0])
    gx, gy = tg.tensor(x, requires_grad=True), tg.tensor(y, requires_grad=True)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tg.special.xlog1py(gx, gy).sum().backward()
        torch.special.xlog1py(tx, ty).sum().backward()
    _same(gx.grad, tx.grad, rtol=1e-12)
    _same(gy.grad, ty.grad, rtol=1e-12)
    sx = tg.tensor([0.5, 2.0], dtype=tg.float64, requires_grad=True)
    sy = tg.tensor([0.3, 1.5], dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(tg.special.xlog1py, (sx, sy))
    assert tg.autograd.gradgradcheck(tg.special.xlog1py, (sx, sy))


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.zeta"])
def test_second_argument_gradient_and_first_refused(name):
    a = np.array([1.5, 2.5, 3.0, 4.5])
    x = np.array([0.5, 2.0, 1.2, 7.0])
    ga, gx = tg.tensor(a), tg.tensor(x, requires_grad=True)
    ta, tx = torch.tensor(a), torch.tensor(x, requires_grad=True)
    gy, ty = _fn(tg, name)(ga, gx), _fn(torch, name)(ta, tx)
    assert node_name(gy.grad_fn) == type(ty.grad_fn).__name__
    _two_orders_like_torch(gy, ty, gx, tx)
    assert tg.autograd.gradcheck(lambda t: _fn(tg, name)(ga, t), (gx,))
    # torch records the op for a first argument that requires grad, and refuses its
    # backward: NotImplementedError "the derivative for '...' is not implemented."
    assert_raises_as_torch(
        lambda lib: _fn(lib, name)(lib.tensor(a, requires_grad=True),
                                   lib.tensor(x)).sum().backward(), tg, chars=60)


@pytest.mark.parametrize("name", NO_GRAD + ["special." + p for p in POLYNOMIALS])
def test_no_derivative_means_no_grad_fn(name):
    x = np.array([0.3, 0.8])
    args = (x, np.array([2.0, 3.0])) if "polynomial" in name else (x,)
    got = _fn(tg, name)(*[tg.tensor(a, requires_grad=True) for a in args])
    want = _fn(torch, name)(*[torch.tensor(a, requires_grad=True) for a in args])
    assert got.requires_grad is want.requires_grad is False
    assert got.grad_fn is None and want.grad_fn is None
    assert_raises_as_torch(lambda lib: _fn(lib, name)(
        *[lib.tensor(a, requires_grad=True) for a in args]).sum().backward(), tg, chars=20)


@pytest.mark.parametrize("name", WITH_GRAD)
def test_node_names_match_torch(name):
    x = _domain(name)
    got = _fn(tg, name)(tg.tensor(x, requires_grad=True))
    want = _fn(torch, name)(torch.tensor(x, requires_grad=True))
    assert node_name(got.grad_fn) == type(want.grad_fn).__name__


def test_namespace_has_torch_special_names():
    names = {n for n in dir(torch.special) if not n.startswith("_")} - {"Tensor", "torch",
                                                                        "common_args",
                                                                        "multi_dim_common"}
    missing = sorted(n for n in names if not hasattr(tg.special, n))
    assert not missing
    for n in ["i0e", "zeta", "chebyshev_polynomial_t", "gammainc"]:
        assert getattr(tg.special, n).__module__  # a real function, named
    assert tg.special.ndtr.__name__ == "ndtr" and tg.special.zeta.__qualname__ == "zeta"


@pytest.mark.parametrize("name", WITH_GRAD + NO_GRAD + ["special." + p for p in POLYNOMIALS]
                         + ["igamma", "igammac", "special.zeta", "special.xlog1py"])
def test_float16_where_torch_has_a_kernel(name):
    """torch computes i0, i0e, i1, i1e, entr, ndtr, igamma/igammac, xlog1py in float16
    and refuses the others (NotImplementedError "..._cpu" not implemented for 'Half')."""
    x = np.array([0.5, 1.5], dtype=np.float16)
    binary = "polynomial" in name or name in ("igamma", "igammac", "special.zeta",
                                              "special.xlog1py")
    args = (x, np.array([2.0, 3.0], dtype=np.float16)) if binary else (x,)
    try:
        want = _fn(torch, name)(*[torch.tensor(a) for a in args])
    except NotImplementedError:
        assert_raises_as_torch(lambda lib: _fn(lib, name)(*[lib.tensor(a) for a in args]),
                               tg, chars=60)
        if binary:  # a float16 tensor and a number: float16 too
            assert_raises_as_torch(lambda lib: _fn(lib, name)(lib.tensor(x), 2.0), tg,
                                   chars=60)
        return
    got = _fn(tg, name)(*[tg.tensor(a) for a in args])
    _same(got, want, rtol=1e-3)

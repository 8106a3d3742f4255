"""Pointwise, product and shape functions and methods at their edges, against torch
(ops/pointwise.py, products.py, shape.py, indexing.py): the ones without a gradient
(heaviside, signbit, broadcast_shapes, resize_, scatter_reduce's prod and integer
forms), dtype results (integers promoted to float), the gradients at the special points
torch defines (xlogy at x = 0, sinc at 0, copysign at 0), the in-place forms with their
gradients, and the errors: same exception type, same message start. (Values and
gradients of the differentiable ones: the op database, tests/opdb/<family>.py.)"""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch, assert_same_result


def _both(fn, *arrays):
    """fn(lib, *tensors) in both libraries -> (tapegrad result, torch result)."""
    return (fn(tg, *[tg.tensor(a) for a in arrays]),
            fn(torch, *[torch.tensor(a) for a in arrays]))


def _version(t):
    """The version counter as a number (tapegrad keeps it in a one-element list)."""
    v = t._version
    return v if isinstance(v, int) else v[0]




INTS = np.array([[3, -1, 0], [2, 5, -4]])
VALS = np.array([-1.5, 0.0, -0.0, 2.0, np.nan])
NO_GRAD = [
    ("heaviside", lambda lib, x, v: lib.heaviside(x, v), (VALS, np.array(0.5))),
    ("heaviside int", lambda lib, x, v: x.heaviside(v), (INTS, np.array([7, 8, 9]))),
    ("signbit", lambda lib, x: lib.signbit(x), (VALS,)),
    ("signbit int", lambda lib, x: x.signbit(), (INTS,)),
    ("xlogy int", lambda lib, x: lib.xlogy(x, 3), (INTS,)),
    ("xlogy number first", lambda lib, y: lib.xlogy(2.0, y), (np.array([0.5, 3.0]),)),
    ("xlogy nan y", lambda lib, x, y: lib.xlogy(x, y), (np.array([0.0, 0.0, 1.0]),
                                                         np.array([np.nan, 2.0, 0.0]))),
    ("deg2rad int", lambda lib, x: lib.deg2rad(x), (INTS,)),
    ("rad2deg int", lambda lib, x: x.rad2deg(), (INTS,)),
    ("sinc int", lambda lib, x: lib.sinc(x), (INTS,)),
    ("exp2 int", lambda lib, x: lib.exp2(x), (INTS,)),
    ("logit int", lambda lib, x: lib.logit(x), (INTS,)),
    ("copysign int", lambda lib, x: lib.copysign(x, -1), (INTS,)),
    ("copysign zeros", lambda lib, x, y: lib.copysign(x, y), (np.array([0.0, -0.0, 1.0]),
                                                             np.array([-1.0, 1.0, -0.0]))),
    ("fmax nan", lambda lib, x, y: lib.fmax(x, y), (np.array([np.nan, 1.0, np.nan]),
                                                   np.array([2.0, np.nan, np.nan]))),
    ("fmin int", lambda lib, x, y: lib.fmin(x, y), (INTS, INTS[::-1].copy())),
    ("fmin int float", lambda lib, x, y: x.fmin(y), (INTS, np.array([0.5, -2.0, 9.0]))),
    ("true_divide int", lambda lib, x: x.true_divide(2), (INTS,)),
    ("combinations r=0", lambda lib, x: lib.combinations(x, 0), (np.array([1.0, 2.0]),)),
    ("combinations r>n", lambda lib, x: lib.combinations(x, 4), (np.array([1, 2, 3]),)),
    ("block_diag dtypes", lambda lib, a, b: lib.block_diag(a, b), (np.array([1, 2]),
                                                                   np.array([[0.5], [1.5]]))),
    ("inner 0-d", lambda lib, a, b: lib.inner(a, b), (np.array(2.0), np.ones((2, 3)))),
    ("cummax int", lambda lib, x: tuple(lib.cummax(x, 1)), (np.array([[1, 3, 3, 2], [4, 1, 4, 0]]),)),
    ("cummin ties", lambda lib, x: tuple(x.cummin(0)), (np.array([2.0, 1.0, 1.0, 3.0, 1.0]),)),
    ("cummax nan", lambda lib, x: tuple(lib.cummax(x, 0)), (np.array([1.0, np.nan, 5.0, np.nan, 0.0]),)),
    ("cummax empty", lambda lib, x: tuple(lib.cummax(x, 1)), (np.ones((2, 0)),)),
    ("aminmax int", lambda lib, x: tuple(lib.aminmax(x)), (INTS,)),
    ("aminmax keepdim", lambda lib, x: tuple(x.aminmax(keepdim=True)), (INTS,)),
    ("aminmax dim", lambda lib, x: tuple(lib.aminmax(x, dim=0)), (INTS,)),
    ("aminmax empty dim", lambda lib, x: tuple(lib.aminmax(x, dim=1)), (np.ones((0, 3)),)),
    ("fill_diagonal_ int", lambda lib, x: x.fill_diagonal_(7), (INTS,)),
    ("fill_diagonal_ tall wrap", lambda lib, x: x.fill_diagonal_(-1, wrap=True), (np.zeros((8, 3)),)),
    ("fill_diagonal_ tall", lambda lib, x: x.fill_diagonal_(-1), (np.zeros((8, 3)),)),
    ("fill_diagonal_ 3-d", lambda lib, x: x.fill_diagonal_(2), (np.zeros((3, 3, 3)),)),
    ("as_strided int", lambda lib, x: x.as_strided((2, 2), (3, 1)), (INTS,)),
    ("as_strided offset", lambda lib, x: lib.as_strided(x, (2,), (2,), 2), (INTS,)),
    ("split_with_sizes", lambda lib, x: lib.split_with_sizes(x, [1, 1], 0), (INTS,)),
    ("atleast_1d list", lambda lib, a, b: lib.atleast_1d([a, b]), (np.array(1), np.ones(2))),
    ("vdot", lambda lib, a, b: lib.vdot(a, b), (np.array([1, 2]), np.array([3, 4]))),
]
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        _fn = (lambda r, i: lambda lib, x, s: x.scatter_reduce(
            1, lib.tensor([[0, 0, 2], [1, 1, 1]]), s, r, include_self=i))(_red, _inc)
        NO_GRAD.append((f"scatter_reduce {_red} int include_self={_inc}", _fn,
                        (INTS, np.array([[5, 6, 7], [8, 9, -10]]))))
        NO_GRAD.append((f"scatter_reduce {_red} float include_self={_inc}", _fn,
                        (INTS.astype(float), np.array([[5.5, 6.0, 7.0], [-8.0, 9.0, 1.5]]))))


@pytest.mark.parametrize("name,fn,arrays", NO_GRAD, ids=[n for n, _, _ in NO_GRAD])
def test_functions_without_gradient(name, fn, arrays):
    got, want = _both(fn, *arrays)
    assert_same_result(got, want)


def test_broadcast_shapes():
    for shapes in [((2, 1), (3,)), ((2, 1), 4), (), ((1,), (5, 1, 1)), ([3, 1], torch.Size([2, 1, 4]))]:
        got, want = tg.broadcast_shapes(*shapes), torch.broadcast_shapes(*shapes)
        assert type(got).__name__ == "Size" and tuple(got) == tuple(want)


def test_resize_shrink_grow_and_version():
    for lib in (tg, torch):
        x = lib.arange(6.0)
        v = _version(x)
        x.resize_(2, 2)
        assert tuple(x.shape) == (2, 2) and _version(x) > v
        np.testing.assert_array_equal(x.numpy(), [[0.0, 1.0], [2.0, 3.0]])
        x.resize_(6)  # the storage kept its elements: torch's values come back
        np.testing.assert_array_equal(x.numpy(), np.arange(6.0))
        x.resize_as_(lib.ones(3, 1))
        np.testing.assert_array_equal(x.numpy(), [[0.0], [1.0], [2.0]])
    y = tg.ones(2, dtype=tg.int64)
    y.resize_((2, 3))  # grown past its storage: the first elements kept
    assert y.dtype == tg.int64 and tuple(y.shape) == (2, 3)
    np.testing.assert_array_equal(y.numpy().reshape(-1)[:2], [1, 1])
    z = tg.ones(2, 2)
    tg.resize_as_(z, tg.ones(3))
    assert tuple(z.shape) == (3,)


# ---- gradients at the points where torch defines them ---------------------------------
SPECIAL = [
    ("xlogy at x=0", lambda lib, x, y: lib.xlogy(x, y), ([0.0, 1.0, 0.0], [2.0, 3.0, 0.5])),
    ("sinc at 0", lambda lib, x, y: lib.sinc(x) * y, ([0.0, 0.5, -1.25], [1.0, 2.0, 3.0])),
    ("copysign at 0", lambda lib, x, y: lib.copysign(x, y), ([0.0, -2.0, 3.0], [-1.0, 1.0, -1.0])),
    ("fmax tie", lambda lib, x, y: lib.fmax(x, y), ([1.0, np.nan, 2.0], [1.0, 3.0, np.nan])),
    ("fmin tie", lambda lib, x, y: lib.fmin(x, y), ([1.0, np.nan, 2.0], [1.0, 3.0, np.nan])),
    ("hypot", lambda lib, x, y: lib.hypot(x, y), ([3.0, -1.0], [4.0, 0.0])),
    ("logit eps outside", lambda lib, x, y: lib.logit(x, eps=0.25) * y, ([0.1, 0.5, 0.9], [1.0, 1.0, 1.0])),
    ("scatter_reduce amax ties", lambda lib, x, y: x.scatter_reduce(
        0, lib.tensor([0, 0, 1]), y, "amax"), ([2.0, 1.0, 0.0], [2.0, 2.0, 0.5])),
    ("scatter_reduce amin ties exclude", lambda lib, x, y: x.scatter_reduce(
        0, lib.tensor([0, 0, 1]), y, "amin", include_self=False), ([2.0, 1.0, 0.0], [2.0, 2.0, 0.5])),
    ("scatter_reduce mean", lambda lib, x, y: x.scatter_reduce(
        0, lib.tensor([0, 0, 2]), y, "mean"), ([2.0, 1.0, 0.0], [2.0, 2.0, 0.5])),
    ("cummax ties", lambda lib, x, y: lib.cummax(x * y, 0).values, ([1.0, 3.0, 3.0], [1.0, 1.0, 1.0])),
    ("aminmax ties", lambda lib, x, y: lib.aminmax(x + y).max, ([1.0, 3.0, 3.0], [0.0, 0.0, 0.0])),
    ("renorm", lambda lib, x, y: lib.renorm(lib.stack([x, y]), 2, 0, 1.0), ([3.0, 4.0, 0.0], [0.1, 0.2, 0.3])),
]


@pytest.mark.parametrize("name,fn,arrays", SPECIAL, ids=[n for n, _, _ in SPECIAL])
def test_gradients_at_special_points(name, fn, arrays):
    res = []
    for lib in (tg, torch):
        x, y = (lib.tensor(np.array(a), requires_grad=True) for a in arrays)
        out = fn(lib, x, y)
        out.backward(lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape))))
        res.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True)


# ---- in place: values, the version counter and gradients as torch --------------------
INPLACE = [
    ("xlogy_", lambda lib, x, s: x.xlogy_(s.abs() + 0.5)),
    ("hypot_", lambda lib, x, s: x.hypot_(s)),
    ("copysign_", lambda lib, x, s: x.copysign_(s)),
    ("deg2rad_", lambda lib, x, s: x.deg2rad_() * s),
    ("rad2deg_", lambda lib, x, s: x.rad2deg_() * s),
    ("sinc_", lambda lib, x, s: x.sinc_() * s),
    ("exp2_", lambda lib, x, s: x.exp2_() * s),
    ("logit_", lambda lib, x, s: x.mul_(0.1).add_(0.5).logit_(eps=0.3) * s),
    ("renorm_", lambda lib, x, s: x.renorm_(2, 0, 3.0) * s),
    ("true_divide_", lambda lib, x, s: x.true_divide_(s.abs() + 1)),
    ("addmv_", lambda lib, x, s: x[0].addmv_(s.t(), s[:, 0], beta=0.5, alpha=2.0)),
    ("addr_", lambda lib, x, s: x.addr_(s[:, 0], s[0], alpha=-1.0)),
    ("baddbmm_", lambda lib, x, s: x.unsqueeze(0).baddbmm_(s[None, :, :2], s[None, :2, :])),
    ("addbmm_", lambda lib, x, s: x.addbmm_(s[None, :, :2], s[None, :2, :], beta=2.0)),
    ("scatter_reduce_ sum", lambda lib, x, s: x.scatter_reduce_(
        1, lib.tensor([[0, 0, 2], [1, 2, 1]]), s, "sum")),
    ("scatter_reduce_ amax", lambda lib, x, s: x.scatter_reduce_(
        1, lib.tensor([[0, 0, 2], [1, 2, 1]]), s, "amax", include_self=False)),
    ("fill_diagonal_", lambda lib, x, s: x.fill_diagonal_(0.5) * s),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_forms_values_and_gradients(name, fn):
    rng = np.random.default_rng(0)
    a, s = rng.uniform(-3, 3, (2, 3)), rng.uniform(-3, 3, (2, 3))
    res = []
    for lib in (tg, torch):
        x0 = lib.tensor(a, requires_grad=True)
        src = lib.tensor(s, requires_grad=True)
        x = x0 * 2  # a non-leaf: in place on it keeps the history
        v = _version(x)
        out = fn(lib, x, src)
        assert _version(x) > v
        (out * lib.tensor(np.arange(float(out.numel())).reshape(tuple(out.shape)))).sum().backward()
        res.append((out.detach().numpy(), x0.grad.numpy(), src.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def test_torch_level_inplace_functions_and_aliases():
    for name in ("xlogy_", "deg2rad_", "rad2deg_", "sinc_", "exp2_", "logit_", "addmv_"):
        assert hasattr(tg, name) and hasattr(torch, name)
    x = tg.tensor([0.25, 0.5])
    assert tg.logit_(x) is x
    assert tg.nn.functional.cosine_similarity is tg.cosine_similarity
    assert tg.nn.functional.pairwise_distance is tg.pairwise_distance


# ---- errors: the same exception type and message as torch -----------------------------
ERRORS = [
    ("hypot int", lambda lib: lib.hypot(lib.tensor([1, 2]), lib.tensor([1, 2]))),
    ("hypot number", lambda lib: lib.hypot(lib.ones(2), 2.0)),
    ("heaviside dtypes", lambda lib: lib.heaviside(lib.ones(2), lib.ones(2, dtype=lib.float64))),
    ("heaviside number", lambda lib: lib.heaviside(lib.ones(2), 1.0)),
    ("fmax number", lambda lib: lib.fmax(lib.ones(2), 2.0)),
    ("fmin shapes", lambda lib: lib.fmin(lib.ones(2), lib.ones(3))),
    ("xlogy_ int", lambda lib: lib.tensor([1, 2]).xlogy_(lib.ones(2))),
    ("scatter_reduce reduce", lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "foo")),
    ("scatter_reduce float index", lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([0.0]), lib.ones(1), "sum")),
    ("scatter_reduce dtype", lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64), "sum")),
    ("scatter_reduce range", lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([3]), lib.ones(1), "amax")),
    ("scatter_reduce dims", lambda lib: lib.ones(3).scatter_reduce(0, lib.tensor([[0]]), lib.ones(1, 1), "sum")),
    ("scatter_reduce_ leaf", lambda lib: lib.ones(3, requires_grad=True).scatter_reduce_(0, lib.tensor([0]), lib.ones(1), "sum")),
    ("block_diag 3-d", lambda lib: lib.block_diag(lib.ones(2), lib.ones(2, 2, 2))),
    ("combinations 2-d", lambda lib: lib.combinations(lib.ones(2, 2))),
    ("combinations negative", lambda lib: lib.combinations(lib.ones(3), -1)),
    ("split_with_sizes sum", lambda lib: lib.ones(3).split_with_sizes([1, 1])),
    ("tensordot sizes", lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(4, 5), dims=1)),
    ("tensordot lists", lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), dims=([0, 1], [0]))),
    ("tensordot negative", lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), dims=-1)),
    ("broadcast_shapes", lambda lib: lib.broadcast_shapes((2, 3), (4,))),
    ("broadcast_shapes middle", lambda lib: lib.broadcast_shapes((3, 2), (2, 2), (1,))),
    ("broadcast_shapes negative", lambda lib: lib.broadcast_shapes((2, -1))),
    ("aminmax empty", lambda lib: lib.aminmax(lib.ones(0, 3))),
    ("aminmax empty dim", lambda lib: lib.aminmax(lib.ones(0, 3), dim=0)),
    ("cummax dim", lambda lib: lib.cummax(lib.ones(3), 1)),
    ("addmv sizes", lambda lib: lib.addmv(lib.ones(3), lib.ones(3, 2), lib.ones(3))),
    ("addr 2-d", lambda lib: lib.addr(lib.ones(3, 2), lib.ones(3, 1), lib.ones(2))),
    ("baddbmm 2-d", lambda lib: lib.baddbmm(lib.ones(3), lib.ones(3, 4), lib.ones(2, 4, 3))),
    ("inner sizes", lambda lib: lib.inner(lib.ones(2, 3), lib.ones(4))),
    ("vdot dtypes", lambda lib: lib.vdot(lib.ones(2), lib.ones(2, dtype=lib.float64))),
    ("vdot 2-d", lambda lib: lib.vdot(lib.ones(2, 1), lib.ones(2))),
    ("dist number", lambda lib: lib.dist(lib.ones(3), 2)),
    ("renorm 1-d", lambda lib: lib.renorm(lib.ones(3), 2, 0, 1.0)),
    ("renorm p", lambda lib: lib.renorm(lib.ones(3, 2), -1, 0, 1.0)),
    ("renorm maxnorm", lambda lib: lib.renorm(lib.ones(3, 2), 2, 0, -1.0)),
    ("fill_diagonal_ 1-d", lambda lib: lib.ones(3).fill_diagonal_(1)),
    ("fill_diagonal_ unequal", lambda lib: lib.ones(2, 3, 2).fill_diagonal_(1)),
    ("fill_diagonal_ leaf", lambda lib: lib.ones(2, 2, requires_grad=True).fill_diagonal_(1)),
    ("as_strided bounds", lambda lib: lib.ones(2, 3).as_strided((3, 3), (1, 1), 5)),
    ("as_strided negative", lambda lib: lib.ones(3).as_strided((2,), (-1,))),
    ("as_strided lengths", lambda lib: lib.ones(3).as_strided((2, 2), (1,))),
    ("resize_ grad", lambda lib: lib.ones(2, requires_grad=True).resize_(3)),
    ("resize_ nonleaf grad", lambda lib: (lib.ones(2, requires_grad=True) * 2).resize_(3)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_errors_as_torch(name, fn):
    assert_raises_as_torch(fn, tg)


# found by comparing more calls with torch
ERRORS_DTYPES = [
    ("cosine_similarity int", lambda lib: lib.cosine_similarity(lib.tensor([[1, 2]]), lib.tensor([[2, 3]]))),
    ("addmv dtypes", lambda lib: lib.addmv(lib.ones(2), lib.ones(2, 3), lib.ones(3, dtype=lib.float64))),
    ("tensordot dtypes", lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64), dims=1)),
    ("inner dtypes", lambda lib: lib.inner(lib.ones(3, dtype=lib.float64), lib.ones(3))),
    ("dist int", lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([3, 4]))),
    ("baddbmm input shape", lambda lib: lib.baddbmm(lib.ones(3, 3, 3), lib.ones(2, 3, 4), lib.ones(2, 4, 3))),
    ("addr input shape", lambda lib: lib.addr(lib.ones(4, 2), lib.ones(3), lib.ones(2))),
    ("baddbmm batch dtypes", lambda lib: lib.baddbmm(lib.ones(3), lib.ones(2, 3, 4), lib.ones(2, 4, 3, dtype=lib.float64))),
    ("baddbmm input dtype", lambda lib: lib.baddbmm(lib.ones(3, dtype=lib.float64), lib.ones(2, 3, 4), lib.ones(2, 4, 3))),
    ("addbmm input dtype", lambda lib: lib.addbmm(lib.ones(3, dtype=lib.float64), lib.ones(2, 3, 4), lib.ones(2, 4, 3))),
    ("resize_ negative", lambda lib: lib.ones(2).resize_(-2)),
    ("split_with_sizes negative", lambda lib: lib.ones(3).split_with_sizes([4, -1])),
    ("cosine_similarity shapes", lambda lib: lib.cosine_similarity(lib.ones(2, 3), lib.ones(2, 4))),
]


@pytest.mark.parametrize("name,fn", ERRORS_DTYPES, ids=[n for n, _ in ERRORS_DTYPES])
def test_more_errors_as_torch(name, fn):
    test_errors_as_torch(name, fn)


# as_strided reads input's storage: a transpose's or a slice's is its base's
AS_STRIDED_VIEWS = [
    ("transpose back", lambda x: x.t().as_strided((4, 3), (1, 4))),
    ("transpose window", lambda x: x.t().as_strided((2, 2), (1, 1))),
    ("slice default offset", lambda x: x[1:].as_strided((2, 2), (1, 1))),
    ("column slice", lambda x: x[1:, 1:].as_strided((3,), (1,))),
    ("outside the view", lambda x: x[1:, 1:].as_strided((2, 2), (4, 1), 0)),
    ("overlapping", lambda x: x.as_strided((3, 3), (1, 1), 2)),
]


@pytest.mark.parametrize("name,fn", AS_STRIDED_VIEWS, ids=[n for n, _ in AS_STRIDED_VIEWS])
def test_as_strided_of_views_values_and_gradients(name, fn):
    res = []
    for lib in (tg, torch):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = fn(x * 1)
        (y * lib.arange(float(y.numel())).reshape(tuple(y.shape))).sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy()))
    for g, w in zip(*res):
        np.testing.assert_array_equal(g, w)


def test_scatter_reduce_prod_with_a_zero_in_src():
    """Values as torch's; the gradient there (torch: the product of the others) is refused
    rather than given wrong (0/0 in prod / src)."""
    idx, src = [[0, 0, 1]], [[0.0, 2.0, 3.0]]
    want = torch.ones(1, 3).scatter_reduce(1, torch.tensor(idx), torch.tensor(src), "prod")
    got = tg.ones(1, 3).scatter_reduce(1, tg.tensor(idx), tg.tensor(src), "prod")
    assert_same_result(got, want)
    with pytest.raises(RuntimeError, match="zero in src"):
        tg.ones(1, 3).scatter_reduce(1, tg.tensor(idx), tg.tensor(src, requires_grad=True),
                                     "prod")


# ---- tensordot: a size-1 dim contracts with any size (torch sums the other over it) ----
@pytest.mark.parametrize("sa,sb,dims", [((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])),
                                        ((1, 3, 4), (2, 3, 5), ([0, 1], [0, 1])),
                                        ((3, 2), (3, 1), ([1], [1]))])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_tensordot_size_one_dims(sa, sb, dims, dtype):
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-3, 4, s).astype(dtype) for s in (sa, sb))
    want = torch.tensordot(torch.tensor(a), torch.tensor(b), dims=dims)
    got = tg.tensordot(tg.tensor(a), tg.tensor(b), dims=dims)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy())
    if dtype == "float64":
        ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
        ga, gb = (tg.tensor(v, requires_grad=True) for v in (a, b))
        torch.tensordot(ta, tb, dims=dims).pow(2).sum().backward()
        tg.tensordot(ga, gb, dims=dims).pow(2).sum().backward()
        np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy())
        np.testing.assert_allclose(gb.grad.numpy(), tb.grad.numpy())


# ---- kthvalue of a 0-d tensor: the element, index 0 ---------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_0d(keepdim):
    res = []
    for L in (torch, tg):
        x = L.tensor(2.5, dtype=L.float64, requires_grad=True)
        v, i = L.kthvalue(x, 1, 0, keepdim)
        (v * 3).backward()
        res.append((tuple(v.shape), float(v), tuple(i.shape), int(i), float(x.grad)))
    assert res[0] == res[1]
    with pytest.raises(RuntimeError, match="out of range"):
        tg.kthvalue(tg.tensor(2.5), 2)

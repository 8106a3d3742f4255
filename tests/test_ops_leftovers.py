"""Issue 12's leftovers, against torch: bernoulli in a graph (gradient 0), `out=` for the
functions returning (values, indices), einsum's sublist form, the in-place variants
(erf_, round_, cumprod_, nan_to_num_, square_, ...), square/reciprocal, and the reprs of
norm/conv/linear modules.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _np(t):
    return t.detach().numpy()


def _same(a, b, rtol=1e-12, atol=1e-12):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _version(t):
    v = t._version  # torch: an int; tapegrad: the shared one-element counter
    return v[0] if isinstance(v, list) else v


# ---- bernoulli -----------------------------------------------------------------------------
def test_bernoulli_of_probabilities_requiring_grad_is_in_the_graph_with_zero_gradient():
    res = {}
    for lib in (tg, torch):
        p = lib.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], requires_grad=True)
        b = lib.bernoulli(p)
        assert b.requires_grad and type(b.grad_fn).__name__ in ("BernoulliBackward0", "Node")
        (b * p * 3).sum().backward()
        res[lib] = (b, p.grad)
    _same(res[tg][0], res[torch][0])
    _same(res[tg][1], res[torch][1])  # 3 * b: bernoulli's own gradient is 0
    assert repr(tg.bernoulli(tg.tensor([1.0], requires_grad=True))).endswith(
        "grad_fn=<BernoulliBackward0>)")


def test_bernoulli_of_an_integer_tensor_is_refused_as_torch():
    with pytest.raises(RuntimeError) as e_th:
        torch.bernoulli(torch.tensor([0, 1]))
    with pytest.raises(RuntimeError) as e_tg:
        tg.bernoulli(tg.tensor([0, 1]))
    assert str(e_tg.value) == str(e_th.value)


# ---- out= with (values, indices) ------------------------------------------------------------
_X = np.array([[1.0, 5.0, 3.0, 0.5], [4.0, 2.0, 6.0, 6.5], [0.0, -1.0, 2.0, 9.0]])


@pytest.mark.parametrize("call", [
    lambda lib, x, o: lib.max(x, 1, out=o),
    lambda lib, x, o: lib.min(x, 0, out=o),
    lambda lib, x, o: lib.max(x, dim=1, keepdim=True, out=o),
    lambda lib, x, o: lib.sort(x, 1, descending=True, out=o),
    lambda lib, x, o: lib.topk(x, 2, out=o),
    lambda lib, x, o: lib.kthvalue(x, 2, 1, out=o),
    lambda lib, x, o: lib.median(x, 1, out=o),
], ids=["max", "min", "max_keepdim", "sort", "topk", "kthvalue", "median"])
@pytest.mark.parametrize("empty", [True, False], ids=["empty_out", "sized_out"])
def test_out_tuple_is_written_and_returned(call, empty):
    got = {}
    # an empty out is resized silently; a sized one has the result's shape (no warning)
    shape = (0,) if empty else tuple(call(torch, torch.tensor(_X), None)[0].shape)
    for lib in (tg, torch):
        x = lib.tensor(_X)
        v = lib.zeros(shape, dtype=lib.float64)
        i = lib.zeros(shape, dtype=lib.int64)
        r = call(lib, x, (v, i))
        assert r[0] is v and r[1] is i and r.values is v and r.indices is i
        got[lib] = (v, i)
    _same(got[tg][0], got[torch][0])
    _same(got[tg][1], got[torch][1])


def test_out_tuple_refused_when_grad_is_needed_and_for_a_single_tensor():
    x = tg.tensor(_X, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tg.max(x, 1, out=(tg.empty(0), tg.empty(0, dtype=tg.int64)))
    with pytest.raises(TypeError, match="tuple of Tensors"):
        tg.max(tg.tensor(_X), 1, out=tg.empty(0))
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.exp(tg.tensor(_X), out=(tg.empty(0),))
    # the single-tensor forms still take a tensor
    o_tg, o_th = tg.empty(0, dtype=tg.float64), torch.empty(0, dtype=torch.float64)
    _same(tg.max(tg.tensor(_X), out=o_tg), torch.max(torch.tensor(_X), out=o_th))


# ---- einsum sublist form --------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda a, b: (a, [0, 1], b, [1, 2], [0, 2]),
    lambda a, b: (a, [0, 1], b, [1, 2]),
    lambda a, b: (a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
    lambda a, b: (a, [27, 3], [3]),
    lambda a, b: (a, [30, 1]),
    lambda a, b: (a, [0, 1], a, [0, 1], [0]),
], ids=["matmul", "implicit", "ellipsis", "sum_lower", "transpose_implicit", "rowdot"])
def test_einsum_sublist_form_values_and_gradients(build):
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    res = {}
    for lib in (tg, torch):
        a, b = lib.tensor(A, requires_grad=True), lib.tensor(B, requires_grad=True)
        y = lib.einsum(*build(a, b))
        (y * y).sum().backward()
        res[lib] = (y, a.grad, b.grad)
    _same(res[tg][0], res[torch][0])
    for g_tg, g_th in zip(res[tg][1:], res[torch][1:]):
        assert (g_tg is None) == (g_th is None)
        if g_th is not None:
            _same(g_tg, g_th)


def test_einsum_sublist_bad_subscript_is_refused_as_torch():
    for lib in (tg, torch):
        with pytest.raises(ValueError, match=r"valid range \[0, 52\)"):
            lib.einsum(lib.ones(2, 3), [0, 52])


# ---- in-place variants ----------------------------------------------------------------------
_INPLACE = [
    ("erf_", (), {}), ("erfc_", (), {}), ("round_", (), {}), ("round_", (), {"decimals": 1}),
    ("nan_to_num_", (), {}), ("nan_to_num_", (1.0,), {"posinf": 7.0}), ("square_", (), {}),
    ("reciprocal_", (), {}), ("floor_", (), {}), ("ceil_", (), {}), ("trunc_", (), {}),
    ("fix_", (), {}), ("log1p_", (), {}), ("expm1_", (), {}), ("log2_", (), {}),
    ("log10_", (), {}), ("fmod_", (1.5,), {}), ("remainder_", (1.5,), {}),
    ("cumsum_", (1,), {}), ("cumprod_", (1,), {}),
    ("cumprod_", (0,), {}), ("tril_", (), {}), ("triu_", (1,), {}), ("clamp_min_", (0.5,), {}),
    ("clamp_max_", (0.5,), {}),
]


def _inplace_input(name):
    x = np.array([[0.3, 1.26, 2.5, 0.8], [1.5, 0.45, 3.0, 0.2], [2.2, 0.9, 0.05, 1.75]])
    if name == "nan_to_num_":
        x = x.copy()
        x[0, 1], x[1, 2], x[2, 0] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("name,args,kw", _INPLACE,
                         ids=[f"{n}{i}" for i, (n, _, _) in enumerate(_INPLACE)])
def test_inplace_variant_values_gradient_and_version(name, args, kw):
    res = {}
    for lib in (tg, torch):
        w = lib.tensor(_inplace_input(name), requires_grad=True)
        y = w * 1.0  # a non-leaf: in-place on it is recorded
        v0 = _version(y)
        r = getattr(y, name)(*args, **kw)
        assert r is y and _version(y) == v0 + 1
        (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4) / 100).sum().backward()
        res[lib] = (y, w.grad)
    _same(res[tg][0], res[torch][0])
    _same(res[tg][1], res[torch][1])


@pytest.mark.parametrize("name", ["erf_", "round_", "nan_to_num_", "square_", "clamp_min_",
                                  "clamp_max_", "sigmoid_", "exp_", "floor_", "reciprocal_",
                                  "fix_", "clip_", "zero_"])
def test_torch_namespace_inplace_functions(name):
    args = {"clamp_min_": (0.5,), "clamp_max_": (0.5,), "clip_": (0.1, 0.9)}.get(name, ())
    res = {}
    for lib in (tg, torch):
        x = lib.tensor([0.25, 1.5, -0.75, 2.5])
        r = getattr(lib, name)(x, *args)
        assert r is x
        res[lib] = x
    _same(res[tg], res[torch], rtol=1e-6)  # float32


def test_inplace_on_integer_tensors_follows_torch():
    for name, args in [("square_", ()), ("floor_divide_", (2,)), ("remainder_", (3,)),
                       ("cumsum_", (0,)), ("tril_", ()), ("round_", ())]:
        res = {}
        for lib in (tg, torch):
            x = lib.tensor([[7, -7], [3, 4]])
            getattr(x, name)(*args)
            res[lib] = x
        _same(res[tg], res[torch])
    for name in ["erf_", "reciprocal_", "log1p_"]:
        with pytest.raises(RuntimeError) as e_th:
            getattr(torch.tensor([1, 2]), name)()
        with pytest.raises(RuntimeError) as e_tg:
            getattr(tg.tensor([1, 2]), name)()
        assert str(e_tg.value) == str(e_th.value)


def test_inplace_on_a_leaf_requiring_grad_is_refused():
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.erf_()
    with tg.no_grad():
        x.round_()
    assert x.tolist() == [0.0, 2.0]


# ---- square / reciprocal ------------------------------------------------------------------
@pytest.mark.parametrize("values", [[1.5, -2.0, 0.25], [1, -2, 3], [True, False]],
                         ids=["float", "int", "bool"])
def test_square_and_reciprocal_values_and_dtypes(values):
    for fn in ("square", "reciprocal"):
        a, b = tg.tensor(values), torch.tensor(values)
        _same(getattr(tg, fn)(a), getattr(torch, fn)(b))
        _same(getattr(a, fn)(), getattr(b, fn)())


def test_square_gradient_and_node_name():
    res = {}
    for lib in (tg, torch):
        x = lib.tensor([1.5, -2.0, 0.25], requires_grad=True)
        y = lib.square(x)
        assert type(y.grad_fn).__name__ == "PowBackward0" or "PowBackward0" in repr(y)
        y.sum().backward()
        res[lib] = x.grad
    _same(res[tg], res[torch])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("form", ["reciprocal", "1/x", "3/x", "0.1/x", "-2.5/x", "x/0.1"])
def test_reciprocal_and_scalar_over_tensor_match_torch_bits(form, dtype):
    # torch's `s / x` is x.reciprocal() * s (Tensor.__rdiv__) and reciprocal's rule is
    # -g * ans**2: values and gradients equal bit for bit (a plain s / x differs in the last
    # bit in about a quarter of the elements, measured)
    r = np.random.default_rng(5)
    x0 = np.concatenate([r.uniform(-3, 3, 997), [1e-30, -7.0, 3.0]]).astype(dtype)
    g0 = r.standard_normal(x0.shape).astype(dtype)
    f = {"reciprocal": lambda x: x.reciprocal(), "1/x": lambda x: 1 / x,
         "3/x": lambda x: 3 / x, "0.1/x": lambda x: 0.1 / x, "-2.5/x": lambda x: -2.5 / x,
         "x/0.1": lambda x: x / 0.1}[form]
    out = {}
    for lib in (tg, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = f(x)
        y.backward(lib.tensor(g0))
        out[lib] = y.detach().numpy(), x.grad.numpy()
    for ours, theirs in zip(out[tg], out[torch]):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_reciprocal_second_order_matches_torch():
    x0 = np.array([0.5, -1.5, 2.0, 3.0])
    res = {}
    for lib in (tg, torch):
        x = lib.tensor(x0, requires_grad=True)
        (g,) = lib.autograd.grad((2.0 / x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res[lib] = g.detach().numpy(), gg.numpy()
    for ours, theirs in zip(res[tg], res[torch]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    assert tg.autograd.gradcheck(lambda x: 2.0 / x, tg.tensor(x0, requires_grad=True))
    assert tg.autograd.gradgradcheck(lambda x: x.reciprocal(), tg.tensor(x0, requires_grad=True))


# ---- module reprs -----------------------------------------------------------------------
_MODULES = [
    lambda nn: nn.BatchNorm1d(10), lambda nn: nn.BatchNorm1d(10, affine=False),
    lambda nn: nn.BatchNorm1d(10, eps=1e-3, momentum=None, track_running_stats=False),
    lambda nn: nn.BatchNorm2d(3, momentum=0.2), lambda nn: nn.LayerNorm(5),
    lambda nn: nn.LayerNorm((4, 5), elementwise_affine=False),
    lambda nn: nn.LayerNorm(5, bias=False), lambda nn: nn.LayerNorm(5, eps=1e-6),
    lambda nn: nn.GroupNorm(2, 4), lambda nn: nn.GroupNorm(2, 4, affine=False, eps=1e-3),
    lambda nn: nn.Linear(3, 4), lambda nn: nn.Linear(3, 4, bias=False),
    lambda nn: nn.Conv2d(1, 32, 3, 1),
    lambda nn: nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, bias=False),
    lambda nn: nn.Conv2d(3, 8, 3, padding="same", dilation=2, padding_mode="reflect"),
    lambda nn: nn.Conv2d(4, 8, 3, groups=2), lambda nn: nn.Conv1d(3, 8, 5, stride=2, padding=2),
    lambda nn: nn.ConvTranspose2d(8, 3, 4, 2, 1), lambda nn: nn.Embedding(10, 3, padding_idx=0),
    lambda nn: nn.LSTM(10, 20, 2), lambda nn: nn.GRU(10, 20, batch_first=True),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Dropout(0.25)),
]


@pytest.mark.parametrize("make", _MODULES, ids=[str(i) for i in range(len(_MODULES))])
def test_module_repr_matches_torch(make):
    assert repr(make(tg.nn)) == repr(make(torch.nn))


# ---- t_ / transpose_ / squeeze_ / unsqueeze_ ------------------------------------------------
def test_inplace_shape_changes_values_gradients_and_views():
    res = {}
    for lib in (tg, torch):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = x * 2
        v0 = _version(y)
        assert y.t_() is y and tuple(y.shape) == (3, 2) and _version(y) == v0 + 1
        y.unsqueeze_(0)
        shapes = [tuple(y.shape)]
        y.squeeze_()
        y.transpose_(0, 1)
        shapes.append(tuple(y.shape))
        (y * lib.arange(6.0, dtype=lib.float64).view(2, 3)).sum().backward()
        b = lib.zeros(2, 3, dtype=lib.float64) * x.sum()  # an in-place change through a view
        r = b[0]
        r.unsqueeze_(0)
        r.add_(1)
        with lib.no_grad():
            z = lib.ones(2, 3)
            z.t_()
        res[lib] = (shapes, y, x.grad, b, tuple(z.shape))
    assert res[tg][0] == res[torch][0] and res[tg][4] == res[torch][4]
    for a, b in zip(res[tg][1:4], res[torch][1:4]):
        _same(a, b)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        tg.ones(2, 3, requires_grad=True).t_()


# ---- torch.return_types ---------------------------------------------------------------------
def test_return_types_print_as_torch():
    x = [[0.1, 0.3], [0.5, 0.2]]
    calls = [lambda l, t: l.sort(t), lambda l, t: l.max(t, 1), lambda l, t: t.min(0),
             lambda l, t: l.topk(t, 1), lambda l, t: l.kthvalue(t, 1), lambda l, t: t.median(0),
             lambda l, t: l.nanmedian(t, 0), lambda l, t: l.histogram(t, 2),
             lambda l, t: l.max(t, 1, out=(l.empty(0), l.empty(0, dtype=l.long)))]
    for call in calls:
        r_tg, r_th = call(tg, tg.tensor(x)), call(torch, torch.tensor(x))
        assert repr(r_tg).replace("tapegrad.", "torch.") == repr(r_th)
        assert str(r_tg).replace("tapegrad.", "torch.") == str(r_th)
        assert type(r_tg).__name__ == type(r_th).__name__
        assert isinstance(r_tg, tuple) and len(r_tg) == len(r_th)
    assert tg.return_types.sort is type(tg.sort(tg.tensor(x)))
    assert tg.return_types.max_out.__name__ == "max_out"


# ---- the scalar-conversion warning ----------------------------------------------------------
def test_float_of_a_tensor_requiring_grad_warns_once_as_torch(monkeypatch):
    import sys
    monkeypatch.setattr(sys.modules["tapegrad._tensor"], "_SCALAR_WARNED", [])
    x = tg.tensor([1.5], requires_grad=True)
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a "
                                         "scalar may lead to unexpected behavior"):
        assert "%.1f" % x == "1.5"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        float(x), x.item(), float(tg.tensor(2.0)), int(x)  # once per process; item() never


# ---- composites: lerp, addcmul, addcdiv, addmm, mv, ravel, tile, ... -----------------------
_R = np.random.default_rng(3)
_A, _B, _C = _R.standard_normal((2, 3)), _R.standard_normal((2, 3)), _R.uniform(1, 2, (2, 3))
_M1, _M2, _V = _R.standard_normal((2, 4)), _R.standard_normal((4, 3)), _R.standard_normal(4)


@pytest.mark.parametrize("call", [
    lambda L, a, b, c, m1, m2, v: L.lerp(a, b, 0.3),
    lambda L, a, b, c, m1, m2, v: L.lerp(a, b, c * 0.5),
    lambda L, a, b, c, m1, m2, v: a.lerp(b, 0.75),
    lambda L, a, b, c, m1, m2, v: L.addcmul(a, b, c, value=-0.5),
    lambda L, a, b, c, m1, m2, v: a.addcdiv(b, c, value=2),
    lambda L, a, b, c, m1, m2, v: L.addmm(a, m1, m2),
    lambda L, a, b, c, m1, m2, v: L.addmm(a[0], m1, m2, beta=0.5, alpha=2),
    lambda L, a, b, c, m1, m2, v: L.addmm(a, m1, m2, beta=0),
    lambda L, a, b, c, m1, m2, v: L.mv(m1, v),
    lambda L, a, b, c, m1, m2, v: a.t().ravel(),
    lambda L, a, b, c, m1, m2, v: L.tile(a, (2,)),
    lambda L, a, b, c, m1, m2, v: a.tile((2, 1, 2)),
    lambda L, a, b, c, m1, m2, v: L.broadcast_tensors(a[:, :1], b[0])[0] * 2
    + L.broadcast_tensors(a[:, :1], b[0])[1],
], ids=["lerp", "lerp_tensor", "lerp_method", "addcmul", "addcdiv", "addmm", "addmm_scaled",
        "addmm_beta0", "mv", "ravel", "tile", "tile_more", "broadcast_tensors"])
def test_composites_values_and_gradients(call):
    res = {}
    for lib in (tg, torch):
        ins = [lib.tensor(a, requires_grad=True) for a in (_A, _B, _C, _M1, _M2, _V)]
        y = call(lib, *ins)
        (y * y).sum().backward()
        res[lib] = (y, [t.grad for t in ins])
    _same(res[tg][0], res[torch][0])
    for g_tg, g_th in zip(res[tg][1], res[torch][1]):
        assert (g_tg is None) == (g_th is None)
        if g_th is not None:
            _same(g_tg, g_th)


def test_isclose_count_nonzero_and_mv_errors():
    a, b = [1.0, 2.0, float("nan")], [1.0 + 1e-9, 2.1, float("nan")]
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1}):
        _same(tg.isclose(tg.tensor(a), tg.tensor(b), **kw),
              torch.isclose(torch.tensor(a), torch.tensor(b), **kw))
    m = [[0, 1, 3], [2, 0, 0]]
    for kw in ({}, {"dim": 0}, {"dim": 1}, {"dim": (0, 1)}):
        _same(tg.count_nonzero(tg.tensor(m), **kw), torch.count_nonzero(torch.tensor(m), **kw))
    with pytest.raises(RuntimeError) as e_th:
        torch.mv(torch.ones(2, 3), torch.ones(2, 3))
    with pytest.raises(RuntimeError) as e_tg:
        tg.mv(tg.ones(2, 3), tg.ones(2, 3))
    assert str(e_tg.value) == str(e_th.value)

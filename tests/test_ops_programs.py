"""Issue 12 item 4 as real programs use it, against torch: gradient clipping with
torch.linalg.norm, einsum attention, makemore's sampling with multinomial + randint,
`out=`, meshgrid, histograms, erf on a wide range at 1e-12, forward mode of the new
ops, and torch's error messages for bad calls.
"""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg


def _pair(a, requires_grad=False):
    return (tg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if isinstance(a, tg.Tensor) else np.asarray(a)
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=rtol, atol=atol)


# ---- programs ------------------------------------------------------------------------------
def _clip_program(lib, arrays):
    """The gradient-clipping step of many training loops, written against `lib`."""
    ps = [lib.tensor(a, requires_grad=True) for a in arrays]
    loss = sum((p * p).sum() * (i + 1) for i, p in enumerate(ps))
    loss.backward()
    total = lib.linalg.norm(lib.stack([lib.linalg.norm(p.grad) for p in ps]))
    scale = (1.0 / (total + 1e-6)).clamp(max=1.0)
    return total, [p.grad * scale for p in ps]


def test_gradient_clipping_with_linalg_norm():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(3, 4), (4,), (2, 2, 2)]]
    t_tg, g_tg = _clip_program(tg, arrays)
    t_th, g_th = _clip_program(torch, arrays)
    _close(t_tg, t_th)
    for a, b in zip(g_tg, g_th):
        _close(a, b)


def _attention(lib, q, k, v):
    att = lib.einsum("bhqd,bhkd->bhqk", q, k) * (1.0 / np.sqrt(q.shape[-1]))
    att = att.softmax(dim=-1)
    return lib.einsum("bhqk,bhkd->bhqd", att, v)


def test_einsum_attention_values_and_gradients():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 3, 5, 4)) for _ in range(3)]
    tgs = [tg.tensor(a, requires_grad=True) for a in arrays]
    ths = [torch.tensor(a, requires_grad=True) for a in arrays]
    y_tg, y_th = _attention(tg, *tgs), _attention(torch, *ths)
    _close(y_tg, y_th)
    w = rng.standard_normal(y_th.shape)
    (y_tg * tg.tensor(w)).sum().backward()
    (y_th * torch.tensor(w)).sum().backward()
    for a, b in zip(tgs, ths):
        _close(a.grad, b.grad)


def test_makemore_sampling_with_multinomial_and_randint():
    g = tg.Generator().manual_seed(2147483647)
    N = tg.randint(0, 10, (27, 27), generator=g).float() + 1
    P = N / N.sum(1, keepdims=True)
    ix, out = 0, []
    for _ in range(20):
        ix = tg.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
        out.append(ix)
    assert all(0 <= i < 27 for i in out)
    batch = tg.randint(0, 100, (32,), generator=g)
    assert batch.dtype == tg.int64 and tuple(batch.shape) == (32,)
    assert 0 <= int(batch.min()) and int(batch.max()) < 100
    # the same seed gives the same stream
    g2 = tg.Generator().manual_seed(2147483647)
    assert tg.equal(tg.randint(0, 10, (27, 27), generator=g2).float() + 1, N)


def test_randint_forms_match_torch_dtypes_and_shapes():
    for args, kw in [((10, (3,)), {}), ((3, 10, (2, 2)), {}), ((10,), {"size": (4,)}),
                     ((), {"high": 5, "size": (2, 3)}), ((5, (2,)), {"dtype": torch.float32}),
                     ((), {"low": 2, "high": 4, "size": (6,)})]:
        kt = dict(kw)
        if "dtype" in kt:
            kw = {**kw, "dtype": tg.float32}
        a, b = tg.randint(*args, **kw), torch.randint(*args, **kt)
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    low_high = tg.randint(2, 4, (1000,))
    assert set(np.unique(low_high.numpy())) == {2, 3}
    assert tg.randperm(5).dtype == tg.int64
    g = tg.Generator().manual_seed(0)
    assert sorted(tg.randperm(6, generator=g).tolist()) == list(range(6))


def test_bernoulli_and_bernoulli_():
    tg.manual_seed(0)
    p = tg.full((20000,), 0.3)
    d = tg.bernoulli(p)
    assert d.dtype == tg.float32 and set(np.unique(d.numpy())) <= {0.0, 1.0}
    assert abs(float(d.mean()) - 0.3) < 0.02
    x = tg.zeros(10000)
    assert x.bernoulli_(0.75) is x and abs(float(x.mean()) - 0.75) < 0.03
    assert set(np.unique(tg.bernoulli(tg.tensor([0.0, 1.0])).numpy())) == {0.0, 1.0}
    with pytest.raises(RuntimeError):
        tg.bernoulli(tg.tensor([1.5]))


def test_relu_in_place_forms():
    a, b = tg.tensor([-1.0, 2.0]), torch.tensor([-1.0, 2.0])
    assert tg.nn.functional.relu_(a) is a
    torch.nn.functional.relu_(b)
    _close(a, b)
    c = tg.tensor([-3.0, 0.5])
    assert tg.relu_(c) is c and c.tolist() == [0.0, 0.5]
    d = tg.tensor([-3.0, 0.5])
    assert tg.nn.functional.relu(d, inplace=True) is d and d.tolist() == [0.0, 0.5]


# ---- out= ---------------------------------------------------------------------------------
def test_out_writes_into_out_and_returns_it():
    for lib in (tg, torch):
        o = lib.empty(3)
        r = lib.add(lib.ones(3), 2, out=o)
        assert r is o and o.tolist() == [3.0, 3.0, 3.0]
        o = lib.empty(2, 2)
        assert lib.matmul(lib.ones(2, 3), lib.ones(3, 2), out=o) is o and o.sum().item() == 12
        assert lib.cat([lib.ones(2), lib.zeros(1)], out=o.new_empty(0)).tolist() == [1, 1, 0]
        o = lib.empty(0)
        assert lib.zeros(2, 3, out=o) is o and tuple(o.shape) == (2, 3)
        assert lib.arange(4, out=lib.empty(0, dtype=lib.int64)).tolist() == [0, 1, 2, 3]
        o = lib.empty(3, dtype=lib.float64)
        lib.exp(lib.zeros(3), out=o)
        assert o.dtype == lib.float64 and o.tolist() == [1.0, 1.0, 1.0]
        o = lib.empty(3)
        lib.add(lib.arange(3), 1, out=o)  # an integer result into a float out
        assert o.tolist() == [1.0, 2.0, 3.0]
        s = lib.empty(2)
        lib.sum(lib.ones(2, 3), 1, out=s)
        assert s.tolist() == [3.0, 3.0]
        w = lib.empty(2)
        lib.where(lib.tensor([True, False]), lib.ones(2), lib.zeros(2), out=w)
        assert w.tolist() == [1.0, 0.0]


def test_out_resizes_a_non_empty_out_with_torchs_warning():
    for lib in (tg, torch):
        o = lib.empty(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.add(lib.ones(3), 1, out=o)
        assert tuple(o.shape) == (3,) and o.tolist() == [2.0, 2.0, 2.0]
        assert any("was resized since it had shape [2]" in str(x.message) for x in w)


def test_out_refuses_autograd_and_bad_casts_like_torch():
    for lib in (tg, torch):
        x = lib.ones(3, requires_grad=True)
        for call in (lambda: lib.add(x, 1, out=lib.empty(3)),
                     lambda: lib.mul(lib.ones(3), 2, out=x),
                     lambda: lib.exp(x, out=lib.empty(3))):
            with pytest.raises(RuntimeError, match="functions with out=... arguments don't "
                                                   "support automatic differentiation"):
                call()
        with lib.no_grad():
            o = lib.empty(3)
            lib.add(x, 1, out=o)
            assert o.tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                               "desired output type Long"):
            lib.exp(lib.ones(3), out=lib.empty(3, dtype=lib.int64))


# ---- meshgrid, histograms, erf --------------------------------------------------------------
def test_meshgrid_default_warns_and_is_ij():
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a, b = lib.meshgrid(lib.arange(2), lib.arange(3))
        assert any("indexing argument" in str(x.message) for x in w)
        assert tuple(a.shape) == (2, 3) and b.tolist() == [[0, 1, 2], [0, 1, 2]]
    xs = [np.arange(3.0), np.arange(2.0) + 5, np.arange(4.0)]
    for indexing in ("ij", "xy"):
        got = tg.meshgrid(*[tg.tensor(x) for x in xs], indexing=indexing)
        want = torch.meshgrid(*[torch.tensor(x) for x in xs], indexing=indexing)
        for a, b in zip(got, want):
            _close(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histc_and_histogram_match_torch(dtype):
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(500).astype(dtype), np.array([1, 2, 2, 3, 5], dtype),
            np.full(4, 2.0, dtype), np.array([0.0, 1.0, 1.0, 3.0], dtype)]
    for a in data:
        x, t = _pair(a)
        for kw in [{}, {"bins": 4}, {"bins": 3, "min": 1, "max": 1}, {"bins": 7, "min": -1,
                                                                       "max": 2}]:
            _close(tg.histc(x, **kw), torch.histc(t, **kw), rtol=0, atol=0)
            _close(x.histc(**kw), t.histc(**kw), rtol=0, atol=0)
        for kw in [{"bins": 5}, {"bins": 3, "range": (0.0, 6.0)},
                   {"bins": 4, "density": True}]:
            h, e = tg.histogram(x, **kw)
            h2, e2 = torch.histogram(t, **kw)
            _close(h, h2, rtol=1e-6, atol=1e-7)
            _close(e, e2, rtol=1e-6, atol=1e-7)
        edges = np.array([-1.0, 0.0, 2.0, 2.5, 6.0], dtype)
        h, e = tg.histogram(x, tg.tensor(edges), weight=tg.tensor(np.ones_like(a) * 2))
        h2, e2 = torch.histogram(t, torch.tensor(edges), weight=torch.tensor(np.ones_like(a) * 2))
        _close(h, h2, rtol=0, atol=0)
        assert type(tg.histogram(x, 3)).__name__ == "histogram"
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        tg.histc(tg.arange(3))


def test_erf_family_at_float64_tolerance_1e12_on_wide_ranges():
    x = np.concatenate([np.linspace(-30, 30, 120001), np.logspace(-300, 1.4, 3000),
                        -np.logspace(-300, 1.4, 3000), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    a, t = _pair(x)
    for f in ("erf", "erfc"):
        np.testing.assert_allclose(getattr(tg, f)(a).numpy(), getattr(torch, f)(t).numpy(),
                                   rtol=1e-12, atol=1e-300, equal_nan=True)
    y = np.concatenate([np.linspace(-0.999, 0.999, 100001), [-1.0, 1.0, 1.5, np.nan]])
    a, t = _pair(y)
    np.testing.assert_allclose(tg.erfinv(a).numpy(), torch.erfinv(t).numpy(), rtol=1e-12,
                               atol=1e-300, equal_nan=True)
    for dt in (np.float32, np.float16):
        a, t = _pair(x.astype(dt))
        assert tg.erf(a).dtype == np.dtype(dt)
        np.testing.assert_allclose(tg.erf(a).numpy(), torch.erf(t).numpy(), rtol=2e-3
                                   if dt == np.float16 else 1e-6, atol=1e-6, equal_nan=True)
    assert tg.erf(tg.tensor([1, 2])).dtype == tg.float32  # integers promote like torch


# ---- forward mode of the new ops vs torch.func.jvp ------------------------------------------
_JVP_CASES = [
    ("cumprod zeros", lambda lib, x: lib.cumprod(x, 0), np.array([1.5, 0.0, 2.0, 0.0, 3.0])),
    ("cumprod", lambda lib, x: lib.cumprod(x, -1), np.array([[1.5, -0.5], [2.0, 0.25]])),
    ("einsum", lambda lib, x: lib.einsum("ij,jk->ik", x, x.T), np.arange(6.0).reshape(2, 3)),
    ("einsum diag", lambda lib, x: lib.einsum("ii->i", x), np.arange(9.0).reshape(3, 3)),
    ("norm", lambda lib, x: lib.linalg.vector_norm(x, 3, dim=1),
     np.array([[1.0, -2.0], [0.5, 3.0]])),
    ("nuc", lambda lib, x: lib.linalg.matrix_norm(x, "nuc"), np.array([[1.0, 2], [0.5, -3]])),
    ("erfinv", lambda lib, x: lib.erfinv(x), np.array([-0.5, 0.1, 0.7])),
    ("diag_embed", lambda lib, x: lib.diag_embed(x, 1), np.array([[1.0, 2.0], [3.0, 4.0]])),
]


@pytest.mark.parametrize("name,fn,x", _JVP_CASES, ids=[c[0] for c in _JVP_CASES])
def test_forward_mode_vs_torch(name, fn, x):
    t = np.random.default_rng(4).standard_normal(x.shape)
    y, jv = tg.func.jvp(lambda a: fn(tg, a), (tg.tensor(x),), (tg.tensor(t),))
    y2, jv2 = torch.func.jvp(lambda a: fn(torch, a), (torch.tensor(x),), (torch.tensor(t),))
    _close(y, y2)
    _close(jv, jv2)


# ---- errors and names ----------------------------------------------------------------------
def test_errors_name_the_problem_like_torch():
    cases = [
        (lambda lib: lib.trace(lib.ones(2, 2, 2)), "trace: expected a matrix"),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(2, 3), 3), "Order 3 not supported"),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(3)), "must have at least 2 dimensions"),
        (lambda lib: lib.linalg.vector_norm(lib.arange(3)), "Expected a floating point"),
        (lambda lib: lib.norm(lib.ones(2, 3, 4), p="nuc"), "dim must be a 2-tuple"),
        (lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(4, 2)), ""),
        (lambda lib: lib.einsum("ij->k", lib.ones(2, 3)), "output subscript k"),
        (lambda lib: lib.diag(lib.ones(2, 2, 2)), ""),
    ]
    for call, msg in cases:
        for lib in (tg, torch):
            with pytest.raises(RuntimeError, match=msg):
                call(lib)


def test_node_names_follow_torch():
    x = tg.ones(3, requires_grad=True)
    assert "LinalgVectorNormBackward0" in repr(tg.linalg.vector_norm(x))
    assert "ErfBackward0" in repr(tg.erf(x))
    assert "CumprodBackward0" in repr(x.cumprod(0))
    assert "DiagEmbedBackward0" in repr(tg.diag_embed(x))


def test_norm_at_zero_has_torchs_zero_subgradient():
    for lib in (tg, torch):
        z = lib.zeros(3, requires_grad=True)
        lib.linalg.norm(z).backward()
        assert z.grad.tolist() == [0.0, 0.0, 0.0]
        z = lib.zeros(2, 2, requires_grad=True)
        z.norm().backward()
        assert z.grad.sum().item() == 0.0

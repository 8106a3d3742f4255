"""Runtime switches, random draws, windows and small creation functions, against torch:
set/get_num_threads (threadpoolctl), use_deterministic_algorithms, torch.normal and the
in-place random fills (distribution properties: the streams differ from torch's),
hann/hamming/blackman/bartlett/kaiser windows, logspace, scalar_tensor, frombuffer,
set_default_tensor_type."""
import warnings

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info

import tapegrad as tg
from _helpers import assert_close, error_of


def both(fn):
    """The errors fn(lib) gives with torch and with tapegrad: must be the same."""
    return error_of(lambda: fn(torch)), error_of(lambda: fn(tg))


def same_error(fn):
    t, g = both(fn)
    assert t is not None, "torch accepted it"
    assert g == t


# ---- threads -----------------------------------------------------------------------
def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "a", True, None])
@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
def test_thread_setters_refuse_what_torch_refuses(name, bad):
    same_error(lambda lib: getattr(lib, name)(bad))


def test_set_num_threads_limits_the_blas_pool():
    before = tg.get_num_threads()
    assert isinstance(before, int) and before >= 1
    assert before == max(_blas_threads() or [1])
    try:
        tg.set_num_threads(1)
        assert _blas_threads() and set(_blas_threads()) == {1}
        assert tg.get_num_threads() == 1
    finally:
        tg.set_num_threads(before)
    assert tg.get_num_threads() == before


def test_interop_threads_one_shot(monkeypatch):
    from tapegrad import threads
    monkeypatch.setitem(threads._interop, "n", None)
    assert isinstance(tg.get_num_interop_threads(), int) and tg.get_num_interop_threads() >= 1
    tg.set_num_interop_threads(3)
    assert tg.get_num_interop_threads() == 3
    msg = error_of(lambda: tg.set_num_interop_threads(2))
    assert msg == ("RuntimeError", "Error: cannot set number of interop threads after parallel "
                   "work has started or set_num_interop_threads called")


# ---- determinism -------------------------------------------------------------------
@pytest.fixture
def restore_determinism():
    yield
    tg.use_deterministic_algorithms(False)
    torch.use_deterministic_algorithms(False)


@pytest.mark.parametrize("mode", [False, "warn", "error", "default", 0, 1, 2, True])
def test_deterministic_state_as_torch(restore_determinism, mode):
    for lib in (torch, tg):
        lib.set_deterministic_debug_mode(mode)
    assert tg.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    assert tg.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
    assert (tg.is_deterministic_algorithms_warn_only_enabled()
            == torch.is_deterministic_algorithms_warn_only_enabled())


@pytest.mark.parametrize("args,kw", [((True,), {"warn_only": True}), ((False,), {}),
                                     ((True,), {})])
def test_use_deterministic_algorithms(restore_determinism, args, kw):
    for lib in (torch, tg):
        lib.use_deterministic_algorithms(*args, **kw)
    assert tg.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
    assert tg.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()


@pytest.mark.parametrize("call", [
    lambda lib: lib.use_deterministic_algorithms(1),
    lambda lib: lib.use_deterministic_algorithms("a"),
    lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
    lambda lib: lib.set_deterministic_debug_mode(3),
    lambda lib: lib.set_deterministic_debug_mode("foo"),
    lambda lib: lib.set_deterministic_debug_mode(1.0),
    lambda lib: lib.set_deterministic_debug_mode(None),
])
def test_deterministic_errors(restore_determinism, call):
    same_error(call)


# ---- torch.normal ------------------------------------------------------------------
N = 200_000


def _moments(t, mean, std, tol=0.02):
    a = t.numpy().astype(np.float64)
    assert abs(a.mean() - mean) < tol * max(1.0, std) * 3
    assert abs(a.std() - std) < tol * max(1.0, std) * 3


@pytest.mark.parametrize("make", [
    lambda lib: lib.normal(2.0, 3.0, (N,)),
    lambda lib: lib.normal(lib.full((N,), 2.0), 3.0),
    lambda lib: lib.normal(2.0, lib.full((N,), 3.0)),
    lambda lib: lib.normal(lib.full((N,), 2.0), lib.full((N,), 3.0)),
    lambda lib: lib.normal(mean=lib.full((N,), 2.0, dtype=lib.float64), std=3.0),
])
def test_normal_overloads(make):
    t, g = make(torch), make(tg)
    assert g.dtype == getattr(tg, str(t.dtype).split(".")[1]) and tuple(g.shape) == tuple(t.shape)
    _moments(g, 2.0, 3.0)


@pytest.mark.parametrize("dm,ds", [("float64", "float16"), ("float32", "float64"),
                                   ("float16", "float64"), ("float32", "int64")])
def test_normal_dtypes_and_broadcast(dm, ds):
    def f(lib):
        m = lib.zeros(2, 1, dtype=getattr(lib, dm))
        return lib.normal(m, lib.ones(3, dtype=getattr(lib, ds)))
    t, g = f(torch), f(tg)
    assert str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(g.shape) == tuple(t.shape)


def test_normal_gradient_is_zero_and_kwargs():
    m = tg.zeros(3, requires_grad=True)
    s = tg.ones(3, dtype=tg.float64, requires_grad=True)
    y = tg.normal(m, s)
    assert y.requires_grad and y.dtype == tg.float32
    y.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    r = tg.normal(0.0, 1.0, size=(2,), dtype=tg.float64, requires_grad=True)
    assert r.dtype == tg.float64 and r.requires_grad and r.is_leaf
    out = tg.empty(3, dtype=tg.float64)
    assert tg.normal(0, 1, (3,), out=out) is out


def test_normal_generator_and_seed():
    tg.manual_seed(7)
    a = tg.normal(0.0, 1.0, (5,))
    tg.manual_seed(7)
    b = tg.normal(0.0, 1.0, (5,))
    assert a.tolist() == b.tolist()
    g1, g2 = tg.Generator().manual_seed(3), tg.Generator().manual_seed(3)
    c = tg.normal(tg.zeros(5), 1.0, generator=g1)
    tg.normal(0.0, 1.0, (100,))                 # the global stream does not touch g2
    assert tg.normal(tg.zeros(5), 1.0, generator=g2).tolist() == c.tolist()


@pytest.mark.parametrize("call", [
    lambda lib: lib.normal(0., -1., (2,)),
    lambda lib: lib.normal(lib.zeros(2), -0.5),
    lambda lib: lib.normal(lib.zeros(2), lib.tensor([-1., 1.])),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.),
    lambda lib: lib.normal(1, lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.normal(0., 1., size=(2,), dtype=lib.int64),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
])
def test_normal_errors(call):
    same_error(call)


def test_normal_needs_size():
    t, g = both(lambda lib: lib.normal(0., 1.))
    assert t[0] == g[0] == "TypeError"
    assert g[1].split("\n")[0] == t[1].split("\n")[0]


# ---- in-place random fills ---------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64", "int32", "int16",
                                "int8", "uint8", "bool"])
def test_random_default_range(dt):
    t = torch.empty(50_000, dtype=getattr(torch, dt)).random_()
    g = tg.empty(50_000, dtype=getattr(tg, dt)).random_()
    assert g.dtype == getattr(tg, dt)
    tn, gn = t.numpy().astype(np.float64), g.numpy().astype(np.float64)
    assert gn.min() >= 0 and gn.max() <= tn.max() * 1.001 + 1
    assert gn.max() >= 0.99 * tn.max()          # fills the whole default range
    assert np.all(gn == np.round(gn))


@pytest.mark.parametrize("args", [(5,), (2, 5), (-3, 3), (0, None)])
@pytest.mark.parametrize("dt", ["float32", "int64", "int8"])
def test_random_ranges(args, dt):
    t = torch.empty(20_000, dtype=getattr(torch, dt)).random_(*args)
    g = tg.empty(20_000, dtype=getattr(tg, dt)).random_(*args)
    if args[-1] is None:
        assert g.min().item() >= args[0] and g.max().item() >= 0.99 * t.max().item()
    else:
        lo, hi = (0,) + args if len(args) == 1 else args
        assert set(np.unique(g.numpy()).tolist()) == set(range(lo, hi))
        assert set(np.unique(t.numpy()).tolist()) == set(range(lo, hi))
    assert g.random_(to=4).max().item() == 3
    assert g.random_(**{"from": 1, "to": 3}).min().item() == 1


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).random_(5, 2),
    lambda lib: lib.empty(3).random_(0),
    lambda lib: lib.empty(3, dtype=lib.uint8).random_(-1, 3),
    lambda lib: lib.empty(3, dtype=lib.uint8).random_(0, 300),
    lambda lib: lib.empty(3, dtype=lib.int8).random_(0, 300),
    lambda lib: lib.empty(3, dtype=lib.int16).random_(-2 ** 40, 3),
    lambda lib: lib.empty(3, dtype=lib.bool).random_(0, 3),
    lambda lib: lib.empty(3).random_(2 ** 25, None),
    lambda lib: lib.empty(3, dtype=lib.int8).random_(-200, None),
    lambda lib: lib.empty(3, dtype=lib.float16).random_(0, 2 ** 25),
    lambda lib: lib.empty(3).random_(None),
    lambda lib: lib.empty(3).random_(2.0),
    lambda lib: lib.empty(3).random_(1, None, 3),
    lambda lib: lib.empty(3).random_(foo=3),
    lambda lib: lib.empty(3).exponential_(0),
    lambda lib: lib.empty(3).exponential_(-1),
    lambda lib: lib.empty(3, dtype=lib.int64).exponential_(),
    lambda lib: lib.empty(3, dtype=lib.int16).exponential_(),
    lambda lib: lib.empty(3).geometric_(0),
    lambda lib: lib.empty(3).geometric_(1),
    lambda lib: lib.empty(3).geometric_(1.5),
    lambda lib: lib.empty(3, dtype=lib.bool).geometric_(0.5),
    lambda lib: lib.empty(3).cauchy_(0, 0),
    lambda lib: lib.empty(3).cauchy_(0, -1),
    lambda lib: lib.empty(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(3, dtype=lib.uint8).cauchy_(),
    lambda lib: lib.empty(3).log_normal_(1, 0),
    lambda lib: lib.empty(3).log_normal_(1, -1),
    lambda lib: lib.empty(3, dtype=lib.int32).log_normal_(),
    lambda lib: lib.zeros(3, requires_grad=True).exponential_(),
])
def test_random_fill_errors(call):
    same_error(call)


@pytest.mark.parametrize("dt,args", [("float32", (-2 ** 25, 0)), ("float32", (0, 2 ** 25)),
                                     ("float64", (0, 2 ** 60)), ("float16", (0, 2 ** 12)),
                                     ("float32", (0, 2 ** 24 + 1))])
def test_random_float_range_warning(dt, args):
    def msgs(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = lib.empty(1000, dtype=getattr(lib, dt)).random_(*args)
        # torch appends where in its C++ sources it warned
        return [str(m.message).split(" (Triggered internally")[0] for m in w], x
    (t, _), (g, x) = msgs(torch), msgs(tg)
    assert g == t
    assert args[0] <= x.min().item() and x.max().item() <= args[1]


def test_fill_distributions():
    x = tg.empty(N, dtype=tg.float64)
    _moments(x.exponential_(2.0), 0.5, 0.5)
    g = x.geometric_(0.25).numpy()
    assert g.min() == 1 and abs(g.mean() - 4.0) < 0.05
    c = x.cauchy_(1.0, 2.0).numpy()                 # median and quartiles: median +- sigma
    assert abs(np.median(c) - 1.0) < 0.05
    assert abs(np.percentile(c, 75) - 3.0) < 0.1 and abs(np.percentile(c, 25) + 1.0) < 0.1
    ln = np.log(x.log_normal_(1.0, 0.5).numpy())
    assert abs(ln.mean() - 1.0) < 0.01 and abs(ln.std() - 0.5) < 0.01
    gi = tg.empty(N, dtype=tg.int32).geometric_(0.5)
    assert gi.dtype == tg.int32 and abs(gi.numpy().mean() - 2.0) < 0.03


@pytest.mark.parametrize("fill", [
    lambda t, **k: t.random_(0, 100, **k), lambda t, **k: t.exponential_(**k),
    lambda t, **k: t.geometric_(0.3, **k), lambda t, **k: t.cauchy_(**k),
    lambda t, **k: t.log_normal_(**k)])
def test_fills_seeded_and_generator(fill):
    tg.manual_seed(11)
    a = fill(tg.empty(6)).tolist()
    tg.manual_seed(11)
    assert fill(tg.empty(6)).tolist() == a
    g1, g2 = tg.Generator().manual_seed(5), tg.Generator().manual_seed(5)
    b = fill(tg.empty(6), generator=g1).tolist()
    tg.rand(50)
    assert fill(tg.empty(6), generator=g2).tolist() == b
    t, tt = tg.empty(6), torch.empty(6)
    v = t._version
    assert fill(t) is t and t._version == v + 1 == fill(tt)._version  # an in-place change


# ---- windows, logspace, scalar_tensor, frombuffer ----------------------------------
WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 33])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dt", [None, "float64"])
def test_windows(name, n, periodic, dt):
    kw = {} if dt is None else {"dtype": getattr(torch, dt)}
    t = getattr(torch, name)(n, periodic, **kw)
    g = getattr(tg, name)(n, periodic, **({} if dt is None else {"dtype": getattr(tg, dt)}))
    assert str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert_close(g, t, rtol=1e-6 if dt is None else 1e-12, atol=1e-6 if dt is None else 1e-12)
    assert getattr(tg, name)(n).tolist() == pytest.approx(getattr(torch, name)(n).tolist(),
                                                          abs=1e-6)


def test_window_parameters():
    assert_close(tg.hamming_window(9, False, 0.6, 0.4, dtype=tg.float64),
                 torch.hamming_window(9, False, 0.6, 0.4, dtype=torch.float64))
    assert_close(tg.kaiser_window(9, True, 5.0, dtype=tg.float64),
                 torch.kaiser_window(9, True, 5.0, dtype=torch.float64))
    assert tg.hann_window(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("call", [
    lambda lib: lib.hann_window(-1), lambda lib: lib.kaiser_window(-1),
    lambda lib: lib.hann_window(5, dtype=lib.int64),
    lambda lib: lib.kaiser_window(5, dtype=lib.int32),
    lambda lib: lib.hann_window(5.0)])
def test_window_errors(call):
    same_error(call)


@pytest.mark.parametrize("args,kw", [((0, 2, 3), {}), ((0, 2, 3), {"dtype": "int64"}),
                                     ((0, 2, 3, 2), {}), ((0, 2, 1), {}), ((-1, 1.5, 7), {}),
                                     ((0, 3, 4), {"base": 2.0, "dtype": "float64"}),
                                     ((0, 2, 0), {})])
def test_logspace(args, kw):
    def f(lib):
        k = {n: getattr(lib, v) if n == "dtype" else v for n, v in kw.items()}
        return lib.logspace(*args, **k)
    t, g = f(torch), f(tg)
    assert str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert_close(g, t, rtol=1e-6)
    same_error(lambda lib: lib.logspace(0, 2, -1))


@pytest.mark.parametrize("s,dt", [(3, None), (True, None), (3, "int64"), (2.5, "float64")])
def test_scalar_tensor(s, dt):
    t = torch.scalar_tensor(s, **({} if dt is None else {"dtype": getattr(torch, dt)}))
    g = tg.scalar_tensor(s, **({} if dt is None else {"dtype": getattr(tg, dt)}))
    assert g.shape == () and str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert g.item() == t.item()
    same_error(lambda lib: lib.scalar_tensor([3]))
    assert tg.scalar_tensor(1.0, requires_grad=True).requires_grad


def test_frombuffer_shares_memory():
    b = bytearray(np.arange(1, 4, dtype=np.int32).tobytes())
    g = tg.frombuffer(b, dtype=tg.int32)
    assert g.tolist() == [1, 2, 3] and g.dtype == tg.int32
    g[0] = 9
    assert b[:4] == b"\t\x00\x00\x00"
    assert tg.frombuffer(b, dtype=tg.int32, count=2, offset=4).tolist() == \
        torch.frombuffer(b, dtype=torch.int32, count=2, offset=4).tolist()


@pytest.mark.parametrize("call", [
    lambda lib: lib.frombuffer(bytearray(12), dtype=lib.int64),
    lambda lib: lib.frombuffer(bytearray(12), dtype=lib.int32, count=4),
    lambda lib: lib.frombuffer(bytearray(12), dtype=lib.int32, offset=12),
    lambda lib: lib.frombuffer(bytearray(12), dtype=lib.int32, offset=-1),
    lambda lib: lib.frombuffer(bytearray(12), dtype=lib.int32, count=0),
    lambda lib: lib.frombuffer(bytearray(), dtype=lib.int32),
    lambda lib: lib.frombuffer([1, 2], dtype=lib.int32),
])
def test_frombuffer_errors(call):
    same_error(call)


# ---- set_default_tensor_type -------------------------------------------------------
@pytest.fixture
def default_dtype():
    yield
    tg.set_default_dtype(tg.float32)
    torch.set_default_dtype(torch.float32)


def test_set_default_tensor_type(default_dtype, monkeypatch):
    from tapegrad import legacy
    monkeypatch.setitem(legacy._warned, "once", False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tg.set_default_tensor_type(tg.DoubleTensor)
        tg.set_default_tensor_type("torch.DoubleTensor")   # torch warns once
    assert [str(x.message) for x in w] == [legacy._DEPRECATED]
    assert tg.get_default_dtype() == tg.float64 and tg.zeros(1).dtype == tg.float64
    tg.set_default_tensor_type("torch.FloatTensor")
    assert tg.get_default_dtype() == tg.float32


@pytest.mark.parametrize("arg", ["LongTensor", "torch.LongTensor", "torch.Foo", "float64", 3])
def test_set_default_tensor_type_errors(default_dtype, arg):
    def f(lib):
        a = getattr(lib, arg) if arg in ("LongTensor", "float64") else arg
        lib.set_default_tensor_type(a)
    same_error(f)

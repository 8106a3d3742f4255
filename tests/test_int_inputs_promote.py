"""Float ops on integer and bool tensors compute in the default float dtype, as torch's.

torch casts integer and bool inputs to the default dtype before computing. NumPy computes
bool, int8 and uint8 in float16 (tanh(True) was 0.7617, torch 0.7616) and int16/32/64 in
float64 (sin(2**31 - 1) was -0.7249: torch computes sin of the float32 value 2**31,
-0.9713). Such ops declare `promote="float"` at their table entry and core/record.py
`apply` casts their integer and bool inputs before the forward runs (also in a tg.compile
replay). Checked here for every unary and binary float op of the
op table, against torch (the dtype exactly; values within 2 float32 ulps: torch's and
NumPy's float32 kernels differ in the last bit, for float32 inputs too) and against
tapegrad itself: f(int tensor) is bit for bit f(int tensor.float()), as in torch.
"""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]

# (name, the function in both libraries) for unary table ops computing a float
UNARY = [(n, (lambda n: lambda lib, x: getattr(lib, n)(x))(n)) for n in [
    "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "tanh", "sigmoid", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "erf", "erfc", "erfinv"]]
UNARY += [("nn.functional.sigmoid", lambda lib, x: lib.nn.functional.sigmoid(x)),
          ("nn.functional.tanh", lambda lib, x: lib.nn.functional.tanh(x)),
          ("Tensor.tanh", lambda lib, x: x.tanh()), ("Tensor.exp", lambda lib, x: x.exp())]

# binary table ops whose result is a float for integer operands
BINARY = [
    ("div", lambda lib, a, b: lib.div(a, b)),
    ("true_divide", lambda lib, a, b: lib.true_divide(a, b)),
    ("truediv operator", lambda lib, a, b: a / b),
    ("atan2", lambda lib, a, b: lib.atan2(a, b)),
]
# with a Python float: the default dtype (NumPy: float16 for small ints, float64 else)
WITH_FLOAT = [
    ("mul 2.5", lambda lib, a: a * 2.5), ("add 0.5", lambda lib, a: a + 0.5),
    ("sub 0.25", lambda lib, a: a - 0.25), ("rsub", lambda lib, a: 1.5 - a),
    ("div 3.0", lambda lib, a: a / 3.0), ("rdiv", lambda lib, a: 7.0 / a),
    ("pow 0.5", lambda lib, a: a ** 0.5), ("pow 1.5", lambda lib, a: lib.pow(a, 1.5)),
    ("rpow", lambda lib, a: 1.1 ** a), ("fmod 2.5", lambda lib, a: lib.fmod(a, 2.5)),
    ("remainder 2.5", lambda lib, a: lib.remainder(a, 2.5)),
    ("atan2 0-d float", lambda lib, a: lib.atan2(a, lib.tensor(0.75))),
    ("mul 0-d float", lambda lib, a: a * lib.tensor(0.1)),
]


def _values(dtype):
    """Values of the dtype, including those float32 cannot hold exactly (2**24 + 1,
    2**31 - 1) where computing in float64 gives another answer than torch."""
    if dtype == "bool":
        return np.array([True, False, True, True])
    info = np.iinfo(dtype)
    v = np.arange(-300, 300, 7)
    extra = [info.min, info.max, 0, 1, -1, 2 ** 24 + 1, -(2 ** 24 + 3), 2 ** 31 - 1, 2 ** 40 + 1]
    v = np.concatenate([v, [e for e in extra if info.min <= e <= info.max]])
    return v[(v >= info.min) & (v <= info.max)].astype(dtype)


def _close_ulps(got, want, ulps=2):
    """Within `ulps` float32 spacings of the larger magnitude (nan where nan, infinities
    equal). Subnormal results count as 0: torch's vectorized sigmoid flushes them
    (sigmoid(-97.) is 0 in torch, 7.5e-43 in NumPy, for float32 inputs too)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want) & np.isfinite(got)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    g, w = got[fin].astype(np.float64), want[fin].astype(np.float64)
    tol = ulps * np.spacing(np.maximum(np.abs(g), np.abs(w)).astype(got.dtype)).astype(np.float64)
    tol = np.maximum(tol, np.finfo(got.dtype).tiny)
    bad = np.abs(g - w) > tol
    assert not bad.any(), (g[bad][:5], w[bad][:5])


def _run(fn, lib, *arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(lib, *[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])


def _both(fn, *arrays):
    try:
        want = _run(fn, torch, *arrays)
    except (RuntimeError, TypeError) as e:  # torch refuses this dtype: so must tapegrad
        with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
            _run(fn, tg, *arrays)
        return None, e
    got = _run(fn, tg, *arrays)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    _close_ulps(got.numpy(), want.numpy())
    return got, want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn", UNARY, ids=[n for n, _ in UNARY])
def test_unary_float_op_on_integers_is_torchs_default_dtype_computation(name, fn, dtype):
    a = _values(dtype)
    got, _ = _both(fn, a)
    # computed in float32: bit for bit the op on the float32 tensor (torch's definition)
    same = _run(fn, tg, a.astype(np.float32))
    assert np.array_equal(got.numpy(), same.numpy(), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn", BINARY, ids=[n for n, _ in BINARY])
def test_binary_float_op_on_integer_tensors(name, fn, dtype):
    a = _values(dtype)
    b = np.roll(a, 3)
    if dtype != "bool":
        b = np.where(b == 0, 3, b).astype(dtype)
    got, _ = _both(fn, a, b)
    same = _run(fn, tg, a.astype(np.float32), b.astype(np.float32))
    assert np.array_equal(got.numpy(), same.numpy(), equal_nan=True)


@pytest.mark.parametrize("other", ["uint8", "int64", "bool"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32"])
def test_binary_float_op_on_mixed_integer_tensors(dtype, other):
    a = _values(dtype)[:4]
    b = np.array([3, 1, 2, 5]).astype(other)
    for _, fn in BINARY:
        _both(fn, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn", WITH_FLOAT, ids=[n for n, _ in WITH_FLOAT])
def test_integer_tensor_with_a_float_number(name, fn, dtype):
    _both(fn, _values(dtype))


def test_the_reported_values():
    """The numbers of the bug report: float16 was 0.7617, 2**31 - 1 was another sine."""
    assert tg.tanh(tg.tensor([True])).item() == torch.tanh(torch.tensor([True])).item()
    assert tg.tanh(tg.tensor([True])).dtype == tg.float32
    img = np.arange(256, dtype=np.uint8).reshape(16, 16)
    _close_ulps((tg.tensor(img) / 255).numpy(), (torch.tensor(img) / 255).numpy(), ulps=0)
    _close_ulps(tg.sqrt(tg.tensor(img)).numpy(), np.sqrt(img.astype(np.float32)), ulps=0)
    s = tg.sin(tg.tensor([2 ** 31 - 1])).item()
    assert abs(s - torch.sin(torch.tensor([2 ** 31 - 1])).item()) < 1e-6
    assert abs(s - np.sin(2.0 ** 31)) < 1e-6


def test_default_dtype_float64_computes_integers_in_float64():
    prev = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    torch_prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for dtype in ["bool", "uint8", "int32"]:
            a = _values(dtype)
            for fn in (lambda lib, x: lib.tanh(x), lambda lib, x: x / 3, lambda lib, x: x * 0.1):
                got, want = _run(fn, tg, a), _run(fn, torch, a)
                assert got.dtype == tg.float64 and want.dtype == torch.float64
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15)
    finally:
        tg.set_default_dtype(prev)
        torch.set_default_dtype(torch_prev)


def test_float_inputs_keep_their_dtype():
    """The recomputation is for integer-only inputs: float16 and float64 stay."""
    h = tg.tensor([0.5, 1.0], dtype=tg.float16)
    assert tg.tanh(h).dtype == tg.float16
    d = tg.tensor([0.5, 1.0], dtype=tg.float64)
    assert tg.tanh(d).dtype == tg.float64
    assert (tg.tensor([1, 2], dtype=tg.int8) * d).dtype == tg.float64
    assert (tg.tensor([1, 2], dtype=tg.int64) * h).dtype == tg.float16


def test_an_op_saving_values_saves_them_computed_in_the_default_dtype():
    """Ops returning (out, saved) compute both from the cast inputs: `saved` matches."""
    from tapegrad.core.record import apply_saved
    from tapegrad.ops.registry import Op

    op = Op("tanh_saving", lambda x: (np.tanh(x), {"t": np.tanh(x)}), extra=True,
            differentiable=False, promote="float")
    out, saved = apply_saved(op, tg.tensor([True, False]))
    assert out.dtype == tg.float32 and saved["t"].dtype == np.float32
    assert np.array_equal(out.numpy(), saved["t"])
    assert out.numpy()[0] == np.tanh(np.float32(1))


def test_an_op_without_a_declared_kind_gets_its_result_cast_never_run_again():
    """An entry that computes a float from integers without declaring promote="float"
    has its result cast to the default dtype (core/record.py keep_default_dtype): the
    forward runs once."""
    from tapegrad.core.record import apply
    from tapegrad.ops.registry import Op

    calls = []
    op = Op("tanh_undeclared", lambda x: calls.append(x.dtype) or np.tanh(x),
            differentiable=False)
    out = apply(op, tg.tensor([True, False]))
    assert out.dtype == tg.float32 and calls == [np.dtype(bool)]
    assert out.numpy()[0] == np.float32(np.tanh(np.float16(1)))  # NumPy's float16, cast


def test_every_unary_float_op_declares_its_kind():
    """The table's unary float ops declare promote="float" (so their integer inputs are
    cast before they run); shape ops declare none."""
    from tapegrad.ops.registry import OPS

    for name in ("exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "erf", "erfinv",
                 "log1p", "expm1", "asinh", "atanh"):
        assert OPS[name].promote == "float" and OPS[name].ints_to_float, name
    assert OPS["add"].promote == "arith" and OPS["div"].promote == "div"
    assert OPS["reshape"].promote is None and not OPS["reshape"].promote_default


def test_compiled_replay_computes_integers_in_the_default_dtype(monkeypatch):
    """tg.compile's replay (compile/replay.py) recomputes as eager apply() does."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)  # counts replays
    class M(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = tg.nn.Parameter(tg.ones(4))

        def forward(self, img):
            return (tg.tanh(img) + img / 255) * self.w

    m = M()
    run = tg.compile(m)
    rng = np.random.default_rng(0)
    for _ in range(3):
        img = rng.integers(0, 256, 4).astype(np.uint8)
        out = run(tg.tensor(img))
        want = torch.tanh(torch.tensor(img)) + torch.tensor(img) / 255
        assert out.dtype == tg.float32
        _close_ulps(out.detach().numpy(), want.numpy())
        out.sum().backward()  # (a step's backward: what makes the capture replayable)
        g, m.w.grad = m.w.grad.numpy().copy(), None
        eager = m(tg.tensor(img))
        eager.sum().backward()
        assert np.array_equal(out.detach().numpy(), eager.detach().numpy())
        assert np.array_equal(g, m.w.grad.numpy())
        m.w.grad = None
    assert run._runner.replays == 2, run._runner.why

"""tapegrad.signal.windows against torch.signal.windows: every window, lengths 0..10 and
64, symmetric and periodic, float32 and float64 (and the default dtype), the windows'
own parameters, `requires_grad`, and torch's refusals (negative length, non-float dtypes,
bad parameters) with torch's exception types and messages."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
         "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
NEEDS = {"general_cosine": {"a": [0.46, 0.23, 0.31]}}
PARAMS = {
    "exponential": [{"tau": 0.5}, {"tau": 3.0, "center": 1.5, "sym": False}, {"tau": 100.0}],
    "gaussian": [{"std": 0.3}, {"std": 7.5}],
    "kaiser": [{"beta": 0.0}, {"beta": 3.5}, {"beta": 40.0}],
    "general_cosine": [{"a": [1.0]}, {"a": (0.5, 0.5)}, {"a": [0.3635819, 0.4891775,
                                                              0.1365995, 0.0106411]}],
    "general_hamming": [{"alpha": 0.5}, {"alpha": 0.0}, {"alpha": 0.9}],
}
LENGTHS = list(range(11)) + [64]


def _call(lib, name, M, **kw):
    return getattr(lib.signal.windows, name)(M, **{**NEEDS.get(name, {}), **kw})


def _same(got, want, rtol):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    assert got.requires_grad == want.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=rtol)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values(name, sym, dtype):
    rtol = 1e-12 if dtype == "float64" else 2e-6
    for M in LENGTHS:
        got = _call(tg, name, M, sym=sym, dtype=getattr(tg, dtype))
        want = _call(torch, name, M, sym=sym, dtype=getattr(torch, dtype))
        _same(got, want, rtol)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_parameters(name):
    for kw in PARAMS[name]:
        for M in (1, 2, 7, 16):
            sym = kw.get("sym", True)
            rest = {k: v for k, v in kw.items() if k != "sym"}
            for s in ([sym] if "center" in kw else [True, False]):
                got = _call(tg, name, M, sym=s, dtype=tg.float64, **rest)
                want = _call(torch, name, M, sym=s, dtype=torch.float64, **rest)
                _same(got, want, 1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_default_dtype_and_requires_grad(name):
    got, want = _call(tg, name, 6), _call(torch, name, 6)
    _same(got, want, 2e-6)
    assert got.dtype == tg.float32
    got = _call(tg, name, 6, dtype=tg.float64, requires_grad=True)
    want = _call(torch, name, 6, dtype=torch.float64, requires_grad=True)
    _same(got, want, 1e-12)
    (got * got).sum().backward()  # a window that requires grad is usable in a graph
    assert got.grad is not None and tuple(got.grad.shape) == (6,)
    prev = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        _same(_call(tg, name, 5), _call(torch, name, 5), 1e-12)
    finally:
        tg.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", NAMES)
def test_refusals(name):
    assert_raises_as_torch(lambda lib: _call(lib, name, -1), tg, chars=60)
    for d in ("int64", "float16", "bool"):
        assert_raises_as_torch(lambda lib: _call(lib, name, 3, dtype=getattr(lib, d)), tg,
                               chars=len(name) + 30)


@pytest.mark.parametrize("call", [
    lambda lib: lib.signal.windows.exponential(3, tau=-1),
    lambda lib: lib.signal.windows.exponential(3, tau=0.0),
    lambda lib: lib.signal.windows.exponential(3, center=1.0),
    lambda lib: lib.signal.windows.gaussian(3, std=-1),
    lambda lib: lib.signal.windows.gaussian(3, std=0),
    lambda lib: lib.signal.windows.kaiser(3, beta=-0.5),
    lambda lib: lib.signal.windows.general_cosine(3, a=None),
    lambda lib: lib.signal.windows.general_cosine(3, a=[]),
    lambda lib: lib.signal.windows.general_cosine(3),
])
def test_parameter_refusals(call):
    assert_raises_as_torch(call, tg, chars=40)


def test_layout_and_device():
    got = tg.signal.windows.hann(4, layout=None, device="cpu")
    want = torch.signal.windows.hann(4, layout=torch.strided, device="cpu")
    _same(got, want, 2e-6)
    with pytest.raises(ValueError, match="strided tensors only"):
        tg.signal.windows.hann(4, layout="sparse_coo")


def test_namespace():
    assert sorted(tg.signal.windows.__all__) == sorted(torch.signal.windows.__all__)
    for name in NAMES:
        fn = getattr(tg.signal.windows, name)
        assert fn.__name__ == name and fn.__qualname__ == name
        assert fn.__module__ == "tapegrad.signal.windows"

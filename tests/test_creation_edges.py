"""Creation edges against torch: arange's length and values for integer dtypes with
fractional bounds (int64 truncates the bounds first; the other integer dtypes take the
length from the float64 bounds), and its refusals (inconsistent step sign, infinite
bounds, zero step)."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 (the exception is the result compared)
        return type(e), str(e)
    return str(r.dtype).split(".")[-1], r.tolist()


CASES = [(0.0, -8.000001, -4.0), (1.0, 5.000001, 2.0), (-0.9, 2.1, 2.0), (2.1, -2.9, -1.0),
         (0.1, -7.9, -4.0), (3.1,), (0, -3.5, -1.5), (0, 3, 0.5), (0.5, 0.7, 0.1), (0, 1, 0.3),
         (-0.5, 3.7, 1.0), (0, 10, 3), (10, 0, -3), (5, 5, 1), (0, -3, 2), (0, 3, -2),
         (1549556900, 1549556828, 1989724), (0, float("inf"), 2), (float("-inf"), 1, 2),
         (0, 3, 0), (0.5, -0.7, 0.1), (0, 1, 0.1), (-1, 1, 0.25)]


@pytest.mark.parametrize("args", CASES)
@pytest.mark.parametrize("dtype", [None, "int64", "int32", "int16", "int8", "uint8", "float64",
                                   "float32"])
def test_arange(args, dtype):
    def run(L):
        kw = {} if dtype is None else {"dtype": getattr(L, dtype)}
        return _outcome(lambda: L.arange(*args, **kw))
    t, g = run(torch), run(tg)
    if isinstance(t[0], type):
        assert g[0] is t[0] and t[1] in g[1], (g, t)
    else:
        assert g[0] == t[0], (g, t)
        np.testing.assert_allclose(np.array(g[1], dtype=float), np.array(t[1], dtype=float),
                                   rtol=1e-6 if dtype == "float32" else 1e-12)


SPACED = [(4.3, -3, 50), (4.3, 0, 50), (0, -3, 2), (0, 1.2, 2), (1, 0, 4), (-2.5, 7.9, 7),
          (0, 10, 1), (3, 3, 5), (-5, 5, 0), (0.1, 0.9, 9), (100, -100, 33), (7, 250, 11)]
SPACED_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", SPACED_DTYPES)
@pytest.mark.parametrize("args", SPACED)
def test_linspace_follows_torchs_kernel(args, dtype):
    # the ends are cast to the dtype first (4.3 -> 4 for integers), integer steps are in
    # float64 and truncated, float16 rounds at each step, the second half counts down
    # from the end
    want = _outcome(lambda: torch.linspace(*args, dtype=getattr(torch, dtype)))
    got = _outcome(lambda: tg.linspace(*args, dtype=getattr(tg, dtype)))
    _same_spaced(got, want, dtype)


def _same_spaced(got, want, dtype):
    """Integers and refusals exactly (the refusal's type: torch names int8 int8_t);
    float32/64 to the last bit or two (torch's kernel vectorizes the float loop, whose
    rounding order is not the scalar formula's)."""
    if isinstance(want[0], type):
        assert got[0] is want[0]
    elif dtype.startswith("float") and isinstance(want[1], list):
        assert got[0] == want[0]
        np.testing.assert_allclose(got[1], want[1], rtol=1e-3 if dtype == "float16" else
                                   4e-7 if dtype == "float32" else 1e-15,
                                   atol=1e-6 if dtype == "float32" else 1e-15)
    else:
        assert got == want


LOG_ARGS = [(4.3, -3, 50), (0, -3, 2), (0, 1.2, 2), (1, 0, 4), (-2.5, 1.9, 7), (0, 2, 1),
            (-5, 5, 0), (0.1, 0.9, 9)]


@pytest.mark.parametrize("base", [10.0, 2.0, 1.1, 0.5])
# (a negative end wraps to ~250 in uint8: the power overflows, a cast C++ leaves undefined)
@pytest.mark.parametrize("args,dtype", [(a, d) for a in LOG_ARGS for d in SPACED_DTYPES
                                        if not (d == "uint8" and min(a[:2]) < 0 and a[2])])
def test_logspace_follows_torchs_kernel(args, dtype, base):
    # integer ends and their difference in C++'s int (uint8's 0 - 1 is -1), the power in
    # float64, truncated toward zero for integer dtypes
    want = _outcome(lambda: torch.logspace(*args, base=base, dtype=getattr(torch, dtype)))
    got = _outcome(lambda: tg.logspace(*args, base=base, dtype=getattr(tg, dtype)))
    _same_spaced(got, want, dtype)


@pytest.mark.parametrize("value", [-9, 300, -300, 2.5, -2.5, True, 0])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "bool", "float16"])
def test_fill_values_convert_as_torchs_scalars(value, dtype):
    # truncated toward zero; an unsigned dtype wraps a negative integer (-9 -> 247) but
    # refuses a negative float and anything out of range, as C++'s Scalar::to<T>()
    makers = [lambda lib: lib.full((2,), value, dtype=getattr(lib, dtype)),
              lambda lib: lib.full_like(lib.zeros(2, dtype=getattr(lib, dtype)), value),
              lambda lib: lib.scalar_tensor(value, dtype=getattr(lib, dtype)),
              lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)).fill_(value)]
    for make in makers:
        want = _outcome(lambda: make(torch))
        got = _outcome(lambda: make(tg))
        assert got[0] == want[0] if isinstance(want[0], type) else got == want


@pytest.mark.parametrize("name", ["rand_like", "randn_like", "zeros_like", "ones_like",
                                  "empty_like"])
def test_like_factories_take_torchs_keywords(name):
    kw = dict(dtype=None, layout=None, device="cpu", memory_format=None)
    assert tuple(getattr(tg, name)(tg.zeros(2, 3), **kw).shape) == (2, 3)
    y = tg.randint_like(tg.zeros(4), 0, 3, device="cpu", requires_grad=False, layout=None)
    assert y.shape == (4,) and torch.randint_like(torch.zeros(4), 0, 3, device="cpu").shape == (4,)


# ---- numbers a dtype cannot hold: torch wraps ints down to -max into unsigned types and
# refuses the others (full_like, scalar_tensor) ------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
@pytest.mark.parametrize("value", [-9, -1, -255, 300, 2.7, -2.7, 127.9, 1e300])
def test_fill_numbers_wrap_as_torch(dtype, value):
    for f in (lambda L: L.full_like(L.zeros(2, 3, dtype=getattr(L, dtype)), value),
              lambda L: L.scalar_tensor(value, dtype=getattr(L, dtype))):
        assert _outcome(lambda: f(tg)) == _outcome(lambda: f(torch))


# ---- the *_like random factories take torch's keywords ----------------------------------
@pytest.mark.parametrize("name,args", [("rand_like", ()), ("randn_like", ()),
                                       ("randint_like", (3, 9))])
def test_random_like_keywords(name, args):
    kw = dict(dtype=None, layout=None, device="cpu", requires_grad=False)
    for L in (torch, tg):
        x = L.zeros(2, 3, dtype=L.float64)
        r = getattr(L, name)(x, *args, memory_format=L.preserve_format if L is torch else None,
                             **kw)
        assert tuple(r.shape) == (2, 3) and str(r.dtype).endswith("float64")
        assert r.requires_grad is False
    with pytest.raises(TypeError):  # keyword-only, as torch's
        tg.rand_like(tg.zeros(2), tg.float32)
    with pytest.raises(TypeError):
        torch.rand_like(torch.zeros(2), torch.float32)
    lo, hi = 3, 9
    r = tg.randint_like(tg.zeros(1000), lo, hi)
    assert lo <= float(r.min()) and float(r.max()) < hi

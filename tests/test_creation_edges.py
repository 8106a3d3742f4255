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

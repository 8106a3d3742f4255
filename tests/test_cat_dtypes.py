"""tg.cat of tensors of different dtypes: torch's result dtype (a floating dtype wins over
any integer: float16 with int16/int32/int64 is float16, where NumPy's concatenate widens
to float32), the values, and the floating inputs' gradients, against torch."""
import numpy as np
import pytest
import torch

import tapegrad as tg

DTYPES = ["float16", "float32", "float64", "bool", "uint8", "int8", "int16", "int32", "int64"]


def _pair(lib, a, b, rng):
    xa = rng.integers(0, 2 if a == "bool" else 5, size=(2, 3)).astype(a)
    xb = rng.integers(0, 2 if b == "bool" else 5, size=(1, 3)).astype(b)
    ta, tb = lib.tensor(xa), lib.tensor(xb)
    for t in (ta, tb):
        if t.dtype.is_floating_point:
            t.requires_grad_(True)
    return ta, tb


@pytest.mark.parametrize("b", DTYPES)
@pytest.mark.parametrize("a", DTYPES)
def test_cat_result_dtype_values_and_grads_match_torch(a, b):
    rng = np.random.default_rng(DTYPES.index(a) * 10 + DTYPES.index(b))
    seed = rng.integers(1 << 30)
    ta, tb = _pair(tg, a, b, np.random.default_rng(seed))
    ra, rb = _pair(torch, a, b, np.random.default_rng(seed))
    got, want = tg.cat([ta, tb]), torch.cat([ra, rb])
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    if want.requires_grad:
        g = np.random.default_rng(seed + 1).standard_normal(want.shape)
        got.backward(tg.tensor(g.astype(str(got.dtype).split(".")[-1])))
        want.backward(torch.tensor(g, dtype=want.dtype))
        for t, r in ((ta, ra), (tb, rb)):
            if r.grad is not None:
                assert t.grad.dtype == t.dtype
                np.testing.assert_array_equal(t.grad.numpy(), r.grad.numpy())


def test_float16_with_int64_three_ways():
    xs = [tg.ones(2, dtype=tg.int64), tg.ones(1, dtype=tg.float16), tg.ones(3, dtype=tg.int32)]
    assert tg.cat(xs).dtype == tg.float16
    assert torch.cat([torch.ones(2, dtype=torch.int64), torch.ones(1, dtype=torch.float16),
                      torch.ones(3, dtype=torch.int32)]).dtype == torch.float16

"""The addmm family on integer and bool tensors against torch: the integer dtype is kept
with beta / alpha truncated (addmm, addmv, addbmm, baddbmm), addr refuses float scalars
for integer inputs, bool addr is (beta and input) or (alpha and outer)."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _run(f, L):
    try:
        r = f(L)
    except Exception as e:  # noqa: BLE001 (torch's refusals are compared)
        return type(e), str(e)
    return str(r.dtype).split(".")[-1], r.tolist()


CALLS = {
    "addmm": lambda L, d, b, a: L.addmm(L.tensor([[1, 2], [3, 4]], dtype=d),
                                        L.tensor([[1, -2], [3, 4]], dtype=d),
                                        L.tensor([[5, 2], [1, 7]], dtype=d), beta=b, alpha=a),
    "addmv": lambda L, d, b, a: L.addmv(L.tensor([1, 2], dtype=d), L.tensor([[1, 2], [3, 4]], dtype=d),
                                        L.tensor([3, 1], dtype=d), beta=b, alpha=a),
    "addbmm": lambda L, d, b, a: L.addbmm(L.tensor([[1, 2], [3, 4]], dtype=d),
                                          L.arange(8, dtype=d).reshape(2, 2, 2),
                                          L.ones(2, 2, 2, dtype=d), beta=b, alpha=a),
    "baddbmm": lambda L, d, b, a: L.baddbmm(L.tensor([[1, 2], [3, 4]], dtype=d),
                                            L.arange(8, dtype=d).reshape(2, 2, 2),
                                            L.ones(2, 2, 2, dtype=d), beta=b, alpha=a),
    "addr": lambda L, d, b, a: L.addr(L.tensor([[1, 2], [3, 4]], dtype=d), L.tensor([1, 2], dtype=d),
                                      L.tensor([3, 1], dtype=d), beta=b, alpha=a),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 1), (1, 1.5), (2.7, -1.2), (2, 3), (0, 2),
                                        (True, False)])
def test_integer_addmm_family(name, dtype, beta, alpha):
    f = CALLS[name]
    t = _run(lambda L: f(L, getattr(L, dtype), beta, alpha), torch)
    g = _run(lambda L: f(L, getattr(L, dtype), beta, alpha), tg)
    if isinstance(t[0], type):
        assert g[0] is t[0] and t[1] in g[1], (g, t)
    else:
        assert g == t


@pytest.mark.parametrize("beta,alpha", [(True, True), (False, True), (True, False), (2, 1), (0, 3)])
def test_bool_addr(beta, alpha):
    def f(L):
        return L.addr(L.tensor([[False, True], [True, False]]), L.tensor([True, False]),
                      L.tensor([True, True]), beta=beta, alpha=alpha)
    assert _run(f, tg) == _run(f, torch)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_float_addmm_family_unchanged(beta, alpha):
    rng = np.random.default_rng(0)
    x, a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 5, 4))
    rt = torch.addbmm(torch.tensor(x), torch.tensor(a), torch.tensor(b), beta=beta, alpha=alpha)
    rg = tg.addbmm(tg.tensor(x), tg.tensor(a), tg.tensor(b), beta=beta, alpha=alpha)
    np.testing.assert_allclose(rg.numpy(), rt.numpy(), rtol=1e-12)

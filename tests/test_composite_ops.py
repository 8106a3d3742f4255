"""Composite torch functions against torch: lerp, addcmul, addcdiv, addmm, mv, ravel, tile,
broadcast_tensors (values and gradients), isclose and count_nonzero (values), mv's error.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same


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

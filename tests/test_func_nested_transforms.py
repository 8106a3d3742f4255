"""Nested torch.func transforms against torch.func: jacrev(jacfwd), jacfwd(jacfwd),
jacrev(jacrev), jacfwd(jacrev), hessian, of scalar and vector functions, float64 and
float32.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _helpers import assert_close, to_numpy


# ---- nested function transforms ------------------------------------------------------
_FUNCS = {
    "cubesum": lambda W, x: (x ** 3).sum(),
    "vector": lambda W, x: x ** 3 * x.sin().flip(0),
    "mlp": lambda W, x: ((W @ x).tanh() * 2).softmax(-1),
    "lse": lambda W, x: (W * x).logsumexp(1) + (W.sum() * x).sigmoid().sum(),
    "matrix": lambda W, x: (W.t() @ W) @ x.exp(),
}


_NESTINGS = {
    "jacrev(jacfwd)": lambda F, f, n: F.jacrev(F.jacfwd(f, argnums=n), argnums=n),
    "jacfwd(jacfwd)": lambda F, f, n: F.jacfwd(F.jacfwd(f, argnums=n), argnums=n),
    "jacrev(jacrev)": lambda F, f, n: F.jacrev(F.jacrev(f, argnums=n), argnums=n),
    "jacfwd(jacrev)": lambda F, f, n: F.jacfwd(F.jacrev(f, argnums=n), argnums=n),
    "hessian": lambda F, f, n: F.hessian(f, argnums=n),
}


def test_issue_example_jacrev_of_jacfwd():
    x = tg.tensor([1., 2.])
    h = tg.func.jacrev(tg.func.jacfwd(lambda x: (x ** 3).sum()))(x)
    th = torch.func.jacrev(torch.func.jacfwd(lambda x: (x ** 3).sum()))(torch.tensor([1., 2.]))
    assert_close(h, th)
    np.testing.assert_array_equal(to_numpy(h), [[6., 0.], [0., 12.]])


@pytest.mark.parametrize("nesting", list(_NESTINGS))
@pytest.mark.parametrize("fname", list(_FUNCS))
@pytest.mark.parametrize("argnum", [0, 1])
def test_nested_jacobians_match_torch_func(nesting, fname, argnum):
    got = {}
    for L, F in ((tg, tg.func), (torch, torch.func)):
        W = L.tensor(np.arange(6.).reshape(2, 3) / 7 - 0.3, dtype=L.float64)
        x = L.tensor([0.3, -1.2, 0.7], dtype=L.float64)
        got[L] = _NESTINGS[nesting](F, _FUNCS[fname], argnum)(W, x)
    assert tuple(got[tg].shape) == tuple(got[torch].shape)
    assert_close(got[tg], got[torch])


def test_hessian_of_vector_output_float32():
    got = {}
    for L, F in ((tg, tg.func), (torch, torch.func)):
        x = L.tensor([0.3, -1.2, 0.7])
        got[L] = F.hessian(lambda x: x.tanh() * x.sum())(x)
    assert tuple(got[tg].shape) == (3, 3, 3)
    assert_close(got[tg], got[torch], rtol=1e-5, atol=1e-6)

"""Against torch: matrix norms of empty matrices (the max over an empty dim is 0, the min
raises), slogdet's sign output on the graph with a zero gradient, and quantile /
nanquantile differentiable in a tensor q (linear interpolation; the other modes give q
no gradient).
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same

INF = float("inf")


# ---- matrix norms of empty matrices -------------------------------------------------------
@pytest.mark.parametrize("shape", [(0, 0), (5, 0), (0, 5), (3, 0, 4), (2, 4, 0)])
@pytest.mark.parametrize("ord", [1, -1, 2, -2, INF, -INF, "fro", "nuc"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_of_empty_matrices(shape, ord, keepdim):
    res = {}
    for lib in (tg, torch):
        x = lib.zeros(shape, dtype=lib.float64)
        try:
            res[lib] = lib.linalg.matrix_norm(x, ord, keepdim=keepdim)
        except (RuntimeError, IndexError) as e:
            res[lib] = e
    if isinstance(res[torch], Exception):
        assert type(res[tg]) is type(res[torch]), res[tg]
    else:
        _same(res[tg], res[torch])


@pytest.mark.parametrize("ord", [1, 2, INF])
def test_linalg_norm_of_an_empty_matrix_and_its_gradient(ord):
    res = {}
    for lib in (tg, torch):
        x = lib.zeros((4, 0), dtype=lib.float64, requires_grad=True)
        y = lib.linalg.norm(x, ord)
        # torch's ord 1 and 2 of an empty matrix is a constant; tapegrad's has a graph
        # (of an empty input: its gradient is empty)
        res[lib] = (y, lib.autograd.grad(y, [x])[0] if y.requires_grad else lib.zeros(
            (4, 0), dtype=lib.float64))
    for a, b in zip(res[tg], res[torch]):
        _same(a, b)


# ---- slogdet's sign -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
def test_slogdet_sign_is_differentiable_with_zero_gradient(shape):
    rng = np.random.default_rng(0)
    A = rng.standard_normal(shape)
    res = {}
    for lib in (tg, torch):
        a = lib.tensor(A, requires_grad=True)
        sign, logabs = lib.linalg.slogdet(a)
        assert sign.requires_grad
        # torch's rule gives the sign no gradient (None, "unused"); tapegrad's is zeros
        g_sign = lib.autograd.grad(sign.sum() * 3, [a], allow_unused=True)[0]
        if g_sign is None:
            g_sign = lib.zeros(shape, dtype=lib.float64)
        sign, logabs = lib.linalg.slogdet(a)
        g_both = lib.autograd.grad((sign * 2).sum() + logabs.sum(), [a])[0]
        res[lib] = (sign, logabs, g_sign, g_both)
    for a, b in zip(res[tg], res[torch]):
        _same(a, b, 1e-10, 1e-10)


def test_slogdet_sign_under_no_grad_and_logdet():
    A = np.array([[0.0, 2.0], [3.0, 1.0]])
    with tg.no_grad():
        assert not tg.linalg.slogdet(tg.tensor(A, requires_grad=True)).sign.requires_grad
    _same(tg.logdet(tg.tensor(A)), torch.logdet(torch.tensor(A)))


# ---- quantile's gradient for q -------------------------------------------------------------
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("q_shape,dim,keepdim", [((2,), None, False), ((), None, False),
                                                 ((3,), 1, True), ((), 0, False)])
def test_quantile_gradient_for_q(fn, interpolation, q_shape, dim, keepdim):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 5))
    if fn == "nanquantile":
        X[1, 2] = np.nan
    Q = rng.uniform(0, 1, q_shape)
    res = {}
    for lib in (tg, torch):
        x, q = lib.tensor(X, requires_grad=True), lib.tensor(Q, requires_grad=True)
        y = getattr(lib, fn)(x, q, dim=dim, keepdim=keepdim, interpolation=interpolation)
        cot = lib.tensor(np.arange(1.0, y.numel() + 1).reshape(tuple(y.shape)))
        gx, gq = lib.autograd.grad(y, [x, q], cot, allow_unused=True)
        res[lib] = (y, gx, gq)
    _same(res[tg][0], res[torch][0])
    _same(res[tg][1], res[torch][1])
    gq_tg, gq_th = res[tg][2], res[torch][2]
    if gq_th is None:
        assert gq_tg is None or not np.any(gq_tg.numpy())
    else:
        _same(gq_tg, gq_th)

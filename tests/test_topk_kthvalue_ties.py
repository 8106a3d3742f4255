"""topk and kthvalue against torch where a row holds equal values: the indices torch's
CPU selections return (not a stable sort's), along any dim, largest or smallest, NaN,
both topk paths (partial_sort when k * 64 <= n, else nth_element + sort); 0-d inputs;
gradients of the values.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same


def _both(arr):
    return tg.tensor(arr), torch.tensor(arr)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", ["int64", "int8", "float32", "float64"])
def test_topk_indices_among_ties_are_torchs(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = [(5, 10, 5), (3, 200), (40,), (2, 300, 2)][seed % 4]
    arr = rng.integers(-3, 4, shape).astype(dtype)
    if dtype.startswith("float") and seed % 2:
        arr[rng.random(shape) < 0.1] = np.nan
    for dim in range(-len(shape), len(shape)):
        n = shape[dim]
        for k in sorted({min(k, n) for k in (1, 2, 3, n // 64, n // 2, n - 1, n)} - {0}):
            for largest in (True, False):
                g, t = _both(arr)
                got, want = g.topk(k, dim, largest), t.topk(k, dim, largest)
                _same(got.values, want.values, 0, 0)
                _same(got.indices, want.indices, 0, 0)


def test_topk_unsorted_among_ties_gives_torchs_indices():
    arr = np.array([3, 1, 3, 2, 3, 1, 3, 0, 3, 3])
    g, t = _both(arr)
    for k in range(1, 11):
        _same(g.topk(k, sorted=False).indices, t.topk(k, sorted=False).indices, 0, 0)


def test_topk_all_equal_and_without_ties():
    for arr in (np.zeros(100, np.int64), np.zeros(10), np.arange(10.0)[::-1].copy()):
        g, t = _both(arr)
        for k in (0, 1, 3, len(arr)):
            _same(g.topk(k).indices, t.topk(k).indices, 0, 0)
            _same(g.topk(k, largest=False).indices, t.topk(k, largest=False).indices, 0, 0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", ["int64", "uint8", "float64"])
def test_kthvalue_index_among_ties_is_torchs(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = [(5, 10, 5), (3, 57), (31,)][seed % 3]
    arr = rng.integers(0, 5, shape).astype(dtype)
    if dtype == "float64" and seed % 2:
        arr[rng.random(shape) < 0.1] = np.nan
    for dim in range(-len(shape), len(shape)):
        for k in sorted({1, 2, shape[dim] // 2, shape[dim]} - {0}):
            for keepdim in (False, True):
                g, t = _both(arr)
                got, want = g.kthvalue(k, dim, keepdim), t.kthvalue(k, dim, keepdim)
                _same(got.values, want.values, 0, 0)
                _same(got.indices, want.indices, 0, 0)


@pytest.mark.parametrize("args", [(1,), (1, 0), (1, -1, True)])
def test_kthvalue_and_topk_of_a_0d_input(args):
    res = {}
    for lib in (tg, torch):
        x = lib.tensor(-4.5, dtype=lib.float64, requires_grad=True)
        v, i = lib.kthvalue(x, *args)
        (v * 3).backward()
        res[lib] = (v, i, x.grad)
    for a, b in zip(res[tg], res[torch]):
        _same(a, b)
    g, t = _both(np.array(2.0))
    _same(g.topk(1).indices, t.topk(1).indices, 0, 0)


def test_tied_values_gradients_go_to_torchs_indices():
    arr = np.array([[2.0, 1.0, 2.0, 2.0, 0.0], [1.0, 1.0, 1.0, 3.0, 1.0]])
    res = {}
    for lib in (tg, torch):
        x = lib.tensor(arr, requires_grad=True)
        v = x.topk(2, 1).values
        w = x.kthvalue(3, 1).values
        ((v * lib.tensor([[1.0, 10.0]], dtype=lib.float64)).sum() + (w * 100).sum()).backward()
        res[lib] = x.grad
    _same(res[tg], res[torch])

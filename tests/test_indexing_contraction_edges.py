"""Edge inputs torch accepts in indexing and contractions, against torch: gather with an
empty index (any dtype, any rank), index_add on 0-d tensors and with a negative integer
alpha, tensordot contracting a size-1 dim with a larger one, einsum's integer result
dtype (int64 where torch sums a dim out with Tensor.sum), as_strided reading a partial
view's storage outside it. Values and gradients.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same
from _helpers import assert_raises_as_torch


def _grads(build, *arrays):
    """build(lib, *leaves) -> output; returns {lib: (output, grads)} for a fixed cotangent."""
    res = {}
    for lib in (tg, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = build(lib, *leaves)
        cot = np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape))
        grads = lib.autograd.grad(out, leaves, lib.tensor(cot), allow_unused=True)
        res[lib] = (out, grads)
    return res


def _check(res):
    _same(res[tg][0], res[torch][0])
    for a, b in zip(res[tg][1], res[torch][1]):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            _same(a, b)


# ---- gather -------------------------------------------------------------------------------
@pytest.mark.parametrize("index_shape,dtype", [((2, 0), "uint8"), ((0,), "int64"),
                                                ((0, 3, 1), "int32"), ((2, 0), "float32")])
@pytest.mark.parametrize("x_shape", [(5,), (5, 4), ()])
def test_gather_with_an_empty_index(x_shape, index_shape, dtype):
    x = np.arange(float(np.prod(x_shape))).reshape(x_shape)
    idx = np.zeros(index_shape, dtype)
    res = _grads(lambda lib, t: lib.gather(t, 0, lib.tensor(idx)), x)
    _check(res)


def test_gather_nonempty_index_still_needs_the_inputs_rank():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            lib.gather(lib.zeros(5), 0, lib.zeros((2, 1), dtype=lib.int64))


# ---- index_add ----------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [-1, 0, 2, 0.5])
def test_index_add_of_0d_self_and_source(alpha):
    res = _grads(lambda lib, x, s: lib.index_add(x, 0, lib.tensor([0]), s, alpha=alpha),
                 np.array(-4.75), np.array(2.5))
    _check(res)


def test_index_add_0d_and_1d_mixed_is_refused_as_torch():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError):
            lib.index_add(lib.tensor(1.0), 0, lib.tensor([0]), lib.tensor([2.0]))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64"])
def test_index_add_integer_negative_alpha_wraps_as_torch(dtype):
    x = np.array([[5, 1, 6], [4, 2, 5]], dtype)
    s = np.array([[2, 9, 4], [7, 1, 5]], dtype)
    got = tg.tensor(x).index_add(1, tg.tensor([2, 0, 1]), tg.tensor(s), alpha=-1)
    want = torch.tensor(x).index_add(1, torch.tensor([2, 0, 1]), torch.tensor(s), alpha=-1)
    _same(got, want, 0, 0)



@pytest.mark.parametrize("alpha", [300, -300])
def test_index_add_integer_alpha_out_of_range_refused_as_torch(alpha):
    # torch converts alpha with Scalar::to<uint8_t>: -1 wraps, 300 and -300 are refused
    def run(L):
        return L.zeros(3, dtype=L.uint8).index_add(0, L.tensor([0]), L.ones(1, dtype=L.uint8),
                                                   alpha=alpha)
    assert_raises_as_torch(run, tg)

# ---- tensordot ----------------------------------------------------------------------------
@pytest.mark.parametrize("a_shape,b_shape,dims", [
    ((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])),
    ((3, 1), (2, 4), ([1], [0])),
    ((3, 2), (1, 4), ([1], [0])),
    ((2, 1, 3), (3, 5, 4), ([1, 2], [1, 0])),
])
def test_tensordot_contracts_a_size_1_dim_with_any_size(a_shape, b_shape, dims):
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    _check(_grads(lambda lib, a, b: lib.tensordot(a, b, dims=dims), A, B))
    ia, ib = (np.arange(np.prod(s)).reshape(s).astype(np.int32) for s in (a_shape, b_shape))
    _same(tg.tensordot(tg.tensor(ia), tg.tensor(ib), dims=dims),
          torch.tensordot(torch.tensor(ia), torch.tensor(ib), dims=dims), 0, 0)


def test_tensordot_mismatched_sizes_still_refused():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
            lib.tensordot(lib.zeros(2, 3), lib.zeros(4, 5), dims=([1], [0]))


# ---- einsum's integer result dtype --------------------------------------------------------
@pytest.mark.parametrize("eq,shapes", [
    ("i->", [(3,)]), ("i->i", [(3,)]), ("ii->i", [(2, 2)]), ("ij->j", [(2, 3)]),
    ("iji->j", [(1, 3, 1)]), ("i...->...", [(3, 3)]), ("i,i->", [(3,), (3,)]),
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,k->ik", [(2, 3), (4,)]),
    ("i,j,k->", [(2,), (3,), (4,)]), ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("ab,b,c->a", [(2, 3), (3,), (4,)]), ("ij,k->ik", [(2, 1), (1,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
])
@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "int64"])
def test_einsum_integer_result_dtype_and_values(eq, shapes, dtype):
    rng = np.random.default_rng(3)
    ops = [rng.integers(0, 5, s).astype(dtype) for s in shapes]
    _same(tg.einsum(eq, *[tg.tensor(o) for o in ops]),
          torch.einsum(eq, *[torch.tensor(o) for o in ops]), 0, 0)


# ---- as_strided on a partial view ---------------------------------------------------------
@pytest.mark.parametrize("offset", [None, 0, 3, 10])
def test_as_strided_reads_the_storage_of_a_contiguous_slice(offset):
    base = np.arange(20.0) * 1.5 - 7
    res = {}
    for lib in (tg, torch):
        b = lib.tensor(base)
        x = b[5:15].detach().requires_grad_(True)
        kw = {} if offset is None else {"storage_offset": offset}
        y = x.as_strided((2, 2), (1, 2), **kw)
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
        res[lib] = (y, x.grad)
    for a, b in zip(res[tg], res[torch]):
        _same(a, b)
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="out of bounds"):
            lib.tensor(base)[5:15].as_strided((2, 2), (1, 2), 17)

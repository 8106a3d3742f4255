"""torch's constructors with a memory layout (empty_strided, Tensor.new_empty_strided,
empty_permuted) and nonzero_static, against torch: shapes, dtypes, the strides asked
for, and torch's refusals."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch


@pytest.mark.parametrize("size,stride", [((), ()), ((2, 3), (3, 1)), ((2, 3), (1, 2)),
                                         ((5,), (4,)), ((2, 0), (3, 4)), ((3, 2, 2), (1, 2, 3)),
                                         ((4, 3), (0, 1))])
def test_empty_strided_has_the_strides(size, stride):
    want = torch.empty_strided(size, stride, dtype=torch.float64)
    got = tg.empty_strided(size, stride, dtype=tg.float64)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == tg.float64
    if 0 not in size:
        assert tuple(got.stride()) == tuple(want.stride())
    got.fill_(2.0)  # writable; the overlapping (stride 0) layout too
    assert np.all(got.numpy() == 2.0)
    assert tg.empty_strided(size, stride).dtype == tg.get_default_dtype()
    assert tg.empty_strided(size, stride, requires_grad=True).requires_grad


def test_new_empty_strided_takes_the_dtype_of_self():
    x = tg.zeros(2, dtype=tg.int32)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.dtype == tg.int32 and tuple(y.stride()) == (1, 2)
    assert x.new_empty_strided((2,), (1,), dtype=tg.float16).dtype == tg.float16


@pytest.mark.parametrize("size,layout", [((), ()), ((0,), (0,)), ((1, 3, 5), (0, 2, 1)),
                                         ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3), (1, 0))])
def test_empty_permuted_lays_out_as_torch(size, layout):
    want = torch.empty_permuted(size, layout, dtype=torch.float32)
    got = tg.empty_permuted(size, layout, dtype=tg.float32)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == tg.float32
    if 0 not in size:  # (an empty tensor's strides are a convention of its own in torch)
        assert tuple(got.stride()) == tuple(want.stride())


@pytest.mark.parametrize("call", [
    lambda L: L.empty_strided((2, 3), (1,)),
    lambda L: L.empty_strided((2, 3), (1, -1)),
    lambda L: L.empty_permuted((2,), (0, 1)),
    lambda L: L.empty_permuted((2,), (3,)),
    lambda L: L.empty_permuted((2, 3), (0, 0)),
    lambda L: L.nonzero_static(L.ones(3), size=-1),
])
def test_refusals_as_torch(call):
    assert_raises_as_torch(call, tg, chars=25, same_type=True)


@pytest.mark.parametrize("data", [[1, 0, 2], [[0, 3], [4, 0]], [], 5, 0, [[True, False]]])
@pytest.mark.parametrize("size", [0, 1, 2, 5])
@pytest.mark.parametrize("fill_value", [-1, 9])
def test_nonzero_static_as_torch(data, size, fill_value):
    want = torch.nonzero_static(torch.tensor(data), size=size, fill_value=fill_value)
    got = tg.nonzero_static(tg.tensor(data), size=size, fill_value=fill_value)
    assert got.dtype == tg.int64 and np.array_equal(got.numpy(), want.numpy())
    assert np.array_equal(tg.tensor(data).nonzero_static(size=size).numpy(),
                          torch.tensor(data).nonzero_static(size=size).numpy())

"""The in-place random fills (Tensor.uniform_/exponential_/geometric_/cauchy_/log_normal_)
against torch: the two generators differ, so each fill is compared by its distribution
(quantiles of 40,000 draws each, tolerances far above the sampling error and far below
a wrong parameter's shift), plus what is exact: self returned and its dtype kept,
generator= reproducible, and torch's refusals with its exception types."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_raises_as_torch

N = 40_000
QS = [0.1, 0.25, 0.5, 0.75, 0.9]

FILLS = [  # (method, args)
    ("uniform_", ()),
    ("uniform_", (-3.0, 5.0)),
    ("exponential_", ()),
    ("exponential_", (0.25,)),
    ("geometric_", (0.3,)),
    ("cauchy_", ()),
    ("cauchy_", (2.0, 0.5)),
    ("log_normal_", ()),
    ("log_normal_", (0.0, 0.5)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,args", FILLS, ids=[f"{n}{a}" for n, a in FILLS])
def test_distribution_as_torch(name, args, dtype):
    torch.manual_seed(0)
    tg.manual_seed(0)
    xt = torch.empty(N, dtype=getattr(torch, dtype))
    x = tg.empty(N, dtype=getattr(tg, dtype))
    assert getattr(x, name)(*args) is x and x.dtype == getattr(tg, dtype)
    getattr(xt, name)(*args)
    a, b = x.numpy().astype(float), xt.numpy().astype(float)
    qa, qb = np.quantile(a, QS), np.quantile(b, QS)
    spread = np.quantile(b, 0.75) - np.quantile(b, 0.25)
    assert np.all(np.abs(qa - qb) < 0.05 * spread + 0.05 * np.abs(qb)), (qa, qb)  # heavy tails
    assert np.isfinite(a).all()


def test_geometric_is_integral_and_from_one():
    x = tg.empty(1000, dtype=tg.int64).geometric_(0.5)
    assert x.dtype == tg.int64 and x.min().item() >= 1


@pytest.mark.parametrize("name,args", FILLS, ids=[f"{n}{a}" for n, a in FILLS])
def test_generator_reproducible(name, args):
    draws = [getattr(tg.empty(5), name)(*args, generator=tg.Generator().manual_seed(7))
             for _ in range(2)]
    assert np.array_equal(draws[0].numpy(), draws[1].numpy())


def test_uniform_equal_bounds_fill_the_bound():
    assert tg.zeros(3).uniform_(2, 2).tolist() == torch.zeros(3).uniform_(2, 2).tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(3).uniform_(3, -1),
    lambda L: L.zeros(3).uniform_(0, float("inf")),
    lambda L: L.zeros(3).uniform_(float("nan"), 1),
    lambda L: L.zeros(3).uniform_(-3e38, 3e38),
    lambda L: L.zeros(3, dtype=L.float16).uniform_(0, 1e5),
    lambda L: L.zeros(3).exponential_(0),
    lambda L: L.zeros(3).exponential_(-1),
    lambda L: L.zeros(3).geometric_(-1),
    lambda L: L.zeros(3).cauchy_(0, 0),
    lambda L: L.zeros(3).log_normal_(0, 0),
])
def test_refusals_as_torch(call):
    assert_raises_as_torch(call, tg, chars=20, same_type=True)

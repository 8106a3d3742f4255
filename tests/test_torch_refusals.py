"""Inputs torch refuses are refused here too, with torch's exception type and the start of
its message: each case runs on torch first (the oracle), then on tapegrad."""
import pytest
import torch

import tapegrad as tg


def _F(L):
    return L.nn.functional


CASES = {
    # class-index targets: int64 or uint8 only
    "cross_entropy_int32_target": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3), L.tensor([0, 1], dtype=L.int32)),
    "cross_entropy_int8_target": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3), L.tensor([0, 1], dtype=L.int8)),
    "cross_entropy_bool_target": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3), L.tensor([False, True])),
    "nll_loss_int32_target": lambda L: _F(L).nll_loss(
        L.zeros(2, 3), L.tensor([0, 1], dtype=L.int32)),
    "nll_loss_float_target": lambda L: _F(L).nll_loss(L.zeros(2, 3), L.zeros(2)),
    "cross_entropy_ignore_index_with_probabilities": lambda L: L.nn.CrossEntropyLoss(
        ignore_index=1)(L.zeros(2, 3), L.full((2, 3), 1 / 3)),
    "cross_entropy_ignore_index_0_with_probabilities": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3, 4), L.full((2, 3, 4), 1 / 3), ignore_index=0),
    # products promote nothing
    "matmul_float32_float64": lambda L: L.zeros(2, 3) @ L.zeros(3, 2, dtype=L.float64),
    "matmul_int32_int64": lambda L: L.zeros(2, 3, dtype=L.int32) @ L.zeros(3, 2, dtype=L.int64),
    "matmul_float_int": lambda L: L.zeros(2, 3) @ L.zeros(3, 2, dtype=L.int64),
    "matmul_float16_float32": lambda L: L.zeros(2, 3, dtype=L.float16) @ L.zeros(3, 2),
    "dot_float32_float64": lambda L: L.zeros(3) @ L.zeros(3, dtype=L.float64),
    "vecmat_float32_float64": lambda L: L.zeros(3) @ L.zeros(3, 2, dtype=L.float64),
    "batched_broadcast_float32_float64": lambda L: L.zeros(4, 2, 3) @ L.zeros(
        3, 2, dtype=L.float64),
    "bmm_float32_float64": lambda L: L.bmm(L.zeros(1, 2, 3), L.zeros(1, 3, 2, dtype=L.float64)),
    "mm_float32_float64": lambda L: L.mm(L.zeros(2, 3), L.zeros(3, 2, dtype=L.float64)),
    "linear_float32_input_float64_weight": lambda L: _F(L).linear(
        L.zeros(4, 2, 3), L.zeros(2, 3, dtype=L.float64)),
    "linear_float64_bias": lambda L: _F(L).linear(
        L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, dtype=L.float64)),
    "Linear_module_float64_input": lambda L: L.nn.Linear(3, 2)(L.zeros(2, 3, dtype=L.float64)),
    # batch norm in training needs eps > 0
    "batch_norm_eps_0_training": lambda L: _F(L).batch_norm(
        L.randn(4, 3), None, None, training=True, eps=0.0),
    "batch_norm_eps_negative_training": lambda L: _F(L).batch_norm(
        L.randn(4, 3), None, None, training=True, eps=-1e-5),
    "BatchNorm2d_eps_0": lambda L: L.nn.BatchNorm2d(3, eps=0)(L.randn(2, 3, 4, 4)),
    # ranges
    "arange_step_against_bounds": lambda L: L.arange(0, -3, 2),
    "arange_negative_step_against_bounds": lambda L: L.arange(0, 3, -2),
    "arange_large_start_after_end": lambda L: L.arange(1549556900, 1549556828, 1989724),
    "arange_inf_end": lambda L: L.arange(0, float("inf"), 2),
    "arange_inf_start": lambda L: L.arange(float("-inf"), 1, 2),
    "linspace_negative_steps": lambda L: L.linspace(0, 3, -1),
    "linspace_float_steps": lambda L: L.linspace(0, 3, 1.0),
    "linspace_1d_ends": lambda L: L.linspace(L.tensor([1, 1]), L.tensor([3, 3]), 1),
    "logspace_float_steps": lambda L: L.logspace(0, 3, 1.0),
    "logspace_1d_ends": lambda L: L.logspace(L.tensor([1, 1]), L.tensor([3, 3]), 1),
    "eye_negative_n": lambda L: L.eye(-1),
    "eye_negative_m": lambda L: L.eye(0, -3),
}

# the start of torch's message, where it is stable across releases
MESSAGES = {
    "cross_entropy_int32_target": "expected target dtype to be Long or Byte, but got Int",
    "nll_loss_int32_target": "expected target dtype to be Long or Byte, but got Int",
    "cross_entropy_ignore_index_with_probabilities":
        "ignore_index is not supported for floating point target",
    "matmul_float32_float64": "expected m1 and m2 to have the same dtype",
    "dot_float32_float64": "dot : expected both vectors to have same dtype",
    "linear_float32_input_float64_weight": "expected m1 and m2 to have the same dtype",
    "batch_norm_eps_0_training": "batch_norm eps must be positive during training",
    "arange_step_against_bounds": "upper bound and lower bound inconsistent with step sign",
    "arange_inf_end": "unsupported range",
    "linspace_negative_steps": "number of steps must be non-negative",
    "linspace_1d_ends": "linspace only supports 0-dimensional start and end tensors",
    "eye_negative_n": "n must be greater or equal to 0, got -1",
    "eye_negative_m": "m must be greater or equal to 0, got -3",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_like_torch(name):
    case = CASES[name]
    with pytest.raises(Exception) as want:
        case(torch)
    with pytest.raises(Exception) as got:
        case(tg)
    assert type(got.value).__name__ == type(want.value).__name__, (
        f"{name}: tapegrad raised {type(got.value).__name__}: {got.value}; "
        f"torch {type(want.value).__name__}: {want.value}")
    if name in MESSAGES:
        assert str(want.value).startswith(MESSAGES[name])
        assert str(got.value).startswith(MESSAGES[name]), str(got.value)


ACCEPTED = {
    "cross_entropy_uint8_target": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3), L.tensor([0, 1], dtype=L.uint8)),
    "cross_entropy_default_ignore_index_with_probabilities": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3), L.full((2, 3), 1 / 3)),
    "cross_entropy_negative_ignore_index_with_probabilities": lambda L: _F(L).cross_entropy(
        L.zeros(2, 3), L.full((2, 3), 1 / 3), ignore_index=-1),
    "matmul_int64": lambda L: L.ones(2, 3, dtype=L.int64) @ L.ones(3, 2, dtype=L.int64),
    "batch_norm_eps_0_eval": lambda L: _F(L).batch_norm(
        L.randn(4, 3), L.zeros(3), L.ones(3), training=False, eps=0.0),
    "batch_norm_tiny_eps": lambda L: _F(L).batch_norm(
        L.randn(4, 3), None, None, training=True, eps=1e-30),
    "arange_empty": lambda L: L.arange(3, 3, -1),
    "arange_negative_step": lambda L: L.arange(3, 0, -1),
    "linspace_0d_tensor_ends": lambda L: L.linspace(L.tensor(1), L.tensor(3.0), 3),
    "linspace_zero_steps": lambda L: L.linspace(0, 3, 0),
    "eye_zero": lambda L: L.eye(0, 2),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_like_torch(name):
    want, got = ACCEPTED[name](torch), ACCEPTED[name](tg)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if "batch_norm" not in name:  # random input
        assert got.reshape(-1).tolist() == pytest.approx(want.reshape(-1).tolist())

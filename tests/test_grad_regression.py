"""Gradients bit-identical to the pre-optimisation engine, and close to PyTorch's.

tests/data/grad_regression.npz was written by `python tests/_grad_regression.py --write`
running main's code at da57af1, before the engine-overhead work (issue 15): the engine may
become faster but must compute the same bits. The gpt workload's gradients were written
again (same states, one BLAS thread, as under pytest) when GELU's float32 kernel changed
its formula on purpose (issue 30: two passes fewer; the gradients moved by <= 1.1e-7 and
still match PyTorch's within the tolerance below), and again when attention's short-row
softmax summed its rows in another order (<= 1.1e-7; regenerate under pytest: the bits of
a plain script's run differ); mnist_mlp and makemore are da57af1's. Each workload runs two backward passes (the
second accumulates into the existing `.grad`), so both the fresh-gradient path (the
steal) and the in-place accumulation are covered. PyTorch is the oracle for the values
themselves (a tolerance: float32 sums in a different order).
"""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import _grad_regression as R
from tapegrad import _ckernels
from test_char_models import TorchGPT, TorchMLP


@pytest.fixture(scope="module")
def fixture():
    return np.load(R.FIXTURE)


@pytest.mark.parametrize("name", list(R.WORKLOADS))
def test_gradients_bit_identical_to_branch_point(fixture, name, monkeypatch):
    # the NumPy kernels the fixture was written with: a C kernel (tapegrad/_ckernels, when
    # built) differs from its NumPy twin in the last bit of exp (tests/test_ckernels.py)
    monkeypatch.setattr(_ckernels, "LIB", None)
    got = R.run(name, R.state_of(fixture, name))
    keys = [k for k in fixture.files if k.startswith(name + "/")]
    assert len(keys) == len(got)
    for key in keys:
        ref, new = fixture[key], got[key.split("/", 1)[1]]
        assert new.dtype == ref.dtype and new.shape == ref.shape, key
        if not np.array_equal(new, ref):
            diff = np.max(np.abs(new.astype(np.float64) - ref))
            pytest.fail(f"{key}: not bit-identical to the branch point (max |diff| {diff:g})")


def _torch_model(name):
    if name == "mnist_mlp":
        return tnn.Sequential(tnn.Flatten(), tnn.Linear(784, 16), tnn.ReLU(),
                              tnn.Linear(16, 8), tnn.ReLU(), tnn.Linear(8, 10))
    if name == "makemore":
        return TorchMLP(n_hidden=40)
    return TorchGPT(27, 8, n_layer=2, n_embd=16, n_head=4)


@pytest.mark.parametrize("name", list(R.WORKLOADS))
def test_gradients_match_torch(fixture, name):
    state = R.state_of(fixture, name)
    theirs = _torch_model(name)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in state.items()}, strict=True)
    x = torch.tensor(fixture[f"{name}/x"])
    y = torch.tensor(fixture[f"{name}/y"])
    got = R.run(name, state)
    for step in (0, 1):
        out = theirs(x)
        loss = TF.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        np.testing.assert_allclose(fixture[f"{name}/loss{step}"], loss.item(), rtol=1e-5)
        for k, p in theirs.named_parameters():
            np.testing.assert_allclose(got[f"grad{step}.{k}"], p.grad.numpy(), rtol=1e-4,
                                       atol=1e-6, err_msg=f"{name} pass {step}: {k}")

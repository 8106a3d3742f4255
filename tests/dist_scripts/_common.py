"""Shared by the rank scripts: models built twice (tapegrad and torch) from the same
NumPy weights, and float64 comparison helpers."""
import numpy as np
import torch

import tapegrad as tg


def tg_mlp(seed, sizes=(5, 7, 3)):
    tg.manual_seed(seed)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(tg.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(tg.nn.Tanh())
    return tg.nn.Sequential(*layers).double()


def torch_copy(tg_model, torch_model):
    """Load tapegrad's weights into the same-shaped torch model (by state dict key)."""
    sd = {k: torch.tensor(np.asarray(v.data)) for k, v in tg_model.state_dict().items()}
    torch_model.load_state_dict(sd)
    return torch_model


def torch_mlp_like(tg_model, sizes=(5, 7, 3)):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.Tanh())
    return torch_copy(tg_model, torch.nn.Sequential(*layers).double())


def check_grads(tg_model, torch_model, what, rtol=1e-10, atol=1e-12):
    tgp = dict(tg_model.named_parameters())
    for name, p in torch_model.named_parameters():
        q = tgp[name]
        if p.grad is None:
            assert q.grad is None, f"{what}: {name}: torch has no grad, tapegrad has one"
            continue
        assert q.grad is not None, f"{what}: {name}: tapegrad grad is None"
        np.testing.assert_allclose(np.asarray(q.grad.data), p.grad.numpy(), rtol=rtol,
                                   atol=atol, err_msg=f"{what}: grad of {name}")


def check_params(tg_model, torch_model, what, rtol=1e-10, atol=1e-12):
    tgp = dict(tg_model.named_parameters())
    for name, p in torch_model.named_parameters():
        np.testing.assert_allclose(np.asarray(tgp[name].data), p.detach().numpy(), rtol=rtol,
                                   atol=atol, err_msg=f"{what}: value of {name}")


def data(n, d_in=5, classes=3, seed=123):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d_in)), rng.integers(0, classes, size=n)

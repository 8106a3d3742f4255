"""Third derivatives of the fused nn kernels vs PyTorch: they run the rules of the
table entries the fused rules read their saved values through (norm_xhat, norm_invstd,
softmax_rows, attention_probs, softplus_neg, gelu_backward), which second order alone
does not reach. Also: those rules contain no NumPy-only branch (issue 11).

NOTE: torch's native layer_norm is wrong at third order (2.13.0 CPU: off by ~50 on the
case below, while its composite mean/var/sqrt formula agrees with tapegrad to 1e-13),
so layer_norm is compared with that composite written in torch.
"""
import pathlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

RNG = np.random.default_rng(11)
A = RNG.standard_normal((4, 5))
W = RNG.standard_normal(5)
TARGET = np.array([0, 3, 4, 1])
K, V = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 3))
Y, PW = RNG.random((4, 5)), RNG.random(5) + 0.5


def _three(lib, f, x):
    g1, = lib.autograd.grad(f(lib, x), x, create_graph=True)
    g2, = lib.autograd.grad((g1 * g1).sum() + (g1 ** 3).sum(), x, create_graph=True)
    g3, = lib.autograd.grad((g2 * g2).sum(), x)
    return g1, g2, g3


def _ln_torch_composite(x):
    xc = x - x.mean(-1, keepdim=True)
    return xc / torch.sqrt((xc * xc).mean(-1, keepdim=True) + 1e-5) * torch.tensor(W)


def _fn(lib):
    return F if lib is tg else TF


CASES = {
    "layer_norm": (lambda lib, x: (F.layer_norm(x, (5,), tg.tensor(W), None) * tg.tensor(A)).sum(),
                   lambda lib, x: (_ln_torch_composite(x) * torch.tensor(A)).sum()),
    "batch_norm": lambda lib, x: (_fn(lib).batch_norm(x, None, None, lib.tensor(W), None,
                                                      training=True) * lib.tensor(A)).sum(),
    "cross_entropy": lambda lib, x: _fn(lib).cross_entropy(x, lib.tensor(TARGET),
                                                           label_smoothing=0.1),
    "cross_entropy_weight_none": lambda lib, x: _fn(lib).cross_entropy(
        x, lib.tensor(TARGET), weight=lib.tensor(W * W + 0.1), reduction="none").pow(2).sum(),
    "sdpa_causal": lambda lib, q: (_fn(lib).scaled_dot_product_attention(
        q, lib.tensor(K), lib.tensor(V), is_causal=True) * lib.tensor(A[:, :3])).sum(),
    "bce_logits_pos_weight": lambda lib, x: _fn(lib).binary_cross_entropy_with_logits(
        x, lib.tensor(Y), pos_weight=lib.tensor(PW)),
    "gelu": lambda lib, x: _fn(lib).gelu(x).sum(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_third_order_matches_torch(name):
    f = CASES[name]
    f_tg, f_torch = f if isinstance(f, tuple) else (f, f)
    ours = _three(tg, f_tg, tg.tensor(A, requires_grad=True))
    theirs = _three(torch, f_torch, torch.tensor(A, requires_grad=True))
    # atol: third derivatives here reach ~1e3; float64 round-off leaves ~1e-11 near zeros
    for order, (u, v) in enumerate(zip(ours, theirs), 1):
        np.testing.assert_allclose(u.detach().numpy(), v.detach().numpy(), rtol=1e-9,
                                   atol=1e-9, err_msg=f"{name}: derivative of order {order}")


def test_rules_have_no_numpy_only_branch():
    rules = pathlib.Path(tg.__file__).parent / "ops" / "rules"
    for mod in ("nn.py", "conv.py", "attention.py", "indexing.py"):
        text = (rules / mod).read_text()
        assert "xp is np" not in text and "_is_np" not in text, mod

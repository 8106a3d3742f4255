"""torch.clamp_min / clamp_max (values and gradients) and floor_divide with its `//`
operator against torch.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


RNG = np.random.default_rng(5)


A = RNG.standard_normal((3, 4))


def test_clamp_min_max_values_and_grads_match_torch():
    outs = []
    for L in (tg, torch):
        x = L.tensor(A, requires_grad=True)
        y = x.clamp_min(-0.3) * 2 + L.clamp_max(x, 0.4) * 3
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)


@pytest.mark.parametrize("a,b", [(A * 3, 0.7), (A * 3, A[::-1] + 2.0),
                                 (np.arange(-5, 7).reshape(3, 4), 3)])
def test_floor_divide_and_operator_match_torch(a, b):
    tb = torch.tensor(b) if isinstance(b, np.ndarray) else b
    gb = tg.tensor(b) if isinstance(b, np.ndarray) else b
    ref = torch.tensor(a) // tb
    ours = tg.tensor(a) // gb
    assert str(ours.dtype) == str(ref.dtype).replace("torch.", "tapegrad.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    np.testing.assert_array_equal(tg.floor_divide(tg.tensor(a), gb).numpy(), ref.numpy())

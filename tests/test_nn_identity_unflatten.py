"""nn.Identity and nn.Unflatten against PyTorch 2.13: values, gradients, reprs.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _nn_module_pairs import _grads_match


# ---- Identity, Unflatten ---------------------------------------------------------------------
def test_identity_and_unflatten():
    x = tg.randn(2, 6)
    assert tg.nn.Identity(54, unused="x")(x) is x
    for size in ((2, 3), (2, -1), [3, 2]):
        ours, theirs = tg.nn.Unflatten(1, size), torch.nn.Unflatten(1, size)
        assert repr(ours) == repr(theirs)
        _grads_match(ours, theirs, np.random.default_rng(0).standard_normal((4, 6)),
                     np.float64, f"Unflatten {size}")
    _grads_match(tg.nn.Unflatten(-1, (2, 2)), torch.nn.Unflatten(-1, (2, 2)),
                 np.random.default_rng(0).standard_normal((3, 5, 4)), np.float64, "Unflatten -1")
    with pytest.raises(TypeError, match="must be a tuple of ints, but found type int"):
        tg.nn.Unflatten(1, 3)
    with pytest.raises(TypeError, match="found element of type float at pos 1"):
        tg.nn.Unflatten(1, (2, 3.0))
    with pytest.raises(RuntimeError, match=r"don't multiply up to the size of dim 1 \(5\)"):
        tg.nn.Unflatten(1, (2, 3))(tg.zeros(2, 5))

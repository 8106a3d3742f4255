"""Forward-mode AD's dual tensors against torch.autograd.forward_ad: unpack_dual returns
the tangent given to make_dual, also after the tangent's data is reassigned.
"""
import numpy as np
import torch

import tapegrad as tg

from _helpers import assert_close


LIBS = (tg, torch)


# ---- forward-mode identity ----------------------------------------------------------------
def test_unpack_dual_returns_the_tangent_given():
    for L in LIBS:
        fwAD = L.autograd.forward_ad
        p, t = L.randn(3), L.randn(3)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t)
            assert fwAD.unpack_dual(d).tangent is t  # PyTorch's forward-AD tutorial
            assert fwAD.unpack_dual(d).tangent is fwAD.unpack_dual(d).tangent
            y = d.sin() * 2
            assert fwAD.unpack_dual(y).tangent is fwAD.unpack_dual(y).tangent
            assert fwAD.unpack_dual(d).primal is not p
            with L.no_grad():
                t.mul_(100)  # shares memory with the dual's tangent (no copy)
            assert_close(fwAD.unpack_dual(d).tangent, t)
        assert fwAD.unpack_dual(d).tangent is None


def test_unpack_dual_after_tangent_data_reassigned():
    fwAD = tg.autograd.forward_ad
    p, t = tg.randn(3), tg.randn(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, t)
        old = t.numpy(force=True)
        t.data = tg.zeros(3)  # t no longer shows the dual's tangent
        tan = fwAD.unpack_dual(d).tangent
        assert tan is not t and tan.numpy() is not None
        np.testing.assert_array_equal(tan.numpy(), old)

"""torch.einsum's sublist form (operands interleaved with lists of subscripts) against
torch: values and gradients, and a bad subscript refused with torch's error.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same


# ---- einsum sublist form --------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda a, b: (a, [0, 1], b, [1, 2], [0, 2]),
    lambda a, b: (a, [0, 1], b, [1, 2]),
    lambda a, b: (a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
    lambda a, b: (a, [27, 3], [3]),
    lambda a, b: (a, [30, 1]),
    lambda a, b: (a, [0, 1], a, [0, 1], [0]),
], ids=["matmul", "implicit", "ellipsis", "sum_lower", "transpose_implicit", "rowdot"])
def test_einsum_sublist_form_values_and_gradients(build):
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    res = {}
    for lib in (tg, torch):
        a, b = lib.tensor(A, requires_grad=True), lib.tensor(B, requires_grad=True)
        y = lib.einsum(*build(a, b))
        (y * y).sum().backward()
        res[lib] = (y, a.grad, b.grad)
    _same(res[tg][0], res[torch][0])
    for g_tg, g_th in zip(res[tg][1:], res[torch][1:]):
        assert (g_tg is None) == (g_th is None)
        if g_th is not None:
            _same(g_tg, g_th)


def test_einsum_sublist_bad_subscript_is_refused_as_torch():
    for lib in (tg, torch):
        with pytest.raises(ValueError, match=r"valid range \[0, 52\)"):
            lib.einsum(lib.ones(2, 3), [0, 52])

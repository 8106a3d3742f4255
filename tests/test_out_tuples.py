"""`out=` for the functions returning (values, indices) (max, min, sort, topk, kthvalue,
median) against torch: an empty or sized out tuple is written and returned;
refused when grad is needed, and for a single tensor.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same


# ---- out= with (values, indices) ------------------------------------------------------------
_X = np.array([[1.0, 5.0, 3.0, 0.5], [4.0, 2.0, 6.0, 6.5], [0.0, -1.0, 2.0, 9.0]])


@pytest.mark.parametrize("call", [
    lambda lib, x, o: lib.max(x, 1, out=o),
    lambda lib, x, o: lib.min(x, 0, out=o),
    lambda lib, x, o: lib.max(x, dim=1, keepdim=True, out=o),
    lambda lib, x, o: lib.sort(x, 1, descending=True, out=o),
    lambda lib, x, o: lib.topk(x, 2, out=o),
    lambda lib, x, o: lib.kthvalue(x, 2, 1, out=o),
    lambda lib, x, o: lib.median(x, 1, out=o),
], ids=["max", "min", "max_keepdim", "sort", "topk", "kthvalue", "median"])
@pytest.mark.parametrize("empty", [True, False], ids=["empty_out", "sized_out"])
def test_out_tuple_is_written_and_returned(call, empty):
    got = {}
    # an empty out is resized silently; a sized one has the result's shape (no warning)
    shape = (0,) if empty else tuple(call(torch, torch.tensor(_X), None)[0].shape)
    for lib in (tg, torch):
        x = lib.tensor(_X)
        v = lib.zeros(shape, dtype=lib.float64)
        i = lib.zeros(shape, dtype=lib.int64)
        r = call(lib, x, (v, i))
        assert r[0] is v and r[1] is i and r.values is v and r.indices is i
        got[lib] = (v, i)
    _same(got[tg][0], got[torch][0])
    _same(got[tg][1], got[torch][1])


def test_out_tuple_refused_when_grad_is_needed_and_for_a_single_tensor():
    x = tg.tensor(_X, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tg.max(x, 1, out=(tg.empty(0), tg.empty(0, dtype=tg.int64)))
    with pytest.raises(TypeError, match="tuple of Tensors"):
        tg.max(tg.tensor(_X), 1, out=tg.empty(0))
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.exp(tg.tensor(_X), out=(tg.empty(0),))
    # the single-tensor forms still take a tensor
    o_tg, o_th = tg.empty(0, dtype=tg.float64), torch.empty(0, dtype=torch.float64)
    _same(tg.max(tg.tensor(_X), out=o_tg), torch.max(torch.tensor(_X), out=o_th))

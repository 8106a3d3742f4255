"""scatter / scatter_add on a 0-d self against torch (a one-element vector): values and
gradients for self and src, with a 0-d or one-element index."""
import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.mark.parametrize("name", ["scatter", "scatter_add"])
# (a src larger than the index, or a 0-d index with a 1-element src: torch's own backward fails)
@pytest.mark.parametrize("index_shape,src_shape", [((), ()), ((1,), (1,))])
def test_scatter_zero_dim_self(name, index_shape, src_shape):
    x, v = 1.5, np.full(src_shape, -2.25)
    outs = []
    for L in (torch, tg):
        a = L.tensor(x, dtype=L.float64, requires_grad=True)
        s = L.tensor(v, dtype=L.float64, requires_grad=True)
        idx = L.zeros(index_shape, dtype=L.int64)
        r = getattr(L, name)(a, 0, idx, s)
        (r * 3.0).sum().backward()
        outs.append((tuple(r.shape), r.detach().numpy(), a.grad.numpy(), s.grad.numpy()))
    (sg, vg, ag, srcg), (st, vt, at, srct) = outs[1], outs[0]
    assert sg == st
    np.testing.assert_array_equal(vg, vt)
    np.testing.assert_array_equal(ag, at)
    np.testing.assert_array_equal(srcg, srct)


def test_scatter_zero_dim_value():
    rt = torch.scatter(torch.tensor(1.0), 0, torch.tensor(0), value=4.0)
    rg = tg.scatter(tg.tensor(1.0), 0, tg.tensor(0), value=4.0)
    assert tuple(rg.shape) == tuple(rt.shape) and rg.item() == rt.item()

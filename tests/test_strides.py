"""Tensor.stride / is_contiguous / contiguous against torch: the layouts of views
(transpose, permute, slices, expand, select, unsqueeze, reshape) and of contiguous()'s
copy; contiguous() of a non-contiguous tensor is a recorded copy (CloneBackward0) that
in-place changes do not pass through; size(dim) / stride(dim) errors as torch's."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import error_of

VIEWS = {
    "plain": lambda x: x,
    "transpose": lambda x: x.transpose(1, 2),
    "t_of_matrix": lambda x: x[0].t(),
    "permute": lambda x: x.permute(2, 0, 1),
    "slice": lambda x: x[:, 1:],
    "step_slice": lambda x: x[:, :, ::2],
    "select": lambda x: x[:, 1],
    "unsqueeze": lambda x: x.unsqueeze(1),
    "expand": lambda x: x[:, :1].expand(2, 3, 4),
    "size1_slice": lambda x: x[:, 1:2],
    "reshape": lambda x: x.reshape(6, 4),
    "transpose_then_reshape": lambda x: x.transpose(1, 2).reshape(2, 12),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "empty": lambda x: x[:, :0].transpose(1, 2),
}


def _pair():
    a = np.arange(24.0).reshape(2, 3, 4)
    return tg.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_layout_as_torch(name):
    x, t = _pair()
    v, w = VIEWS[name](x), VIEWS[name](t)
    assert v.stride() == w.stride()
    assert v.is_contiguous() == w.is_contiguous()
    for d in range(-v.dim(), v.dim()):
        assert v.stride(d) == w.stride(d) and v.size(d) == w.size(d)
    c, e = v.contiguous(), w.contiguous()
    assert c.stride() == e.stride() and c.is_contiguous() and e.is_contiguous()
    assert (c is v) == (e is w)
    np.testing.assert_array_equal(c.numpy(), e.numpy())


def test_contiguous_copy_is_recorded_and_separate():
    a = np.arange(6.0).reshape(2, 3)
    got = {}
    for lib in (tg, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.t().contiguous()
        name = repr(y).split("grad_fn=<")[1].split(">")[0]
        (y * lib.tensor(a.T)).sum().backward()
        base = lib.tensor(a)
        z = base.t().contiguous()
        z.add_(1)  # the copy changes, base does not
        got[lib.__name__] = (name, x.grad.numpy(), base.numpy(), z.numpy())
    assert got["tapegrad"][0] == got["torch"][0] == "CloneBackward0"
    for mine, want in zip(got["tapegrad"][1:], got["torch"][1:]):
        np.testing.assert_array_equal(mine, want)



@pytest.mark.parametrize("shape", [(), (2, 3)])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_dim_errors_as_torch(shape, dim):
    for method in ("size", "stride"):
        want = error_of(lambda: getattr(torch.ones(shape), method)(dim))
        assert error_of(lambda: getattr(tg.ones(shape), method)(dim)) == want


def test_attention_head_merge_in_the_style_of_nanogpt():
    """y.transpose(1, 2).contiguous().view(B, T, C): values and gradients as torch."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)  # (B, nh, T, hs)
    out = {}
    for lib in (tg, torch):
        y = lib.tensor(a, requires_grad=True)
        m = y.transpose(1, 2).contiguous()
        assert m.is_contiguous()
        z = m.view(2, 5, 12)
        (z * lib.arange(12.0)).sum().backward()
        out[lib.__name__] = (z.detach().numpy(), y.grad.numpy(), m.stride())
    np.testing.assert_array_equal(out["tapegrad"][0], out["torch"][0])
    np.testing.assert_array_equal(out["tapegrad"][1], out["torch"][1])
    assert out["tapegrad"][2] == out["torch"][2]

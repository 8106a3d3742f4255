"""`Tensor.view` of a non-contiguous tensor, as torch's: a shape its strides can express
gives a view (same strides as torch's, sharing memory); any other shape raises torch's
RuntimeError ("view size is not compatible with input tensor's size and stride ... Use
.reshape(...) instead.") where tapegrad used to copy silently. And the results torch
makes contiguous (index arrays, softmax of a transposed input, contractions, attention,
conv3d) are contiguous in tapegrad too, so programs may `.view` them.
"""
import itertools

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.ops._args import _view_strides


def _layouts():
    """(name, fn(lib, x)) non-contiguous views of a (2, 3, 4) tensor."""
    return [
        ("transpose", lambda x: x.transpose(0, 2)),
        ("permute", lambda x: x.permute(1, 0, 2)),
        ("last dims swapped", lambda x: x.transpose(1, 2)),
        ("step slice", lambda x: x[:, ::2]),
        ("narrowed last", lambda x: x[..., 1:3]),
        ("expanded", lambda x: x[:, :1].expand(2, 5, 4)),
        ("unsqueezed transpose", lambda x: x.transpose(0, 1).unsqueeze(1)),
        ("size-1 dim strided", lambda x: x[:1].transpose(0, 2)),
    ]


def _shapes(n):
    """Every shape of 1 to 3 dims with n elements, and -1 forms."""
    divs = [d for d in range(1, n + 1) if n % d == 0]
    out = [(n,), (-1,), (1, n), (n, 1)]
    out += [(a, n // a) for a in divs] + [(a, -1) for a in divs]
    out += [(a, b, n // (a * b)) for a in divs for b in divs if n % (a * b) == 0]
    return out


@pytest.mark.parametrize("name,fn", _layouts(), ids=[n for n, _ in _layouts()])
def test_view_as_torch(name, fn):
    base = np.arange(24.0).reshape(2, 3, 4)
    for shape in _shapes(fn(torch.tensor(base)).numel()):
        tv, gv = fn(torch.tensor(base)), fn(tg.tensor(base))
        try:
            want = tv.view(shape)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                gv.view(shape)
            assert str(got.value) == str(e), (shape, str(got.value))
            continue
        got = gv.view(shape)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if want.numel() > 1:
            assert got.stride() == want.stride(), (shape, got.stride(), want.stride())
        if not name.startswith("expanded"):  # (an expanded tensor cannot be written)
            got.mul_(2)  # a view: the write reaches what it views
            want.mul_(2)
            np.testing.assert_array_equal(gv.numpy(), tv.numpy())


def test_view_strides_match_torchs_rule():
    """The stride rule itself against torch's on every view shape of random layouts."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(150):
        shape = tuple(int(s) for s in rng.integers(1, 4, rng.integers(1, 4)))
        v = torch.zeros(int(np.prod(shape))).view(shape).permute(
            *rng.permutation(len(shape)).tolist())
        if rng.random() < 0.5 and v.shape[0] > 1:
            v = v[::2]
        if v.is_contiguous() or v.numel() <= 1:
            continue
        for new in _shapes(v.numel()):
            if -1 in new:
                continue
            try:
                want = tuple(v.view(new).stride())
            except RuntimeError:
                want = None
            assert _view_strides(tuple(v.shape), tuple(v.stride()), new) == want, (
                tuple(v.shape), v.stride(), new)
            checked += 1
    assert checked > 100


def test_view_refusal_message():
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's "
                       r"size and stride .* Use \.reshape\(\.\.\.\) instead\."):
        tg.ones(3, 4).t().view(12)
    assert tg.ones(3, 4).t().reshape(12).shape == (12,)  # reshape copies, as torch's
    assert tg.ones(3, 4).t().contiguous().view(12).shape == (12,)


CONTIGUOUS_RESULTS = {
    "index array in the middle": lambda L: L.ones(2, 3, 4)[:, L.tensor([0, 2])],
    "index array last": lambda L: L.ones(2, 3, 4)[:, :, L.tensor([0, 2])],
    "two index arrays": lambda L: L.ones(2, 3, 4)[:, L.tensor([0, 2]), L.tensor([1, 3])],
    "log_softmax of a transpose": lambda L: L.log_softmax(L.ones(3, 4).t(), -1),
    "softmax of a transpose": lambda L: L.softmax(L.ones(3, 4).t(), -1),
    "einsum bij,bjk->bki": lambda L: L.einsum("bij,bjk->bki", L.ones(2, 3, 4), L.ones(2, 4, 5)),
    "einsum ij,jk->ki": lambda L: L.einsum("ij,jk->ki", L.ones(3, 4), L.ones(4, 5)),
    "scaled_dot_product_attention": lambda L: L.nn.functional.scaled_dot_product_attention(
        L.ones(2, 3, 4, 8), L.ones(2, 3, 4, 8), L.ones(2, 3, 4, 8)),
    "conv3d": lambda L: L.nn.functional.conv3d(L.ones(2, 3, 4, 4, 4), L.ones(4, 3, 3, 3, 3)),
}


@pytest.mark.parametrize("name", list(CONTIGUOUS_RESULTS))
def test_results_torch_makes_contiguous(name):
    want = CONTIGUOUS_RESULTS[name](torch)
    got = CONTIGUOUS_RESULTS[name](tg)
    assert want.is_contiguous()
    assert got.is_contiguous()
    np.testing.assert_allclose(got.view(-1).numpy(), want.view(-1).numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape,dims", list(itertools.product([(2, 3, 4)], [(0, 1), (1, 2)])))
def test_view_of_transposed_grad(shape, dims):
    """A view torch allows on a transposed tensor, through a graph: same gradient."""
    x0 = np.random.default_rng(1).standard_normal(shape)
    for L in (torch, tg):
        x = L.tensor(x0, requires_grad=True)
        t = x.transpose(*dims)
        y = t.view(t.shape[0], 1, *t.shape[1:])  # a size-1 dim inserted: expressible
        (y * L.arange(y.numel(), dtype=L.float64).view(y.shape)).sum().backward()
        if L is torch:
            want = x.grad.numpy()
        else:
            np.testing.assert_allclose(x.grad.numpy(), want)

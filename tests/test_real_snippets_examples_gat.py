"""pytorch/examples' gat (graph attention) layer, from running the real program with
`import torch` resolving to tapegrad: `torch.empty(size=...)` and the `size=` keyword of
the creation functions. Run with torch and with tapegrad; what they print must agree
(tests/_snippets.py). Written for these tests, not copied.
"""
import numpy as np
import pytest

from _snippets import assert_same_output


def _gat_layer(torch, print):
    nn, F = torch.nn, torch.nn.functional
    n_heads, n_hidden, in_features = 2, 3, 4
    W = nn.Parameter(torch.empty(size=(in_features, n_hidden * n_heads)))
    a = nn.Parameter(torch.empty(size=(n_heads, 2 * n_hidden, 1)))
    print(W.shape, a.shape, W.dtype, W.requires_grad)
    with torch.no_grad():
        W.copy_(torch.from_numpy(np.cos(np.arange(24.0)).reshape(4, 6)))
        a.copy_(torch.from_numpy(np.sin(np.arange(12.0)).reshape(2, 6, 1)))
    h = torch.tensor(np.linspace(-1, 1, 20).reshape(5, 4), dtype=torch.float32)
    adj = torch.tensor([[1, 1, 0, 0, 1], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1],
                        [1, 0, 0, 1, 1]])
    ht = torch.mm(h, W).view(5, n_heads, n_hidden).permute(1, 0, 2)
    e = torch.matmul(ht, a[:, :n_hidden, :]) + torch.matmul(ht, a[:, n_hidden:, :]).mT
    e = F.leaky_relu(e, 0.2)
    e = torch.where(adj > 0, e, -9e16 * torch.ones_like(e))
    attention = F.dropout(F.softmax(e, dim=-1), 0.6, training=False)
    out = torch.matmul(attention, ht).mean(dim=0)
    out.sum().backward()
    print(out, W.grad, a.grad.squeeze(-1))
    for make in (torch.zeros, torch.ones, torch.empty, torch.rand, torch.randn):
        print(make(size=(2, 3)).shape, make(size=[4]).shape, make(2, 3).shape)
    try:
        torch.zeros(2, size=(3,))
    except TypeError as e:
        print(e)


def test_gat_layer_empty_size_keyword():
    assert_same_output(_gat_layer)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_keyword_matches_torch_signature(name):
    import torch

    import tapegrad
    for lib in (torch, tapegrad):
        assert tuple(getattr(lib, name)(size=(3, 1)).shape) == (3, 1)

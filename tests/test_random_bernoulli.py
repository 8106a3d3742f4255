"""torch.bernoulli against torch: probabilities that require grad stay in the graph with a
zero gradient; an integer tensor of probabilities is refused with torch's error.
"""
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same


# ---- bernoulli -----------------------------------------------------------------------------
def test_bernoulli_of_probabilities_requiring_grad_is_in_the_graph_with_zero_gradient():
    res = {}
    for lib in (tg, torch):
        p = lib.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], requires_grad=True)
        b = lib.bernoulli(p)
        assert b.requires_grad and type(b.grad_fn).__name__ in ("BernoulliBackward0", "Node")
        (b * p * 3).sum().backward()
        res[lib] = (b, p.grad)
    _same(res[tg][0], res[torch][0])
    _same(res[tg][1], res[torch][1])  # 3 * b: bernoulli's own gradient is 0
    assert repr(tg.bernoulli(tg.tensor([1.0], requires_grad=True))).endswith(
        "grad_fn=<BernoulliBackward0>)")


def test_bernoulli_of_an_integer_tensor_is_refused_as_torch():
    with pytest.raises(RuntimeError) as e_th:
        torch.bernoulli(torch.tensor([0, 1]))
    with pytest.raises(RuntimeError) as e_tg:
        tg.bernoulli(tg.tensor([0, 1]))
    assert str(e_tg.value) == str(e_th.value)

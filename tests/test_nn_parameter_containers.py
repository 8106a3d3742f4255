"""nn.ParameterList and nn.ParameterDict against PyTorch 2.13: a model holding them trains
as torch's, state-dict keys, and the list/dict API.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _nn_module_pairs import _close, _module_pair


# ---- ParameterList / ParameterDict -----------------------------------------------------------
def _mixture(nn, torch_like):
    class Mixture(nn.Module):
        """Per-component weights held in a ParameterList, named scales in a ParameterDict."""

        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(torch_like.ones(3, 3)) for _ in range(2)])
            self.ws.append(torch_like.ones(3, 3))          # a plain tensor is wrapped
            self.scales = nn.ParameterDict({"beta": nn.Parameter(torch_like.ones(3)),
                                            "alpha": torch_like.ones(3)})

        def forward(self, x):
            for w in self.ws:
                x = torch_like.tanh(x @ w)
            return x * self.scales["alpha"] + self.scales["beta"]
    return Mixture()


def test_parameter_containers_match_torch_and_train():
    ours, theirs = _mixture(tg.nn, tg), _mixture(torch.nn, torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "ws.0", "ws.1", "ws.2", "scales.alpha", "scales.beta"]
    assert all(isinstance(p, tg.nn.Parameter) for p in ours.ws)
    assert len(list(ours.parameters())) == 5
    x = np.random.default_rng(4).standard_normal((4, 3))
    _module_pair(ours, theirs, x, np.float64, "ParameterList/Dict model")
    # k SGD steps from identical weights agree
    opt, topt = tg.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(),
                                                                        lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        topt.zero_grad()
        (ours(tg.tensor(x)) ** 2).sum().backward()
        (theirs(torch.tensor(x)) ** 2).sum().backward()
        opt.step()
        topt.step()
    for k, v in theirs.state_dict().items():
        _close(ours.state_dict()[k], v, np.float64, f"after SGD {k}")


def test_parameter_list_and_dict_api():
    pl = tg.nn.ParameterList([tg.nn.Parameter(tg.zeros(2)), tg.ones(3)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2)), torch.ones(3)])
    assert len(pl) == 2 and pl[-1].shape == (3,) and len(pl[0:1]) == 1
    pl += [tg.ones(1)]
    pl[0] = tg.ones(4)
    assert isinstance(pl[0], tg.nn.Parameter) and pl[0].shape == (4,) and len(pl) == 3
    assert str(pl).count("Parameter containing") == 3
    with pytest.raises(IndexError):
        pl[5]
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl(1)
    del tpl
    pd = tg.nn.ParameterDict({"b": tg.ones(2), "a": tg.nn.Parameter(tg.zeros(1))})
    tpd = torch.nn.ParameterDict({"b": torch.ones(2), "a": torch.nn.Parameter(torch.zeros(1))})
    assert list(pd.keys()) == list(tpd.keys()) == ["a", "b"]         # a plain dict is sorted
    pd.update([("z", tg.ones(1)), ("c", tg.ones(1))])                  # pairs keep their order
    tpd.update([("z", torch.ones(1)), ("c", torch.ones(1))])
    assert list(pd) == list(tpd)
    assert "z" in pd and pd.get("nope") is None and len(pd) == 4
    assert pd.pop("z").shape == (1,) and "z" not in pd and "z" not in dict(pd.named_parameters())
    assert pd.setdefault("q", tg.ones(2)).shape == (2,)
    assert [k for k, _ in pd.items()] == ["a", "b", "c", "q"]
    pd.clear()
    assert len(pd) == 0 and not list(pd.parameters())

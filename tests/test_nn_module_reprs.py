"""The reprs of torch.nn's norm, convolution and linear modules, character for character as
torch prints them.
"""
import pytest
import torch

import tapegrad as tg


# ---- module reprs -----------------------------------------------------------------------
_MODULES = [
    lambda nn: nn.BatchNorm1d(10), lambda nn: nn.BatchNorm1d(10, affine=False),
    lambda nn: nn.BatchNorm1d(10, eps=1e-3, momentum=None, track_running_stats=False),
    lambda nn: nn.BatchNorm2d(3, momentum=0.2), lambda nn: nn.LayerNorm(5),
    lambda nn: nn.LayerNorm((4, 5), elementwise_affine=False),
    lambda nn: nn.LayerNorm(5, bias=False), lambda nn: nn.LayerNorm(5, eps=1e-6),
    lambda nn: nn.GroupNorm(2, 4), lambda nn: nn.GroupNorm(2, 4, affine=False, eps=1e-3),
    lambda nn: nn.Linear(3, 4), lambda nn: nn.Linear(3, 4, bias=False),
    lambda nn: nn.Conv2d(1, 32, 3, 1),
    lambda nn: nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, bias=False),
    lambda nn: nn.Conv2d(3, 8, 3, padding="same", dilation=2, padding_mode="reflect"),
    lambda nn: nn.Conv2d(4, 8, 3, groups=2), lambda nn: nn.Conv1d(3, 8, 5, stride=2, padding=2),
    lambda nn: nn.ConvTranspose2d(8, 3, 4, 2, 1), lambda nn: nn.Embedding(10, 3, padding_idx=0),
    lambda nn: nn.LSTM(10, 20, 2), lambda nn: nn.GRU(10, 20, batch_first=True),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Dropout(0.25)),
]


@pytest.mark.parametrize("make", _MODULES, ids=[str(i) for i in range(len(_MODULES))])
def test_module_repr_matches_torch(make):
    assert repr(make(tg.nn)) == repr(make(torch.nn))

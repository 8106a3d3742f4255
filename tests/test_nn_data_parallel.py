"""nn.DataParallel on CPU: a pass-through to the module, with torch's `module.` prefix on
state-dict keys.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _nn_module_pairs import _grads_match


# ---- DataParallel ----------------------------------------------------------------------------
def test_data_parallel_is_a_pass_through_with_module_prefix():
    net = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    dp = tg.nn.DataParallel(net)
    tdp = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                                    torch.nn.Linear(4, 2)))
    assert dp.module is net
    assert list(dp.state_dict()) == list(tdp.state_dict())          # "module.0.weight", ...
    tdp.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in dp.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32)
    _grads_match(dp, tdp, x, np.float32, "DataParallel")
    # a checkpoint saved from a DataParallel model loads into the bare model after stripping
    bare = {k[len("module."):]: v for k, v in dp.state_dict().items()}
    tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2)).load_state_dict(bare)
    assert tg.nn.parallel.DataParallel is tg.nn.DataParallel
    with pytest.raises(TypeError, match="DataParallel: module must be"):
        tg.nn.DataParallel(lambda x: x)

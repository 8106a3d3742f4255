"""Adam/AdamW's flat (`foreach`) update vs the per-parameter reference and vs torch.

The flat update (optim/_flat.py, adam.adam_flat) must give the SAME BITS as the
per-parameter loop (`foreach=False`) for every option, and match torch's foreach=True
and foreach=False; where it cannot run (a parameter without a gradient, mixed dtypes)
the step falls back to the loop and stays correct."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from test_optim import ADAM_CASES, _close, _init, _run, _train

FLAGS = [True, False]
CASES = [(name, c, f) for name in ("Adam", "AdamW") for c in ADAM_CASES for f in FLAGS]


def _is_flat(opt, params):
    """Whether the optimizer's exp_avg buffers are views of one flat array."""
    bases = {id(opt.state[p]["exp_avg"].numpy().base) for p in params}
    return len(bases) == 1 and opt.state[params[0]]["exp_avg"].numpy().base is not None


@pytest.mark.parametrize("name,kwargs,foreach", CASES,
                         ids=[f"{n}-{i}-{f}" for i, (n, _, f) in enumerate(CASES)])
def test_k_steps_match_torch_foreach_flag(name, kwargs, foreach):
    kw = dict(kwargs, foreach=foreach)
    ours, theirs, opt, _ = _run(getattr(tg.optim, name), getattr(torch.optim, name), kw)
    _close(ours, theirs, np.float64)
    assert _is_flat(opt, ours) == foreach


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", [(n, c) for n in ("Adam", "AdamW") for c in ADAM_CASES])
def test_flat_update_is_bit_identical_to_the_loop(name, kwargs, dtype):
    a, _, oa, _ = _run(getattr(tg.optim, name), getattr(torch.optim, name),
                       dict(kwargs, foreach=True), dtype=dtype, steps=5)
    b, _, ob, _ = _run(getattr(tg.optim, name), getattr(torch.optim, name),
                       dict(kwargs, foreach=False), dtype=dtype, steps=5)
    assert _is_flat(oa, a) and not _is_flat(ob, b)
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        for k, v in oa.state[p].items():
            np.testing.assert_array_equal(v.numpy(), ob.state[q][k].numpy())


def test_default_foreach_takes_the_flat_path_float32():
    ours, theirs, opt, _ = _run(tg.optim.AdamW, torch.optim.AdamW, dict(lr=0.01),
                                dtype=np.float32)
    assert _is_flat(opt, ours)
    _close(ours, theirs, np.float32)


@pytest.mark.parametrize("foreach", [None, True])
def test_parameter_without_grad_falls_back_and_matches_torch(foreach):
    """Step 2 leaves one parameter without a gradient: its step counter lags, the group
    takes the loop from then on, and every value still matches torch's."""
    init = _init(np.float64)
    ours = [tg.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    oa = tg.optim.Adam(ours, lr=0.05, foreach=foreach)
    ob = torch.optim.Adam(theirs, lr=0.05)
    for k in range(5):
        for lib, ps, opt in ((tg, ours, oa), (torch, theirs, ob)):
            opt.zero_grad()
            use = ps[:2] if k == 2 else ps
            sum((lib.sin(p * (0.3 + 0.05 * k)) + p * p).sum() for p in use).backward()
            opt.step()
    _close(ours, theirs, np.float64)
    for p, q in zip(ours, theirs):
        assert float(oa.state[p]["step"]) == float(ob.state[q]["step"])


def test_mixed_dtypes_in_one_group_match_torch():
    init = _init(np.float64)
    init[1] = init[1].astype(np.float32)
    ours = [tg.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    oa, ob = tg.optim.AdamW(ours, lr=0.05), torch.optim.AdamW(theirs, lr=0.05)
    _train(tg, ours, oa, range(4))
    _train(torch, theirs, ob, range(4))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_flat_state_resumes_through_save_load(amsgrad, tmp_path):
    """3 steps, tg.save, load into a fresh optimizer (repacked flat), 3 more: the same
    bits as 6 uninterrupted steps."""
    kw = dict(lr=0.01, amsgrad=amsgrad)
    full, theirs, _, _ = _run(tg.optim.AdamW, torch.optim.AdamW, kw, steps=6)
    params, _, opt, _ = _run(tg.optim.AdamW, torch.optim.AdamW, kw, steps=3)
    tg.save({"params": [p.detach() for p in params], "opt": opt.state_dict()},
            tmp_path / "ck.npz")
    ck = tg.load(tmp_path / "ck.npz")
    fresh = [tg.tensor(p.detach().numpy(), requires_grad=True) for p in ck["params"]]
    opt2 = tg.optim.AdamW(fresh, **kw)
    opt2.load_state_dict(ck["opt"])
    assert _is_flat(opt2, fresh)
    _train(tg, fresh, opt2, range(3, 6))
    _close(fresh, theirs, np.float64)
    for a, b in zip(fresh, full):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())

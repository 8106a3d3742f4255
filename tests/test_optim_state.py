"""Optimizer state vs torch under BOTH default dtypes (float32 and float64): k steps of
every optimizer with several option combinations from the same weights give the same
parameters; `state_dict()` has torch's keys, dtypes (`step` is a 0-d tensor of torch's
`_get_scalar_dtype`: float64 under a float64 default, float32 otherwise or when fused)
and values; `state_dict()`/`load_state_dict()` round trips continue as torch does, in
both directions (tapegrad -> torch and torch -> tapegrad)."""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _optim_helpers import _tensor_pair, _train


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, foreach=False, maximize=True, betas=(0.8, 0.95))),
    ("Adam", dict(lr=0.05, fused=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, foreach=False)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, fused=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True,
                   momentum_decay=0.01)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request):
    """Both libraries' default dtype set to the parameter's; restored afterwards."""
    old_tg, old_torch = tg.get_default_dtype(), torch.get_default_dtype()
    tg.set_default_dtype(getattr(tg, request.param))
    torch.set_default_dtype(getattr(torch, request.param))
    yield np.dtype(request.param)
    tg.set_default_dtype(old_tg)
    torch.set_default_dtype(old_torch)


def _pair(name, kwargs, dtype):
    ours, theirs = _tensor_pair(dtype)
    return (ours, getattr(tg.optim, name)(ours, **kwargs),
            theirs, getattr(torch.optim, name)(theirs, **kwargs))


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.data)


def _assert_params_close(ours, theirs, dtype):
    for a, b in zip(ours, theirs):
        assert a.data.dtype == _np(b).dtype == dtype
        np.testing.assert_allclose(a.data, _np(b), **_tol(dtype))


def _assert_state_dicts_match(sd_tg, sd_torch, dtype):
    """Same parameter indices, buffer names, buffer dtypes and shapes, close values;
    the same param_groups (every hyper-parameter torch stores, with its value)."""
    assert set(sd_tg["state"]) == set(sd_torch["state"])
    for i, st_torch in sd_torch["state"].items():
        st_tg = sd_tg["state"][i]
        assert set(st_tg) == set(st_torch), (i, set(st_tg) ^ set(st_torch))
        for key, want in st_torch.items():
            got = st_tg[key]
            assert isinstance(got, tg.Tensor), (key, type(got))
            assert _np(got).dtype == _np(want).dtype, (key, _np(got).dtype, _np(want).dtype)
            assert _np(got).shape == _np(want).shape, key
            np.testing.assert_allclose(_np(got), _np(want), **_tol(dtype), err_msg=key)
    assert len(sd_tg["param_groups"]) == len(sd_torch["param_groups"])
    for g_tg, g_torch in zip(sd_tg["param_groups"], sd_torch["param_groups"]):
        assert set(g_tg) == set(g_torch), set(g_tg) ^ set(g_torch)
        for key, want in g_torch.items():
            assert g_tg[key] == want, (key, g_tg[key], want)


def _to_torch(sd):
    return {"state": {i: {k: torch.tensor(_np(v)) for k, v in st.items()}
                      for i, st in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]]}


def _to_tg(sd):
    return {"state": {i: {k: tg.tensor(_np(v)) for k, v in st.items()}
                      for i, st in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]]}


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_k_steps_and_state_dict_match_torch(name, kwargs, default_dtype):
    ours, opt_tg, theirs, opt_torch = _pair(name, kwargs, default_dtype)
    _train(tg, ours, opt_tg, range(5))
    _train(torch, theirs, opt_torch, range(5))
    _assert_params_close(ours, theirs, default_dtype)
    _assert_state_dicts_match(opt_tg.state_dict(), opt_torch.state_dict(), default_dtype)


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[0] != "SGD"],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] != "SGD"])
def test_step_counter_has_torchs_scalar_dtype(name, kwargs, default_dtype):
    """`step` (and NAdam's `mu_product`) is 0-d, of the scalar dtype torch picks."""
    ours, opt_tg, theirs, opt_torch = _pair(name, kwargs, default_dtype)
    _train(tg, ours, opt_tg, range(2))
    _train(torch, theirs, opt_torch, range(2))
    want = np.float32 if kwargs.get("fused") else default_dtype
    for p, q in zip(ours, theirs):
        for key in ("step", "mu_product"):
            if key in opt_torch.state[q]:
                assert _np(opt_torch.state[q][key]).dtype == want  # the oracle's rule
                got = opt_tg.state[p][key]
                assert got.shape == () and _np(got).dtype == want, (key, _np(got).dtype)
        assert float(opt_tg.state[p]["step"]) == 2.0


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_state_dict_round_trips_continue_as_torch(name, kwargs, default_dtype):
    """3 steps, then each optimizer's state dict loaded into a fresh optimizer of the
    other library (and of its own) continues for 3 more steps exactly as 6 uninterrupted
    torch steps."""
    ours, opt_tg, theirs, opt_torch = _pair(name, kwargs, default_dtype)
    full_tg, full_opt_tg, full_torch, full_opt_torch = _pair(name, kwargs, default_dtype)
    _train(tg, ours, opt_tg, range(3))
    _train(torch, theirs, opt_torch, range(3))
    _train(tg, full_tg, full_opt_tg, range(6))
    _train(torch, full_torch, full_opt_torch, range(6))

    def fresh_tg(params):
        ps = [tg.tensor(_np(p).copy(), requires_grad=True) for p in params]
        return ps, getattr(tg.optim, name)(ps, **kwargs)

    def fresh_torch(params):
        ps = [torch.tensor(_np(p).copy(), requires_grad=True) for p in params]
        return ps, getattr(torch.optim, name)(ps, **kwargs)

    # tapegrad -> tapegrad: bit for bit the uninterrupted run
    ps, opt = fresh_tg(ours)
    opt.load_state_dict(opt_tg.state_dict())
    _train(tg, ps, opt, range(3, 6))
    for a, b in zip(ps, full_tg):
        np.testing.assert_array_equal(a.data, b.data)
    _assert_state_dicts_match(opt.state_dict(), full_opt_torch.state_dict(), default_dtype)
    # tapegrad -> torch
    ps, opt = fresh_torch(ours)
    opt.load_state_dict(_to_torch(opt_tg.state_dict()))
    _train(torch, ps, opt, range(3, 6))
    _assert_params_close(full_tg, ps, default_dtype)
    # torch -> tapegrad
    ps, opt = fresh_tg(theirs)
    opt.load_state_dict(_to_tg(opt_torch.state_dict()))
    _train(tg, ps, opt, range(3, 6))
    _assert_params_close(ps, full_torch, default_dtype)
    _assert_state_dicts_match(opt.state_dict(), full_opt_torch.state_dict(), default_dtype)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "NAdam", "RAdam", "Adamax"])
def test_loaded_step_keeps_its_dtype(name):
    """torch casts a loaded `step` only for capturable/fused optimizers: a float64 step
    saved under a float64 default stays float64 when loaded under a float32 default."""
    assert tg.get_default_dtype() == tg.float32 and torch.get_default_dtype() == torch.float32
    ours, opt_tg, theirs, opt_torch = _pair(name, dict(lr=0.01), np.float32)
    _train(torch, theirs, opt_torch, range(2))
    sd = opt_torch.state_dict()
    sd["state"] = {i: {k: (v.double() if k == "step" else v) for k, v in st.items()}
                   for i, st in sd["state"].items()}
    _, fresh_torch = _pair(name, dict(lr=0.01), np.float32)[2:]
    fresh_torch.load_state_dict(sd)
    opt_tg.load_state_dict(_to_tg(sd))
    for p, q in zip(ours, fresh_torch.param_groups[0]["params"]):
        assert _np(fresh_torch.state[q]["step"]).dtype == np.float64  # the oracle's rule
        assert _np(opt_tg.state[p]["step"]).dtype == np.float64
    _train(tg, ours, opt_tg, range(2, 4))  # the loaded float64 counters keep counting
    for p in ours:
        assert float(opt_tg.state[p]["step"]) == 4.0
        assert _np(opt_tg.state[p]["step"]).dtype == np.float64

"""The written-out Adam step's kept plan (tapegrad/_compile/inline.py `adam_plan`'s memo):
the groups, parameter lists, packs and views of the last replay are reused while they
hold, and every change eager's `Adam._pack` would see between two steps must still be
seen: the compiled run then takes what eager takes and gives eager's bits.

Each test trains twice from the same weights (eagerly, and with the step compiled) with
the same change made between two steps after a few replays, and compares every loss,
gradient, parameter, buffer and optimizer state bit for bit (test_compile_emit.py's
`_check`). A memo that missed the change would replay the flat update on the old
layout: other bits (each test was checked to fail with its check removed).
"""
import numpy as np
import pytest

import tapegrad as tg
from test_compile_emit import _check, _MLP, _mlp_batches


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """Replays are counted: the eager-vs-replay timing trial is off."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)


def _adamw(params):
    return tg.optim.AdamW(params, lr=1e-2, weight_decay=0.1)


def _params(opt):
    return opt.param_groups[0]["params"]


def _state_replaced(opt):
    p = _params(opt)[1]
    opt.state[p]["exp_avg"] = tg.tensor(np.full(p.shape, 0.5, np.float32))


def _step_changed(opt):
    opt.state[_params(opt)[2]]["step"].fill_(1.0)  # (in place: the pack's own view)


def _param_dropped(opt):
    _params(opt).pop()  # the last parameter is no longer updated


def _param_swapped(opt):
    ps = _params(opt)
    ps[3] = tg.nn.Parameter(tg.zeros(ps[3].shape))  # (the model's is no longer updated)


def _maximized(opt):
    opt.param_groups[0]["maximize"] = True  # eager's step then: the flat update negated


def _group_replaced(opt):
    opt.param_groups[0] = dict(opt.param_groups[0], lr=0.5)


def _state_reloaded(opt):
    sd = opt.state_dict()
    for st in sd["state"].values():
        st["exp_avg_sq"] = st["exp_avg_sq"] * 2.0
    opt.load_state_dict(sd)


def _lr_and_betas(opt):
    opt.param_groups[0]["lr"] = 0.05
    opt.param_groups[0]["betas"] = (0.8, 0.95)


@pytest.mark.parametrize("change", [_state_replaced, _step_changed, _param_dropped,
                                    _param_swapped, _maximized, _group_replaced,
                                    _state_reloaded, _lr_and_betas],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_change_between_replays_is_seen(change):
    def between(k, opt):
        if k == 4:
            change(opt)
    code = _check(lambda: _MLP(), _adamw, _mlp_batches(8), ["P = adam_plan(O"],
                  between=between)
    assert "P = adam_plan(O" in code


def test_the_kept_plan_serves_the_replays(monkeypatch):
    # the memo is used (the optimizer's _pack is not called by the replays after the
    # first one that built the plan), and the result is eager's
    from tapegrad.optim.adam import Adam
    calls = []
    pack = Adam._pack
    monkeypatch.setattr(Adam, "_pack", lambda *a: calls.append(1) or pack(*a))
    _check(lambda: _MLP(), _adamw, _mlp_batches(8), ["P = adam_plan(O"])
    assert len(calls) == 8 + 1 + 1  # eager's eight steps, the capture's, the first replay

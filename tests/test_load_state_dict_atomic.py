"""Module.load_state_dict and Optimizer.load_state_dict validate everything before they
change anything: a bad value (None, "abc", a list, a complex array), a wrong shape or a
wrong key raises naming the key, and the model / optimizer is left exactly as it was."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _model():
    tg.manual_seed(0)
    return tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.BatchNorm1d(4), tg.nn.Linear(4, 2))


def _snapshot(m):
    return {k: v.numpy(force=True).copy() for k, v in m.state_dict().items()}


def _unchanged(m, snap):
    now = _snapshot(m)
    assert list(now) == list(snap)
    for k in snap:
        np.testing.assert_array_equal(now[k], snap[k], err_msg=k)


@pytest.mark.parametrize("key", ["1.running_mean", "1.num_batches_tracked", "2.bias"])
@pytest.mark.parametrize("bad", [None, "abc", [1.0, 2.0, 3.0, 4.0], 3.0,
                                 np.array(["a", "b", "c", "d"]), np.ones(4, np.complex128)])
@pytest.mark.parametrize("strict", [True, False])
def test_bad_value_changes_nothing_and_names_the_key(key, bad, strict):
    m = _model()
    snap = _snapshot(m)
    # Every other value is new, so a half-done load would show.
    sd = {k: tg.tensor(v + 1) for k, v in snap.items()}
    sd[key] = bad
    with pytest.raises(RuntimeError, match=f'While copying the parameter named "{key}", '
                                           "expected tapegrad.Tensor"):
        m.load_state_dict(sd, strict=strict)
    _unchanged(m, snap)


def test_torch_refuses_the_same_values():
    # The oracle: torch names the key with the same sentence for each non-tensor value.
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    for bad in (None, "abc", [1.0], 3.0):
        sd = dict(t.state_dict())
        sd["1.running_mean"] = bad
        with pytest.raises(RuntimeError, match='While copying the parameter named '
                                               '"1.running_mean", expected torch.Tensor'):
            t.load_state_dict(sd)


def test_wrong_shape_and_keys_change_nothing():
    m = _model()
    snap = _snapshot(m)
    sd = {k: tg.tensor(v + 1) for k, v in snap.items()}
    sd["2.weight"] = tg.zeros(3, 3)
    with pytest.raises(RuntimeError, match="size mismatch for 2.weight"):
        m.load_state_dict(sd, strict=False)
    _unchanged(m, snap)
    sd = {k: tg.tensor(v + 1) for k, v in snap.items()}
    del sd["0.bias"]
    sd["extra"] = tg.ones(1)
    with pytest.raises(RuntimeError, match='(?s)Missing key.*"0.bias".*Unexpected key.*"extra"'):
        m.load_state_dict(sd)
    _unchanged(m, snap)


def test_numpy_arrays_of_numbers_still_load():
    m = _model()
    sd = {k: v + 1 for k, v in _snapshot(m).items()}
    m.load_state_dict(sd)
    _unchanged(m, sd)


def _trained_adam():
    m = tg.nn.Linear(3, 2)
    opt = tg.optim.Adam(m.parameters(), lr=0.1)
    (m(tg.ones(1, 3)) ** 2).sum().backward()
    opt.step()
    return m, opt


def _opt_snapshot(opt):
    sd = opt.state_dict()
    return ({k: {n: (v.numpy(force=True).copy() if isinstance(v, tg.Tensor) else v) for n, v in s.items()}
             for k, s in sd["state"].items()}, [dict(g) for g in sd["param_groups"]])


@pytest.mark.parametrize("damage", ["groups", "group_size", "no_state", "no_groups"])
def test_optimizer_load_failure_changes_nothing(damage):
    m, opt = _trained_adam()
    before = _opt_snapshot(opt)
    sd = opt.state_dict()
    sd = {"state": {k: {n: (v * 0 + 7 if isinstance(v, tg.Tensor) else v)
                        for n, v in s.items()} for k, s in sd["state"].items()},
          "param_groups": [dict(g, lr=5.0) for g in sd["param_groups"]]}
    if damage == "groups":
        sd["param_groups"] = sd["param_groups"] * 2
    elif damage == "group_size":
        sd["param_groups"][0]["params"] = [0]
    elif damage == "no_state":
        del sd["state"]
    else:
        del sd["param_groups"]
    with pytest.raises((ValueError, KeyError)):
        opt.load_state_dict(sd)
    after = _opt_snapshot(opt)
    assert after[1] == before[1]
    for k in before[0]:
        for n in before[0][k]:
            np.testing.assert_array_equal(after[0][k][n], before[0][k][n])

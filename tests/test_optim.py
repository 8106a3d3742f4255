"""tg.optim vs torch.optim: k steps from identical weights with identical losses give the
same parameters (float64 tight, float32 loose) for every optimizer and option combination;
state dicts, param groups, schedulers and gradient clipping agree too."""
import itertools
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.nn.utils import clip_grad_norm_, clip_grad_value_

from _optim_helpers import _close, _init, _tensor_pair, _train

def _run(cls_tg, cls_torch, kwargs, dtype=np.float64, steps=6, groups=None):
    ours, theirs = _tensor_pair(dtype)
    if groups:
        opt_a = cls_tg([{"params": ours[:1], **groups}, {"params": ours[1:]}], **kwargs)
        opt_b = cls_torch([{"params": theirs[:1], **groups}, {"params": theirs[1:]}], **kwargs)
    else:
        opt_a, opt_b = cls_tg(ours, **kwargs), cls_torch(theirs, **kwargs)
    _train(tg, ours, opt_a, range(steps))
    _train(torch, theirs, opt_b, range(steps))
    return ours, theirs, opt_a, opt_b





def _combos(**options):
    keys = list(options)
    for values in itertools.product(*options.values()):
        yield dict(zip(keys, values))


SGD_CASES = [c for c in _combos(lr=[0.1], momentum=[0, 0.9], dampening=[0, 0.5],
                                nesterov=[False, True], weight_decay=[0, 0.05],
                                maximize=[False, True])
             if not (c["nesterov"] and (c["momentum"] == 0 or c["dampening"] != 0))]
ADAM_CASES = list(_combos(lr=[0.05], betas=[(0.9, 0.999), (0.8, 0.95)], eps=[1e-8, 1e-3],
                          weight_decay=[0, 0.1], amsgrad=[False, True], maximize=[False, True]))
RMS_CASES = list(_combos(lr=[0.01], alpha=[0.99, 0.9], eps=[1e-8], weight_decay=[0, 0.1],
                         momentum=[0, 0.9], centered=[False, True], maximize=[False, True]))

ALL = ([("SGD", c) for c in SGD_CASES] + [("Adam", c) for c in ADAM_CASES]
       + [("AdamW", c) for c in ADAM_CASES] + [("RMSprop", c) for c in RMS_CASES])


@pytest.mark.parametrize("name,kwargs", ALL, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ALL)])
def test_k_steps_match_torch_float64(name, kwargs):
    ours, theirs, _, _ = _run(getattr(tg.optim, name), getattr(torch.optim, name), kwargs)
    _close(ours, theirs, np.float64)


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.01)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
])
def test_k_steps_match_torch_float32(name, kwargs):
    ours, theirs, _, _ = _run(getattr(tg.optim, name), getattr(torch.optim, name), kwargs,
                              dtype=np.float32)
    _close(ours, theirs, np.float32)


@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.3},
                                    {"momentum": 0.9, "nesterov": True},
                                    {"weight_decay": 0.05, "momentum": 0.5},
                                    {"maximize": True, "weight_decay": 0.1}])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_sgd_steps_match_torch_from_the_same_parameters(kwargs, dtype):
    # the same gradients fed to both, one step at a time from the same parameters: each
    # "x + c * y" of the update is torch's add_(y, alpha=c), rounded once per element
    # (BLAS axpy; float16: c rounded to float16, the sum in float32); the vectorized
    # and tail loops of either side may round a product apart: a last-bit difference of
    # the update's size; non-contiguous and 0-d parameters too
    eps = float(np.finfo(dtype).eps)
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((13, 7)).astype(dtype),
              rng.standard_normal((7, 13)).astype(dtype).T, np.array(0.7, dtype)]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    ours[1] = tg.tensor(arrays[1].T, requires_grad=True).t().detach().requires_grad_()
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    theirs[1] = torch.tensor(arrays[1].T).t().detach().requires_grad_()
    assert ours[1].stride() == theirs[1].stride() == (1, 13)
    opt_a = tg.optim.SGD(ours, lr=0.37, **kwargs)
    opt_b = torch.optim.SGD(theirs, lr=0.37, **kwargs)
    for _ in range(4):
        for a, b in zip(ours, theirs):
            g = rng.standard_normal(a.shape).astype(dtype)
            a.grad, b.grad = tg.tensor(g), torch.tensor(g)
        opt_a.step()
        opt_b.step()
        for a, b in zip(ours, theirs):
            got, want = a.detach().numpy(), b.detach().numpy()
            # (the operands are O(1): a last-bit difference of theirs, also where the sum
            # cancels to a small number)
            np.testing.assert_allclose(got, want, rtol=eps, atol=4 * eps)
            with torch.no_grad():  # the next step from the same parameters
                b.copy_(torch.from_numpy(a.detach().numpy().copy()))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_param_groups_own_hyperparameters(name):
    kwargs = dict(lr=0.05, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.05)
    ours, theirs, a, b = _run(getattr(tg.optim, name), getattr(torch.optim, name), kwargs,
                              groups=dict(lr=0.2, weight_decay=0.1))
    _close(ours, theirs, np.float64)
    assert [g["lr"] for g in a.param_groups] == [g["lr"] for g in b.param_groups]


def _plain(sd):
    """Torch/tapegrad state dict -> nested plain Python/NumPy for comparison."""
    if isinstance(sd, (tg.Tensor, torch.Tensor)):
        return np.asarray(sd.detach().numpy() if isinstance(sd, torch.Tensor) else sd.data)
    if isinstance(sd, dict):
        return {k: _plain(v) for k, v in sd.items()}
    if isinstance(sd, (list, tuple)):
        return type(sd)(_plain(v) for v in sd)
    return sd


def _assert_same_tree(a, b):
    assert type(a) is type(b) or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)), \
        (a, b)
    if isinstance(a, dict):
        assert set(a) == set(b), (set(a) ^ set(b))
        for k in a:
            _assert_same_tree(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_tree(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    else:
        assert a == b


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True))])
def test_state_dict_structure_matches_torch(name, kwargs):
    _, _, a, b = _run(getattr(tg.optim, name), getattr(torch.optim, name), kwargs, steps=3)
    _assert_same_tree(_plain(a.state_dict()), _plain(b.state_dict()))


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.01, amsgrad=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True))])
def test_state_dict_resume_through_save_load(name, kwargs, tmp_path):
    """Train 3 steps, checkpoint (tg.save), restore into fresh objects, train 3 more: the
    same as 6 uninterrupted steps (and as torch)."""
    cls = getattr(tg.optim, name)
    full, theirs, _, _ = _run(cls, getattr(torch.optim, name), kwargs, steps=6)
    params, _, opt, _ = _run(cls, getattr(torch.optim, name), kwargs, steps=3)
    tg.save({"params": [p.detach() for p in params], "opt": opt.state_dict()},
            tmp_path / "ck.npz")
    ck = tg.load(tmp_path / "ck.npz")
    fresh = [tg.tensor(p.data, requires_grad=True) for p in ck["params"]]
    opt2 = cls(fresh, **kwargs)
    opt2.load_state_dict(ck["opt"])
    _train(tg, fresh, opt2, range(3, 6))
    _close(fresh, theirs, np.float64)
    for a, b in zip(fresh, full):
        np.testing.assert_array_equal(a.data, b.data)


def test_load_torch_state_dict_values():
    """A state dict produced by torch (converted to tapegrad tensors) loads and continues."""
    init = _init(np.float64)
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    ob = torch.optim.Adam(theirs, lr=0.02)
    _train(torch, theirs, ob, range(2))
    sd = ob.state_dict()
    conv = {"state": {i: {n: tg.tensor(v.numpy()) for n, v in s.items()}
                      for i, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}
    ours = [tg.tensor(p.detach().numpy(), requires_grad=True) for p in theirs]
    oa = tg.optim.Adam(ours, lr=0.5)
    oa.load_state_dict(conv)
    assert oa.param_groups[0]["lr"] == 0.02
    _train(tg, ours, oa, range(2, 4))
    _train(torch, theirs, ob, range(2, 4))
    _close(ours, theirs, np.float64)


def test_load_state_dict_errors():
    p = [tg.zeros(2, requires_grad=True), tg.zeros(3, requires_grad=True)]
    opt = tg.optim.SGD(p, lr=0.1)
    other = tg.optim.SGD([p[0]], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(other.state_dict())
    two = tg.optim.SGD([{"params": [p[0]]}, {"params": [p[1]]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(two.state_dict())


def test_zero_grad_and_skips_params_without_grad():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0], requires_grad=True)
    opt = tg.optim.SGD([a, b], lr=0.5, momentum=0.9)
    (a * a).sum().backward()
    version = a._version
    opt.step()
    np.testing.assert_allclose(a.data, [0.0, 0.0])
    assert a._version > version  # in-place update bumps the version counter
    np.testing.assert_array_equal(b.data, [3.0])  # no grad: untouched, no state
    assert b not in opt.state and "momentum_buffer" in opt.state[a]
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.data, [0.0, 0.0])
    opt.zero_grad()
    assert a.grad is None


def test_add_param_group_and_validation():
    a = tg.zeros(2, requires_grad=True)
    b = tg.zeros(2, requires_grad=True)
    opt = tg.optim.Adam([a], lr=1e-3)
    opt.add_param_group({"params": b, "lr": 0.1})
    assert opt.param_groups[1]["lr"] == 0.1 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="empty parameter list"):
        tg.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        tg.optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        tg.optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        tg.optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        tg.optim.AdamW([a], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="non-leaf"):
        tg.optim.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="sets"):
        tg.optim.SGD([{"params": {a}}], lr=0.1)  # as torch: only a group's set is refused


def test_closure_returns_loss():
    a = tg.tensor([2.0], requires_grad=True)
    opt = tg.optim.SGD([a], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 4.0 and a.data[0] == 1.0


# ---- schedulers -------------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("StepLR", dict(step_size=1, gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.5, end_factor=0.1, total_iters=8)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (e + 1))),
]


def _opts(lrs=(0.1, 0.3)):
    ours = tg.optim.SGD([{"params": [tg.zeros(1, requires_grad=True)], "lr": lr}
                         for lr in lrs], lr=0.1)
    theirs = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr}
                              for lr in lrs], lr=0.1)
    return ours, theirs


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in
                                                         enumerate(SCHEDULERS)])
def test_scheduler_lr_sequence_matches_torch(name, kwargs):
    oa, ob = _opts()
    sa = getattr(tg.optim.lr_scheduler, name)(oa, **kwargs)
    sb = getattr(torch.optim.lr_scheduler, name)(ob, **kwargs)
    seq_a, seq_b = [sa.get_last_lr()], [sb.get_last_lr()]
    for _ in range(30):  # > 2 T_max for the cosine: exercises the rise after the trough
        oa.step()
        ob.step()
        sa.step()
        sb.step()
        seq_a.append(sa.get_last_lr())
        seq_b.append(sb.get_last_lr())
        assert [g["lr"] for g in oa.param_groups] == sa.get_last_lr()
    np.testing.assert_allclose(seq_a, seq_b, rtol=1e-13, atol=0)


def test_scheduler_state_dict_resume():
    oa, _ = _opts()
    s = tg.optim.lr_scheduler.CosineAnnealingLR(oa, T_max=10)
    for _ in range(4):
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    ob, _ = _opts()
    s2 = tg.optim.lr_scheduler.CosineAnnealingLR(ob, T_max=10)
    s2.load_state_dict(sd)
    for g, lr in zip(ob.param_groups, sd["_last_lr"]):
        g["lr"] = lr
    s.step()
    s2.step()
    assert s.get_last_lr() == s2.get_last_lr()
    lam = tg.optim.lr_scheduler.LambdaLR(oa, lambda e: 0.5)
    assert lam.state_dict()["lr_lambdas"] == [None, None]


def test_scheduler_rejects_non_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        tg.optim.lr_scheduler.StepLR(object(), step_size=1)


# ---- gradient clipping ------------------------------------------------------------------
def _grads_pair(dtype, scale=1.0):
    rng = np.random.default_rng(3)
    gs = [rng.standard_normal(s).astype(dtype) * scale for s in [(4, 3), (7,), (2, 2, 2)]]
    ours, theirs = [], []
    for g in gs:
        a = tg.zeros(*g.shape, dtype=dtype, requires_grad=True)
        a.grad = tg.tensor(g.copy())
        b = torch.zeros(g.shape, dtype=torch.float64 if dtype == np.float64 else torch.float32,
                        requires_grad=True)
        b.grad = torch.tensor(g.copy())
        ours.append(a)
        theirs.append(b)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    ours, theirs = _grads_pair(dtype)
    na = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    nb = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    assert na.data.dtype == nb.numpy().dtype
    np.testing.assert_allclose(na.data, nb.numpy(), rtol=tol)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=tol, atol=tol)


def test_clip_grad_norm_nonfinite_and_empty():
    ours, _ = _grads_pair(np.float64)
    ours[0].grad.data[0, 0] = np.inf
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    assert float(clip_grad_norm_([tg.zeros(2, requires_grad=True)], 1.0)) == 0.0
    single = tg.zeros(3, requires_grad=True)
    single.grad = tg.tensor([3.0, 4.0, 0.0])
    assert float(clip_grad_norm_(single, 1.0)) == pytest.approx(5.0)
    np.testing.assert_allclose(np.linalg.norm(single.grad.data), 1.0, rtol=1e-5)


def test_clip_grad_value_matches_torch():
    ours, theirs = _grads_pair(np.float64, scale=3.0)
    assert clip_grad_value_(ours, 1.5) is None
    torch.nn.utils.clip_grad_value_(theirs, 1.5)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.data, b.grad.numpy())


# ---- end to end: the MNIST training step -------------------------------------------------
@pytest.mark.parametrize("opt_name,kwargs", [("Adam", dict(lr=1e-3)),
                                             ("SGD", dict(lr=0.05, momentum=0.9)),
                                             ("AdamW", dict(lr=1e-3))])
def test_mlp_training_steps_match_torch(opt_name, kwargs):
    """The CLI's MLP (Flatten, Linear, ReLU, Linear, cross-entropy) trained k steps from
    the same weights on the same minibatches: identical parameters in float64."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 16, 1, 8, 8))
    y = rng.integers(0, 10, (5, 16))
    ours = tg.nn.Sequential(tg.nn.Flatten(), tg.nn.Linear(64, 32), tg.nn.ReLU(),
                            tg.nn.Linear(32, 10)).double()
    theirs = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 32), torch.nn.ReLU(),
                                 torch.nn.Linear(32, 10)).double()
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    oa = getattr(tg.optim, opt_name)(ours.parameters(), **kwargs)
    ob = getattr(torch.optim, opt_name)(theirs.parameters(), **kwargs)
    for xb, yb in zip(x, y):
        for model, opt, lib in ((ours, oa, tg), (theirs, ob, torch)):
            opt.zero_grad()
            loss = (tg.nn.functional if lib is tg else torch.nn.functional).cross_entropy(
                model(lib.tensor(xb)), lib.tensor(yb))
            loss.backward()
            opt.step()
    sb = theirs.state_dict()
    for k, v in ours.state_dict().items():
        np.testing.assert_allclose(v.data, sb[k].numpy(), rtol=1e-10, atol=1e-12)

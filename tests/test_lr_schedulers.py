"""tg.optim.lr_scheduler vs torch.optim.lr_scheduler: the learning rate of every param
group after each step (30 steps) equals torch's for many settings of every scheduler,
including ReduceLROnPlateau fed a loss sequence, OneCycleLR/CyclicLR with momentum
cycling (momentum and Adam's betas sequences too), SequentialLR and ChainedScheduler
compositions; state dicts have torch's keys and resuming mid-way gives the same
sequence; errors match torch's."""
import math
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg

LRS = (0.1, 0.3)


def _opts(cls="SGD", lrs=LRS, **kwargs):
    """The same optimizer in both libraries, one param group per lr."""
    ours = getattr(tg.optim, cls)([{"params": [tg.zeros(1, requires_grad=True)], "lr": lr}
                                   for lr in lrs], **kwargs)
    theirs = getattr(torch.optim, cls)([{"params": [torch.zeros(1, requires_grad=True)],
                                         "lr": lr} for lr in lrs], **kwargs)
    return ours, theirs


def _make(lib, name, opt, kwargs):
    return getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)


def _group_keys(opt, key):
    return [g[key] for g in opt.param_groups]


def _sequence(opt, sched, steps, metrics=None, keys=("lr",)):
    """[(values of `keys` per group) after construction and after each step]."""
    seq = [[_group_keys(opt, k) for k in keys]]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        assert sched.get_last_lr() == _group_keys(opt, "lr")
        seq.append([_group_keys(opt, k) for k in keys])
    return seq


def _flat(seq):
    out, stack = [], [seq]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        else:
            out.append(float(x))
    return out


def _assert_seq_equal(a, b):
    # The numbers are computed by the same float formulas in the same order: equal up to
    # the last bit, allowing 1e-13 for any libm differences in cos/pow.
    fa, fb = _flat(a), _flat(b)
    assert len(fa) == len(fb)
    np.testing.assert_allclose(fa, fb, rtol=1e-13, atol=1e-15)


SCHEDULERS = [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1.0 / (e + 1), lambda e: 0.5 + 0.01 * e])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 0.95, lambda e: 1.0 - 0.01 * e])),
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("StepLR", dict(step_size=1, gamma=0.7)),
    ("MultiStepLR", dict(milestones=[3, 7, 12])),
    ("MultiStepLR", dict(milestones=[12, 5, 5, 20], gamma=0.5)),  # unsorted, repeated
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.5, total_iters=8)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.5, end_factor=0.1, total_iters=8)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("ExponentialLR", dict(gamma=1.05)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=20, power=2.0)),
    ("PolynomialLR", dict(total_iters=10, power=0.5)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5,
                      mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range",
                      gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4,
                      scale_fn=lambda x: 0.5 ** x, scale_mode="iterations")),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=30)),
    ("OneCycleLR", dict(max_lr=[0.5, 2.0], epochs=5, steps_per_epoch=6, pct_start=0.25,
                        anneal_strategy="linear", div_factor=10.0)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=30, three_phase=True, cycle_momentum=False)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=31, base_momentum=0.8, max_momentum=0.9,
                        final_div_factor=100.0)),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_lr_sequence_matches_torch(name, kwargs):
    oa, ob = _opts(momentum=0.9)
    keys = ("lr", "momentum")
    seq_a = _sequence(oa, _make(tg, name, oa, kwargs), 30, keys=keys)
    seq_b = _sequence(ob, _make(torch, name, ob, kwargs), 30, keys=keys)
    _assert_seq_equal(seq_a, seq_b)


@pytest.mark.parametrize("name,kwargs", [
    ("OneCycleLR", dict(max_lr=0.01, total_steps=30)),
    ("OneCycleLR", dict(max_lr=0.01, total_steps=30, three_phase=True,
                        base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=1e-4, max_lr=1e-2, step_size_up=5)),
])
def test_momentum_cycling_sets_adam_beta1(name, kwargs):
    oa, ob = _opts("Adam", betas=(0.9, 0.99))
    seq_a = _sequence(oa, _make(tg, name, oa, kwargs), 30, keys=("lr", "betas"))
    seq_b = _sequence(ob, _make(torch, name, ob, kwargs), 30, keys=("lr", "betas"))
    _assert_seq_equal(seq_a, seq_b)
    assert all(g["betas"][1] == 0.99 for g in oa.param_groups)
    assert isinstance(oa.param_groups[0]["betas"], tuple)


def test_onecycle_drives_a_real_training_run_like_torch():
    """SGD with OneCycleLR stepped per batch: the weights (which feel the momentum
    sequence too) equal torch's."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(4)
    out = []
    for lib in (tg, torch):
        w = lib.tensor(w0.copy(), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.2, total_steps=20)
        for k in range(20):
            opt.zero_grad()
            (lib.sin(w * (1 + 0.1 * k)) + w * w).sum().backward()
            opt.step()
            sched.step()
        out.append(w.detach().numpy() if lib is torch else w.data)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10)


# ---- ReduceLROnPlateau -------------------------------------------------------------------
LOSSES = [1.0, 0.9, 0.95, 0.97, 0.96, 0.99, 0.9, 0.89999, 0.91, 0.92, 0.93, 0.94, 0.5, 0.6,
          0.7, 0.8, 0.8, 0.8, 0.8, 0.8, 0.4, 0.45, 0.45, 0.45, 0.45, 0.45, 0.45, 0.45, 0.45,
          0.45]
PLATEAU = [
    dict(),
    dict(patience=2),
    dict(patience=1, factor=0.5, cooldown=2),
    dict(patience=0, factor=0.5, min_lr=0.02),
    dict(patience=1, factor=0.3, min_lr=[0.001, 0.05]),
    dict(mode="max", patience=1),
    dict(patience=1, threshold=0.05, threshold_mode="abs"),
    dict(mode="max", patience=2, threshold=0.1, threshold_mode="abs", cooldown=1),
    dict(patience=1, factor=0.5, eps=0.02),
]


@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(i) for i in range(len(PLATEAU))])
def test_reduce_lr_on_plateau_follows_a_loss_sequence_like_torch(kwargs):
    oa, ob = _opts()
    sa = tg.optim.lr_scheduler.ReduceLROnPlateau(oa, **kwargs)
    sb = torch.optim.lr_scheduler.ReduceLROnPlateau(ob, **kwargs)
    seq_a = _sequence(oa, sa, len(LOSSES), metrics=LOSSES)
    seq_b = _sequence(ob, sb, len(LOSSES), metrics=[torch.tensor(v, dtype=torch.float64) for v in LOSSES])
    _assert_seq_equal(seq_a, seq_b)
    assert (sa.best, sa.num_bad_epochs, sa.cooldown_counter, sa.last_epoch) == \
        (sb.best, sb.num_bad_epochs, sb.cooldown_counter, sb.last_epoch)
    assert set(sa.state_dict()) == set(sb.state_dict())
    if kwargs.get("patience", 10) <= 2 and kwargs.get("mode", "min") == "min":
        assert seq_a[-1] != seq_a[0]  # the sequence did cut the lr (the case is not idle)


def test_reduce_lr_on_plateau_accepts_a_tensor_metric_and_resumes():
    oa, _ = _opts()
    s = tg.optim.lr_scheduler.ReduceLROnPlateau(oa, patience=1, factor=0.5)
    for v in LOSSES[:10]:
        s.step(tg.tensor(v))
    sd = s.state_dict()
    oc, _ = _opts()
    for g, lr in zip(oc.param_groups, s.get_last_lr()):
        g["lr"] = lr
    s2 = tg.optim.lr_scheduler.ReduceLROnPlateau(oc)
    s2.load_state_dict(sd)
    for v in LOSSES[10:]:
        s.step(v)
        s2.step(v)
        assert s.get_last_lr() == s2.get_last_lr()


# ---- compositions ------------------------------------------------------------------------
def _compose(lib, opt, which):
    S = lib.optim.lr_scheduler
    if which == "seq-linear-cos":
        return S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=5),
                                    S.CosineAnnealingLR(opt, T_max=20)], milestones=[5])
    if which == "seq-three":
        return S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=4),
                                    S.ExponentialLR(opt, gamma=0.9),
                                    S.StepLR(opt, step_size=3, gamma=0.5)],
                              milestones=[4, 15])
    if which == "seq-nested":
        inner = S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.2, total_iters=3),
                                     S.ExponentialLR(opt, gamma=0.95)], milestones=[3])
        return S.SequentialLR(opt, [inner, S.MultiStepLR(opt, milestones=[4, 8])],
                              milestones=[12])
    if which == "chain-const-exp":
        return S.ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=2),
                                   S.ExponentialLR(opt, gamma=0.9)])
    if which == "chain-warm-cos":
        return S.ChainedScheduler([S.LinearLR(opt, start_factor=0.25, total_iters=6),
                                   S.CosineAnnealingLR(opt, T_max=10),
                                   S.MultiplicativeLR(opt, lambda e: 0.99)], optimizer=opt)
    raise AssertionError(which)


COMPOSITIONS = ["seq-linear-cos", "seq-three", "seq-nested", "chain-const-exp",
                "chain-warm-cos"]


# torch's nested SequentialLR re-steps the inner one and then warns about the call order.
_NESTED_WARNING = "ignore:Detected call of `lr_scheduler.step\\(\\)` before:UserWarning"


@pytest.mark.filterwarnings(_NESTED_WARNING)
@pytest.mark.parametrize("which", COMPOSITIONS)
def test_compositions_match_torch(which):
    oa, ob = _opts()
    seq_a = _sequence(oa, _compose(tg, oa, which), 30)
    seq_b = _sequence(ob, _compose(torch, ob, which), 30)
    _assert_seq_equal(seq_a, seq_b)


def test_composition_errors():
    S = tg.optim.lr_scheduler
    oa, _ = _opts()
    other, _ = _opts()
    with pytest.raises(ValueError, match="at least one scheduler"):
        S.SequentialLR(oa, [], milestones=[])
    with pytest.raises(ValueError, match="number of milestones"):
        S.SequentialLR(oa, [S.StepLR(oa, 2)], milestones=[3])
    with pytest.raises(ValueError, match="same optimizer"):
        S.ChainedScheduler([S.StepLR(oa, 2), S.StepLR(other, 2)])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        S.ChainedScheduler([S.ReduceLROnPlateau(oa)])


# ---- state dicts: torch's keys; resuming mid-way gives the same sequence -----------------
RESUMABLE = [(n, kw) for n, kw in SCHEDULERS if n not in ("LambdaLR", "MultiplicativeLR")
             or not isinstance(kw["lr_lambda"], list)]


def _fresh_resumed(name, kwargs, sd_opt, sd_sched):
    oc, _ = _opts(momentum=0.9)
    oc.load_state_dict(sd_opt)
    sc = _make(tg, name, oc, kwargs)
    sc.load_state_dict(sd_sched)
    # The constructor's initial step rewrote the lrs: restore them from the checkpoint,
    # as a user loading the optimizer's state after the scheduler's would.
    oc.load_state_dict(sd_opt)
    return oc, sc


@pytest.mark.parametrize("name,kwargs", RESUMABLE,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(RESUMABLE)])
def test_state_dict_resume_mid_way(name, kwargs, tmp_path):
    oa, ob = _opts(momentum=0.9)
    sa, sb = _make(tg, name, oa, kwargs), _make(torch, name, ob, kwargs)
    full = _sequence(oa, sa, 30, keys=("lr", "momentum"))
    oa, _ = _opts(momentum=0.9)
    sa = _make(tg, name, oa, kwargs)
    first = _sequence(oa, sa, 12, keys=("lr", "momentum"))
    keys_b = set(sb.state_dict())
    assert set(sa.state_dict()) == keys_b, set(sa.state_dict()) ^ keys_b
    oc, sc = _fresh_resumed(name, kwargs, oa.state_dict(), sa.state_dict())
    rest = _sequence(oc, sc, 18, keys=("lr", "momentum"))
    assert first + rest[1:] == full


@pytest.mark.filterwarnings(_NESTED_WARNING)
@pytest.mark.parametrize("which", COMPOSITIONS)
def test_composition_state_dict_resume(which):
    oa, _ = _opts()
    full = _sequence(oa, _compose(tg, oa, which), 30)
    oa, ob = _opts()
    sa, sb = _compose(tg, oa, which), _compose(torch, ob, which)
    first = _sequence(oa, sa, 10)
    assert set(sa.state_dict()) == set(sb.state_dict())
    assert len(sa.state_dict()["_schedulers"]) == len(sb.state_dict()["_schedulers"])
    sd, sd_opt = sa.state_dict(), oa.state_dict()
    oc, _ = _opts()
    sc = _compose(tg, oc, which)
    sc.load_state_dict(sd)
    oc.load_state_dict(sd_opt)
    rest = _sequence(oc, sc, 20)
    assert first + rest[1:] == full


def test_torch_scheduler_state_dict_loads():
    """A torch scheduler's state dict (plain numbers) loads into ours and continues."""
    oa, ob = _opts()
    sb = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(ob, T_0=4, T_mult=2)
    for _ in range(7):
        ob.step()
        sb.step()
    sa = tg.optim.lr_scheduler.CosineAnnealingWarmRestarts(oa, T_0=4, T_mult=2)
    sa.load_state_dict(sb.state_dict())
    for g, lr in zip(oa.param_groups, sb.get_last_lr()):
        g["lr"] = lr
    _assert_seq_equal(_sequence(oa, sa, 10), _sequence(ob, sb, 10))


def test_lambda_state_dict_saves_callable_objects_only():
    class Decay:
        def __init__(self):
            self.rate = 0.9

        def __call__(self, e):
            return self.rate ** e

    oa, _ = _opts()
    fn = Decay()
    s = tg.optim.lr_scheduler.LambdaLR(oa, [lambda e: 1.0, fn])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [None, {"rate": 0.9}]
    fn.rate = 0.5
    s.load_state_dict(sd)
    assert fn.rate == 0.9


# ---- behaviour details -------------------------------------------------------------------
def test_step_with_epoch_uses_closed_form_and_warns():
    for name, kwargs in [("StepLR", dict(step_size=3, gamma=0.5)),
                         ("MultiStepLR", dict(milestones=[2, 5])),
                         ("ExponentialLR", dict(gamma=0.9)),
                         ("PolynomialLR", dict(total_iters=8, power=2.0)),
                         ("ConstantLR", dict(factor=0.5, total_iters=3)),
                         ("CosineAnnealingLR", dict(T_max=6))]:
        oa, ob = _opts()
        sa, sb = _make(tg, name, oa, kwargs), _make(torch, name, ob, kwargs)
        oa.step()
        ob.step()
        for epoch in (4, 1, 7):
            with pytest.warns(UserWarning, match="epoch parameter"):
                sa.step(epoch)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sb.step(epoch)
            _assert_seq_equal(sa.get_last_lr(), sb.get_last_lr())


def test_warm_restarts_fractional_epochs():
    oa, ob = _opts()
    sa = tg.optim.lr_scheduler.CosineAnnealingWarmRestarts(oa, T_0=3, T_mult=2)
    sb = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(ob, T_0=3, T_mult=2)
    for epoch in range(6):
        for i in range(4):  # the documented per-batch use: step(epoch + i / iters)
            sa.step(epoch + i / 4)
            sb.step(epoch + i / 4)
            _assert_seq_equal(sa.get_last_lr(), sb.get_last_lr())
    with pytest.raises(ValueError, match="non-negative epoch"):
        sa.step(-1)


def test_get_lr_outside_step_warns():
    oa, _ = _opts()
    s = tg.optim.lr_scheduler.StepLR(oa, step_size=2)
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()


def test_onecycle_refuses_to_step_past_total_steps():
    oa, ob = _opts()
    sa = tg.optim.lr_scheduler.OneCycleLR(oa, max_lr=0.1, total_steps=3)
    sb = torch.optim.lr_scheduler.OneCycleLR(ob, max_lr=0.1, total_steps=3)
    for _ in range(3):
        oa.step()
        ob.step()
        sa.step()
        sb.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sb.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sa.step()


ERRORS = [
    ("ConstantLR", dict(factor=1.5), ValueError, "between 0 and 1"),
    ("LinearLR", dict(start_factor=0.0), ValueError, "greater than 0"),
    ("LinearLR", dict(end_factor=2.0), ValueError, "between 0 and 1"),
    ("MultiplicativeLR", dict(lr_lambda=0.5), TypeError, "should be a function"),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1.0]), ValueError, "Expected 2 lr_lambdas"),
    ("CosineAnnealingWarmRestarts", dict(T_0=0), ValueError, "positive integer T_0"),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=1.5), ValueError, "T_mult >= 1"),
    ("OneCycleLR", dict(max_lr=0.1), ValueError, "total_steps OR"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=0), ValueError, "total_steps"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, pct_start=1), ValueError, "pct_start"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, anneal_strategy="exp"), ValueError,
     "anneal_strategy"),
    ("OneCycleLR", dict(max_lr=[0.1], total_steps=10), ValueError, "max_lr must have"),
    ("CyclicLR", dict(base_lr=0.1, max_lr=0.2, mode="square"), ValueError, "mode"),
    ("ReduceLROnPlateau", dict(factor=1.0), ValueError, "Factor should be < 1.0"),
    ("ReduceLROnPlateau", dict(mode="up"), ValueError, "is unknown"),
    ("ReduceLROnPlateau", dict(threshold_mode="pct"), ValueError, "is unknown"),
    ("ReduceLROnPlateau", dict(min_lr=[0.1]), ValueError, "expected 2 min_lrs"),
]


@pytest.mark.parametrize("name,kwargs,exc,match", ERRORS,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(ERRORS)])
def test_errors_match_torch(name, kwargs, exc, match):
    oa, ob = _opts()
    with pytest.raises(exc, match=match):
        _make(torch, name, ob, kwargs)
    with pytest.raises(exc, match=match):
        _make(tg, name, oa, kwargs)


def test_cycle_momentum_needs_a_momentum():
    oa = tg.optim.Adagrad([tg.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="momentum or beta1"):
        tg.optim.lr_scheduler.OneCycleLR(oa, max_lr=0.1, total_steps=5)
    tg.optim.lr_scheduler.OneCycleLR(oa, max_lr=0.1, total_steps=5, cycle_momentum=False)


def test_resume_with_last_epoch_needs_initial_lr():
    oa, _ = _opts()
    with pytest.raises(KeyError, match="initial_lr"):
        tg.optim.lr_scheduler.StepLR(oa, step_size=2, last_epoch=3)


def test_dir_shows_schedulers_not_modules():
    names = [n for n in dir(tg.optim.lr_scheduler) if not n.startswith("__")]
    assert "math" not in names and "types" not in names
    assert not [n for n in names if type(getattr(tg.optim.lr_scheduler, n)) is type(math)]
    for name in torch.optim.lr_scheduler.__all__:
        assert name in names, name
    assert sorted(tg.optim.lr_scheduler.__all__) == sorted(torch.optim.lr_scheduler.__all__)


def _order_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message)[:40] for w in caught if "before `optimizer.step()`" in str(w.message)]


@pytest.mark.parametrize("which", ["plain-wrong-order", "plain-right-order"] + COMPOSITIONS)
def test_step_order_warning_when_torch_warns(which):
    """scheduler.step() before any optimizer.step() warns (once), as torch does; the right
    order and our compositions warn exactly when torch's do."""
    def run(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        if which.startswith("plain"):
            sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        else:
            sched = _compose(lib, opt, which)
        for _ in range(3):
            if which != "plain-wrong-order":
                opt.step()
            sched.step()
    ours, theirs = _order_warnings(lambda: run(tg)), _order_warnings(lambda: run(torch))
    assert len(ours) == len(theirs)
    assert (len(ours) == 1) == (which in ("plain-wrong-order", "seq-nested"))


def test_no_order_warning_for_optimizers_that_do_not_record_calls():
    class Custom(tg.optim.Optimizer):  # a user optimizer: its step is not instrumented
        def __init__(self, params):
            super().__init__(params, dict(lr=0.1))

        def step(self, closure=None):
            pass

    opt = Custom([tg.zeros(1, requires_grad=True)])
    sched = tg.optim.lr_scheduler.StepLR(opt, step_size=2)
    assert _order_warnings(lambda: [opt.step(), sched.step()]) == []

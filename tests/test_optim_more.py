"""tg.optim vs torch.optim for Adadelta, Adagrad, Adamax, NAdam, RAdam and LBFGS: k steps
from identical weights give the same parameters (float64 tight, float32 loose) for many
option combinations; state dicts have torch's layout, round-trip, and torch's load;
validation errors match torch's. Ends with a training loop in the style of PyTorch's
examples/mnist main.py (Adadelta + StepLR)."""
import itertools

import numpy as np
import pytest
import torch

import tapegrad as tg

SHAPES = [(3, 4), (5,), ()]
NEW = ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam"]


def _init(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _loss(lib, params, k):
    # The gradient depends on the weights and on the step k, so moments see changing
    # gradients (and both signs).
    total = 0
    for i, p in enumerate(params):
        c = 0.3 + 0.1 * i + 0.05 * k
        total = total + (lib.sin(p * c) * (1.0 + i) + p * p * 0.5).sum()
    return total


def _train(lib, params, opt, steps):
    for k in steps:
        opt.zero_grad()
        _loss(lib, params, k).backward()
        opt.step()


def _pair(dtype=np.float64):
    init = _init(dtype)
    return ([tg.tensor(a, requires_grad=True) for a in init],
            [torch.tensor(a, requires_grad=True) for a in init])


def _run(name, kwargs, dtype=np.float64, steps=10, groups=None):
    ours, theirs = _pair(dtype)
    if groups:
        opt_a = getattr(tg.optim, name)([{"params": ours[:1], **groups},
                                         {"params": ours[1:]}], **kwargs)
        opt_b = getattr(torch.optim, name)([{"params": theirs[:1], **groups},
                                            {"params": theirs[1:]}], **kwargs)
    else:
        opt_a = getattr(tg.optim, name)(ours, **kwargs)
        opt_b = getattr(torch.optim, name)(theirs, **kwargs)
    _train(tg, ours, opt_a, range(steps))
    _train(torch, theirs, opt_b, range(steps))
    return ours, theirs, opt_a, opt_b


def _close(ours, theirs, dtype):
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    for a, b in zip(ours, theirs):
        assert a.data.dtype == b.detach().numpy().dtype
        assert a.data.shape == tuple(b.shape)
        np.testing.assert_allclose(a.data, b.detach().numpy(), **tol)


def _combos(**options):
    keys = list(options)
    for values in itertools.product(*options.values()):
        yield dict(zip(keys, values))


CASES = (
    [("Adadelta", c) for c in _combos(lr=[1.0, 0.3], rho=[0.9, 0.5], eps=[1e-6, 1e-3],
                                      weight_decay=[0, 0.1], maximize=[False, True])]
    + [("Adagrad", c) for c in _combos(lr=[0.1], lr_decay=[0, 0.05], weight_decay=[0, 0.1],
                                       initial_accumulator_value=[0, 0.5],
                                       eps=[1e-10, 1e-3], maximize=[False, True])]
    + [("Adamax", c) for c in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.7, 0.9)],
                                      eps=[1e-8, 1e-2], weight_decay=[0, 0.1],
                                      maximize=[False, True])]
    + [("NAdam", c) for c in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.8, 0.95)],
                                     weight_decay=[0, 0.1], momentum_decay=[4e-3, 0.1],
                                     decoupled_weight_decay=[False, True],
                                     maximize=[False, True])]
    # RAdam: beta2=0.9 makes rho_t > 5 from step 6 on, so 10 steps cover both branches
    # (the un-adapted start and the rectified update); 0.999 stays un-adapted.
    + [("RAdam", c) for c in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.9, 0.9), (0.5, 0.8)],
                                     eps=[1e-8], weight_decay=[0, 0.1],
                                     decoupled_weight_decay=[False, True],
                                     maximize=[False, True])]
    + [(n, {}) for n in NEW]  # torch's defaults
)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_k_steps_match_torch_float64(name, kwargs):
    ours, theirs, _, _ = _run(name, kwargs)
    _close(ours, theirs, np.float64)


def test_radam_cases_reach_the_rectified_branch():
    # Guard for the comment above: the rectification term is defined (rho_t > 5) within
    # 10 steps for beta2 = 0.9 (so the test exercises that branch).
    beta2 = 0.9
    rho_inf = 2 / (1 - beta2) - 1
    rho = [rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t) for t in range(1, 11)]
    assert rho[0] <= 5 < rho[-1]


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=1.0, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adamax", dict(lr=0.01, weight_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.01, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.5)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.01)),
])
def test_k_steps_match_torch_float32(name, kwargs):
    ours, theirs, opt_a, opt_b = _run(name, kwargs, dtype=np.float32)
    _close(ours, theirs, np.float32)
    for p, q in zip(ours, theirs):  # state dtypes too (NAdam's float32 mu_product...)
        for key, v in opt_b.state[q].items():
            assert opt_a.state[p][key].data.dtype == v.numpy().dtype, key


@pytest.mark.parametrize("name", NEW)
def test_param_groups_own_hyperparameters(name):
    ours, theirs, a, b = _run(name, dict(lr=0.05), groups=dict(lr=0.2, weight_decay=0.1))
    _close(ours, theirs, np.float64)
    assert [g["lr"] for g in a.param_groups] == [g["lr"] for g in b.param_groups]
    assert [sorted(g) for g in a.param_groups] == [sorted(g) for g in b.param_groups]


def test_params_without_grad_are_skipped():
    for name in NEW:
        a = tg.tensor([1.0, -2.0], requires_grad=True)
        b = tg.tensor([3.0], requires_grad=True)
        opt = getattr(tg.optim, name)([a, b], lr=0.1)
        (a * a).sum().backward()
        version = a._version[0]
        opt.step()
        assert a._version[0] > version, name  # in-place update bumps the version counter
        np.testing.assert_array_equal(b.data, [3.0])
        if name != "Adagrad":  # Adagrad (as torch) creates state in the constructor
            assert b not in opt.state, name


# ---- a small MLP regression problem: tg.nn vs torch.nn from the same weights ------------
def _mlp_pair():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                 torch.nn.Linear(8, 1)).double()
    ours = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 1)).double()
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return ours, theirs


def _mlp_data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 16, 4))
    y = np.sin(x.sum(-1, keepdims=True))
    return x, y


def _assert_models_close(ours, theirs):
    sb = theirs.state_dict()
    for k, v in ours.state_dict().items():
        np.testing.assert_allclose(v.data, sb[k].numpy(), rtol=1e-10, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=1.0)), ("Adagrad", dict(lr=0.05, lr_decay=1e-3)),
    ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9))),
])
def test_mlp_least_squares_steps_match_torch(name, kwargs):
    ours, theirs = _mlp_pair()
    oa = getattr(tg.optim, name)(ours.parameters(), **kwargs)
    ob = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    x, y = _mlp_data()
    for xb, yb in zip(x, y):
        for model, opt, lib, F in ((ours, oa, tg, tg.nn.functional),
                                   (theirs, ob, torch, torch.nn.functional)):
            opt.zero_grad()
            loss = F.mse_loss(model(lib.tensor(xb)), lib.tensor(yb))
            loss.backward()
            opt.step()
    _assert_models_close(ours, theirs)


# ---- state dicts ------------------------------------------------------------------------
def _plain(sd):
    if isinstance(sd, torch.Tensor):
        return np.asarray(sd.detach().numpy())
    if isinstance(sd, tg.Tensor):
        return np.asarray(sd.data)
    if isinstance(sd, dict):
        return {k: _plain(v) for k, v in sd.items()}
    if isinstance(sd, (list, tuple)):
        return type(sd)(_plain(v) for v in sd)
    return sd


def _assert_same_tree(a, b, path="sd"):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            _assert_same_tree(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_tree(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), path
        assert a.dtype == b.dtype and a.shape == b.shape, (path, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=path)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-10), (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=0.5)), ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.2)),
    ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01))])
def test_state_dict_matches_torch(name, kwargs):
    _, _, a, b = _run(name, kwargs, steps=3)
    _assert_same_tree(_plain(a.state_dict()), _plain(b.state_dict()))


def test_adagrad_state_exists_before_the_first_step():
    ours, theirs = _pair()
    a = tg.optim.Adagrad(ours, initial_accumulator_value=0.3)
    b = torch.optim.Adagrad(theirs, initial_accumulator_value=0.3)
    _assert_same_tree(_plain(a.state_dict()), _plain(b.state_dict()))


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.1)),
    ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9)))])
def test_state_dict_resume_through_save_load(name, kwargs, tmp_path):
    """Train 5 steps, checkpoint with tg.save, restore into fresh objects, train 5 more:
    equal to torch doing the same through its state dict, and (but for NAdam) bit-identical
    to 10 uninterrupted steps."""
    full, _, _, _ = _run(name, kwargs, steps=10)
    params, theirs, opt, opt_b = _run(name, kwargs, steps=5)
    tg.save({"params": [p.detach() for p in params], "opt": opt.state_dict()},
            tmp_path / "ck.npz")
    ck = tg.load(tmp_path / "ck.npz")
    fresh = [tg.tensor(p.data, requires_grad=True) for p in ck["params"]]
    opt2 = getattr(tg.optim, name)(fresh, **kwargs)
    opt2.load_state_dict(ck["opt"])
    _train(tg, fresh, opt2, range(5, 10))
    fresh_b = [q.detach().clone().requires_grad_(True) for q in theirs]
    opt2_b = getattr(torch.optim, name)(fresh_b, **kwargs)
    opt2_b.load_state_dict(opt_b.state_dict())
    _train(torch, fresh_b, opt2_b, range(5, 10))
    _close(fresh, fresh_b, np.float64)
    if name == "NAdam":
        # NOTE: loading casts every floating state but `step` to the parameter's dtype
        # (torch's rule), so NAdam's float32 mu_product resumes as float64, in torch too.
        assert opt2.state[fresh[0]]["mu_product"].data.dtype == np.float64
        assert opt2_b.state[fresh_b[0]]["mu_product"].dtype == torch.float64
    else:
        for a, b in zip(fresh, full):
            np.testing.assert_array_equal(a.data, b.data)


def _to_tg_state(sd):
    def conv(v):
        if isinstance(v, torch.Tensor):
            return tg.tensor(v.detach().numpy().copy())
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return {"state": {i: {k: conv(v) for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=0.5)), ("Adagrad", dict(lr=0.1)), ("Adamax", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.05, betas=(0.9, 0.9)))])
def test_torch_state_dict_loads_and_continues(name, kwargs):
    ours, theirs = _pair()
    ob = getattr(torch.optim, name)(theirs, **kwargs)
    _train(torch, theirs, ob, range(4))
    for p, q in zip(ours, theirs):
        p.data[...] = q.detach().numpy()
    oa = getattr(tg.optim, name)(ours, lr=0.123)
    oa.load_state_dict(_to_tg_state(ob.state_dict()))
    assert oa.param_groups[0]["lr"] == kwargs["lr"]
    _train(tg, ours, oa, range(4, 9))
    _train(torch, theirs, ob, range(4, 9))
    _close(ours, theirs, np.float64)


# ---- validation: the same errors as torch -----------------------------------------------
BAD = [
    ("Adadelta", dict(lr=-0.1), "Invalid learning rate"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value"),
    ("Adadelta", dict(eps=-1.0), "Invalid epsilon value"),
    ("Adadelta", dict(weight_decay=-1.0), "Invalid weight_decay value"),
    ("Adagrad", dict(lr=-0.1), "Invalid learning rate"),
    ("Adagrad", dict(lr_decay=-0.1), "Invalid lr_decay value"),
    ("Adagrad", dict(initial_accumulator_value=-1.0), "Invalid initial_accumulator_value"),
    ("Adagrad", dict(eps=-1.0), "Invalid epsilon value"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
    ("NAdam", dict(momentum_decay=-1.0), "Invalid momentum_decay value"),
    ("NAdam", dict(weight_decay=-1.0), "Invalid weight_decay value"),
    ("RAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
    ("RAdam", dict(eps=-1.0), "Invalid epsilon value"),
    ("LBFGS", dict(lr=-1.0), "Invalid learning rate"),
]


@pytest.mark.parametrize("name,kwargs,match", BAD)
def test_invalid_arguments_raise_like_torch(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError, match=match):
        getattr(tg.optim, name)([tg.zeros(2, requires_grad=True)], **kwargs)


@pytest.mark.parametrize("name", NEW + ["LBFGS"])
def test_defaults_match_torch(name):
    a = getattr(tg.optim, name)([tg.zeros(2, requires_grad=True)])
    b = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert a.defaults == b.defaults or {k: tuple(v) if isinstance(v, tuple) else v
                                        for k, v in a.defaults.items()} == \
        {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in b.defaults.items()}


# ---- LBFGS ------------------------------------------------------------------------------
def _lsq_data(dtype=np.float64):
    rng = np.random.default_rng(2)
    A = rng.standard_normal((12, 5)).astype(dtype)
    b = rng.standard_normal(12).astype(dtype)
    return A, b


def _lbfgs_pair(kwargs, dtype=np.float64):
    """A smooth convex-ish least-squares problem in a vector w and a 0-d scale s:
    0.5 |A w + 0.3 tanh(A w) - s b|^2 + 0.05 |w|^4 + (s - 1)^2. (Well conditioned on
    purpose: on a chaotic problem, lr=1 L-BFGS amplifies last-bit gradient differences.)
    Returns [(params, opt, closure, losses seen)] for tapegrad, then torch."""
    A, b = _lsq_data(dtype)
    rng = np.random.default_rng(3)
    w0 = (rng.standard_normal(5) * 0.5).astype(dtype)
    s0 = np.array(1.5, dtype)
    out = []
    for lib in (tg, torch):
        w = lib.tensor(w0.copy(), requires_grad=True)
        s = lib.tensor(s0.copy(), requires_grad=True)
        At, bt = lib.tensor(A), lib.tensor(b)
        opt = getattr(lib.optim, "LBFGS")([w, s], **kwargs)
        calls = []

        def closure(lib=lib, w=w, s=s, At=At, bt=bt, opt=opt, calls=calls):
            opt.zero_grad()
            r = At @ w + 0.3 * lib.tanh(At @ w) - bt * s
            loss = 0.5 * (r * r).sum() + 0.05 * ((w * w).sum()) ** 2 + (s - 1) ** 2
            loss.backward()
            calls.append(float(loss.detach()))
            return loss
        out.append(([w, s], opt, closure, calls))
    return out


LBFGS_CASES = [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(lr=0.5, max_iter=5),
    dict(lr=0.8, max_iter=4, history_size=2),
    dict(max_iter=7, history_size=3, line_search_fn="strong_wolfe"),
    dict(lr=1.0, max_iter=3, max_eval=5, line_search_fn="strong_wolfe"),
    dict(tolerance_change=1e-4, tolerance_grad=1e-3),
]


@pytest.mark.parametrize("kwargs", LBFGS_CASES, ids=[str(i) for i in range(len(LBFGS_CASES))])
def test_lbfgs_steps_match_torch(kwargs):
    (pa, oa, ca, calls_a), (pb, ob, cb, calls_b) = _lbfgs_pair(kwargs)
    for _ in range(4):
        la = oa.step(ca)
        lb = ob.step(cb)
        assert isinstance(la, tg.Tensor)  # the first closure's loss, as torch returns it
        np.testing.assert_allclose(float(la), float(lb.detach()), rtol=1e-10)
    _close(pa, pb, np.float64)
    # The same number of closure calls, at the same losses (the line search took the
    # same path), and the same counters in the state.
    assert len(calls_a) == len(calls_b)
    np.testing.assert_allclose(calls_a, calls_b, rtol=1e-9, atol=1e-12)
    sa, sb = oa.state[pa[0]], ob.state[pb[0]]
    assert (sa["n_iter"], sa["func_evals"]) == (sb["n_iter"], sb["func_evals"])
    assert len(sa["old_dirs"]) == len(sb["old_dirs"])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_float32(line_search_fn):
    (pa, oa, ca, _), (pb, ob, cb, _) = _lbfgs_pair(dict(max_iter=5,
                                                        line_search_fn=line_search_fn),
                                                   dtype=np.float32)
    oa.step(ca)
    ob.step(cb)
    _close(pa, pb, np.float32)
    assert pa[1].data.shape == ()


def test_lbfgs_minimises_rosenbrock_like_torch():
    """The classic test problem: strong Wolfe L-BFGS reaches the minimum (1, 1)."""
    out = []
    for lib in (tg, torch):
        x = lib.tensor(np.array([-1.5, 2.0]), requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, max_iter=100, line_search_fn="strong_wolfe")

        def closure(x=x, opt=opt):
            opt.zero_grad()
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        out.append(x.detach().numpy() if lib is torch else x.data)
    np.testing.assert_allclose(out[0], [1.0, 1.0], atol=1e-4)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-8, atol=1e-10)


def test_lbfgs_state_dict_round_trip(tmp_path):
    kwargs = dict(max_iter=3, history_size=4, line_search_fn="strong_wolfe")
    (pa, oa, ca, _), (pb, ob, cb, _) = _lbfgs_pair(kwargs)
    for _ in range(2):
        oa.step(ca)
        ob.step(cb)
    sd_a, sd_b = _plain(oa.state_dict()), _plain(ob.state_dict())
    assert set(sd_a["state"][0]) == set(sd_b["state"][0])
    for key in ("d", "prev_flat_grad", "old_dirs", "old_stps", "ro", "H_diag",
                "n_iter", "func_evals", "prev_loss"):
        _assert_same_tree(sd_a["state"][0][key], sd_b["state"][0][key], key)
    tg.save({"opt": oa.state_dict()}, tmp_path / "lbfgs.npz")
    loaded = tg.load(tmp_path / "lbfgs.npz")
    (qa, oc, cc, _), _ = _lbfgs_pair(kwargs)
    for p, q in zip(qa, pa):
        p.data[...] = q.data
    oc.load_state_dict(loaded["opt"])
    oc.step(cc)
    ob.step(cb)
    _close(qa, pb, np.float64)


def test_lbfgs_loads_torch_state_dict_and_continues():
    kwargs = dict(max_iter=4, history_size=3, line_search_fn="strong_wolfe")
    (pa, oa, ca, _), (pb, ob, cb, _) = _lbfgs_pair(kwargs)
    for _ in range(2):
        ob.step(cb)
    for p, q in zip(pa, pb):
        p.data[...] = q.detach().numpy()
    oa.load_state_dict(_to_tg_state(ob.state_dict()))
    for _ in range(2):
        oa.step(ca)
        ob.step(cb)
    _close(pa, pb, np.float64)
    assert oa.state[pa[0]]["n_iter"] == ob.state[pb[0]]["n_iter"]


def test_lbfgs_errors():
    a, b = tg.zeros(2, requires_grad=True), tg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        tg.optim.LBFGS([{"params": [a]}, {"params": [b], "lr": 0.1}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        tg.optim.LBFGS([a], line_search_fn="armijo")
    with pytest.raises(TypeError, match="needs a closure"):
        tg.optim.LBFGS([a]).step(None)
    assert tg.optim.LBFGS([a], max_iter=8).defaults["max_eval"] == 10  # max_iter * 5 // 4


def test_lbfgs_returns_early_at_a_stationary_point():
    x = tg.tensor([0.0, 0.0], requires_grad=True)
    opt = tg.optim.LBFGS([x])

    def closure():
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 0.0
    assert opt.state[x]["func_evals"] == 1 and opt.state[x]["n_iter"] == 0


# ---- "real programs run unchanged": PyTorch's examples/mnist main.py style ---------------
def _mnist_style_run(lib, weights, batches, lr=1.0, gamma=0.7, epochs=3):
    """Written in the shape of examples/mnist: its Net (smaller; dropout layers kept but
    with p=0, since the two libraries' random masks differ), Adadelta(lr), StepLR(step_size=1,
    gamma), train() per epoch with zero_grad/backward/step, then scheduler.step()."""
    nn, F, optim = lib.nn, lib.nn.functional, lib.optim
    StepLR = lib.optim.lr_scheduler.StepLR

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout1 = nn.Dropout(0.0)
            self.dropout2 = nn.Dropout(0.0)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    model = Net().double()
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})

    def train(model, train_loader, optimizer, epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()

    def test(model, test_loader):
        model.eval()
        test_loss, correct = 0, 0
        with lib.no_grad():
            for data, target in test_loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        return test_loss / 8 / len(test_loader), correct

    optimizer = optim.Adadelta(model.parameters(), lr=lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=gamma)
    history = []
    loader = [(lib.tensor(x), lib.tensor(y)) for x, y in batches]
    for epoch in range(1, epochs + 1):
        train(model, loader, optimizer, epoch)
        history.append((*test(model, loader[:1]), scheduler.get_last_lr()))
        scheduler.step()
    return {k: np.array(v.detach().numpy() if lib is torch else v.data)
            for k, v in model.state_dict().items()}, history


def test_mnist_example_style_adadelta_steplr():
    torch.manual_seed(1)
    ref = torch.nn.ModuleDict(dict(conv1=torch.nn.Conv2d(1, 4, 3, 1),
                                   conv2=torch.nn.Conv2d(4, 8, 3, 1),
                                   fc1=torch.nn.Linear(32, 16), fc2=torch.nn.Linear(16, 10)))
    weights = {k: v.detach().double().numpy() for k, v in ref.state_dict().items()}
    rng = np.random.default_rng(5)
    batches = [(rng.standard_normal((8, 1, 8, 8)), rng.integers(0, 10, 8)) for _ in range(3)]
    ours, hist_a = _mnist_style_run(tg, weights, batches)
    theirs, hist_b = _mnist_style_run(torch, weights, batches)
    assert [h[2] for h in hist_a] == [h[2] for h in hist_b] == [[1.0], [0.7], [0.7 * 0.7]]
    np.testing.assert_allclose([h[0] for h in hist_a], [h[0] for h in hist_b], rtol=1e-10)
    assert [h[1] for h in hist_a] == [h[1] for h in hist_b]
    for k in theirs:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10, atol=1e-12, err_msg=k)

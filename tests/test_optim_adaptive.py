"""tg.optim vs torch.optim for the adaptive optimizers Adadelta, Adagrad, Adamax, NAdam and
RAdam: k steps from identical weights give the same parameters (float64 tight, float32
loose) for many option combinations; state dicts have torch's layout, round-trip, and
torch's load; validation errors match torch's. Ends with a training loop in the style of
PyTorch's examples/mnist main.py (Adadelta + StepLR).
"""
import itertools

import numpy as np
import pytest
import torch

import tapegrad as tg

from _optim_helpers import (_assert_same_tree, _close, _plain, _tensor_pair, _to_tg_state,
                            _train)


NEW = ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam"]


def _run(name, kwargs, dtype=np.float64, steps=10, groups=None):
    ours, theirs = _tensor_pair(dtype)
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
        version = a._version
        opt.step()
        assert a._version > version, name  # in-place update bumps the version counter
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


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=0.5)), ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.2)),
    ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01))])
def test_state_dict_matches_torch(name, kwargs):
    _, _, a, b = _run(name, kwargs, steps=3)
    _assert_same_tree(_plain(a.state_dict()), _plain(b.state_dict()))


def test_adagrad_state_exists_before_the_first_step():
    ours, theirs = _tensor_pair()
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


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=0.5)), ("Adagrad", dict(lr=0.1)), ("Adamax", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.05, betas=(0.9, 0.9)))])
def test_torch_state_dict_loads_and_continues(name, kwargs):
    ours, theirs = _tensor_pair()
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

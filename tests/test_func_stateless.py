"""functional_call / stack_module_state against torch.func, in the style of PyTorch's
per-sample-gradients and model-ensembling tutorials (float64, identical weights)."""
import copy

import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_close
from _nn_helpers import copy_to_torch


def _mlp_class(nn, F):
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.fc2 = nn.Linear(8, 3)
            self.register_buffer("temperature", (torch if nn is torch.nn else tg).tensor(
                [1.5], dtype=(torch if nn is torch.nn else tg).float64))

        def forward(self, x):
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x) / self.temperature, dim=1)
    return MLP


TG_MLP = _mlp_class(tg.nn, tg.nn.functional)
TH_MLP = _mlp_class(torch.nn, torch.nn.functional)


def _twins(n=1):
    """n tapegrad MLPs and their torch twins (same weights, float64)."""
    ours = [TG_MLP().double() for _ in range(n)]
    theirs = [copy_to_torch(m, TH_MLP().double()) for m in ours]
    return ours, theirs


def _close_dict(a, b):
    assert list(a) == list(b)
    for k in b:
        assert tuple(a[k].shape) == tuple(b[k].shape), k
        assert_close(a[k], b[k])


def _data(batch=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 6)), rng.integers(0, 3, batch)


def test_per_sample_gradients_tutorial():
    (model,), (tmodel,) = _twins()
    x, y = _data()

    def per_sample(T, model, data, targets):
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch = sample.unsqueeze(0)
            targets = target.unsqueeze(0)
            predictions = T.func.functional_call(model, (params, buffers), (batch,))
            return T.nn.functional.nll_loss(predictions, targets)

        ft_compute_sample_grad = T.func.vmap(T.func.grad(compute_loss),
                                             in_dims=(None, None, 0, 0))
        return ft_compute_sample_grad(params, buffers, data, targets)

    ours = per_sample(tg, model, tg.tensor(x), tg.tensor(y))
    theirs = per_sample(torch, tmodel, torch.tensor(x), torch.tensor(y))
    _close_dict(ours, theirs)
    assert tuple(ours["fc1.weight"].shape) == (5, 8, 6)
    # the tutorial's baseline: one forward/backward per sample with torch's autograd
    for i in range(5):
        tmodel.zero_grad()
        torch.nn.functional.nll_loss(tmodel(torch.tensor(x[i:i + 1])),
                                     torch.tensor(y[i:i + 1])).backward()
        for k, p in tmodel.named_parameters():
            assert_close(ours[k][i], p.grad)
    assert all(p.grad is None for p in model.parameters())  # the module was not touched


@pytest.mark.parametrize("same_minibatch", [True, False])
def test_ensembling_tutorial(same_minibatch):
    models, tmodels = _twins(4)
    rng = np.random.default_rng(1)
    data = rng.standard_normal((4, 5, 6))

    def ensemble(T, models, minibatches):
        params, buffers = T.func.stack_module_state(models)
        base_model = copy.deepcopy(models[0])

        def fmodel(params, buffers, x):
            return T.func.functional_call(base_model, (params, buffers), (x,))

        if same_minibatch:
            return T.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0]), \
                params
        return T.func.vmap(fmodel)(params, buffers, minibatches), params

    out, params = ensemble(tg, models, tg.tensor(data))
    tout, tparams = ensemble(torch, tmodels, torch.tensor(data))
    assert tuple(out.shape) == (4, 5, 3)
    assert_close(out, tout)
    # each slice is that model's own prediction
    assert_close(out[2], tmodels[2](torch.tensor(data[0 if same_minibatch else 2])))
    # the stacked parameters are new leaves: train the ensemble through them
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    for k in tparams:
        assert params[k].is_leaf and params[k].requires_grad
        assert_close(params[k].grad, tparams[k].grad)


def test_stack_module_state_values_and_errors():
    models, tmodels = _twins(3)
    params, buffers = tg.func.stack_module_state(models)
    tparams, tbuffers = torch.func.stack_module_state(tmodels)
    _close_dict(params, tparams)
    _close_dict(buffers, tbuffers)
    assert not buffers["temperature"].requires_grad
    for T, ms in ((tg, models), (torch, tmodels)):
        with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
            T.func.stack_module_state([])
        ms[1].eval()
        with pytest.raises(RuntimeError, match="same training/eval mode"):
            T.func.stack_module_state(ms)
        ms[1].train()
        with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
            T.func.stack_module_state([ms[0], T.nn.Linear(6, 8)])
        ms[2].fc1.bias.requires_grad_(False)
        with pytest.raises(RuntimeError, match="Expected fc1.bias from each model to have the "
                                               "same .requires_grad"):
            T.func.stack_module_state(ms)


def test_functional_call_swaps_and_restores():
    (model,), (tmodel,) = _twins()
    x, _ = _data()
    rng = np.random.default_rng(3)
    new = {"fc1.weight": rng.standard_normal((8, 6)), "fc2.bias": rng.standard_normal(3)}
    w_before = model.fc1.weight
    out = tg.func.functional_call(model, {k: tg.tensor(v) for k, v in new.items()},
                                  tg.tensor(x))  # args that is not a tuple: one argument
    tout = torch.func.functional_call(tmodel, {k: torch.tensor(v) for k, v in new.items()},
                                      torch.tensor(x))
    assert_close(out, tout)
    assert model.fc1.weight is w_before and isinstance(model.fc1.weight, tg.nn.Parameter)
    assert_close(model(tg.tensor(x)), tmodel(torch.tensor(x)))
    # the other path torch has
    out2 = tg.nn.utils.stateless.functional_call(
        model, {"fc1.weight": tg.tensor(new["fc1.weight"])}, (tg.tensor(x),))
    tout2 = torch.nn.utils.stateless.functional_call(
        tmodel, {"fc1.weight": torch.tensor(new["fc1.weight"])}, (torch.tensor(x),))
    assert_close(out2, tout2)

    class Boom(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tg.nn.Linear(2, 2)

        def forward(self, x, fail=False):
            if fail:
                raise KeyError("boom")
            return self.lin(x)

    m = Boom()
    w = m.lin.weight
    with pytest.raises(KeyError):
        tg.func.functional_call(m, {"lin.weight": tg.zeros(2, 2)}, (tg.ones(1, 2),),
                                {"fail": True})
    assert m.lin.weight is w  # restored although forward raised


def _tied_class(nn):
    class Tied(nn.Module):
        """nanoGPT's weight tying: the output layer shares the embedding matrix."""

        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(7, 4)
            self.lm_head = nn.Linear(4, 7, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, idx):
            return self.lm_head(self.wte(idx))
    return Tied


def test_functional_call_tie_weights():
    model = _tied_class(tg.nn)().double()
    tmodel = copy_to_torch(model, _tied_class(torch.nn)().double())
    idx = np.array([[1, 4, 6]])
    w = np.random.default_rng(4).standard_normal((7, 4))
    outs = []
    for kw in (dict(), dict(tie_weights=False)):
        out = tg.func.functional_call(model, {"wte.weight": tg.tensor(w)}, (tg.tensor(idx),),
                                      **kw)
        tout = torch.func.functional_call(tmodel, {"wte.weight": torch.tensor(w)},
                                          (torch.tensor(idx),), **kw)
        assert_close(out, tout)
        outs.append(out)
    assert not np.allclose(outs[0].data, outs[1].data)  # tied: the head used w too
    assert_close(outs[0], np.asarray(w)[idx] @ np.asarray(w).T)
    for T, m in ((tg, model), (torch, tmodel)):
        with pytest.raises(ValueError, match=r"functional_call got multiple values for keys "
                                             r"\['lm_head.weight', 'wte.weight'\], which are "
                                             r"tied. Consider using tie_weights=False"):
            T.func.functional_call(m, {"wte.weight": T.tensor(w),
                                       "lm_head.weight": T.tensor(w * 2)}, (T.tensor(idx),))


def test_functional_call_strict_and_argument_errors():
    (model,), (tmodel,) = _twins()
    x, _ = _data()
    for T, m in ((tg, model), (torch, tmodel)):
        xt = T.tensor(x)
        params = {k: v.detach() for k, v in m.named_parameters()}
        with pytest.raises(RuntimeError) as ei:
            T.func.functional_call(m, {**params, "extra": T.ones(1)}, (xt,), strict=True)
        assert str(ei.value) == ("Error(s) in reparametrizing for MLP:\n\tUnexpected key(s): "
                                 "'extra'.\n\tMissing key(s): 'temperature'.")
        with pytest.raises(ValueError, match=r"\['fc1.bias'\] appeared in multiple "
                                             r"dictionaries; behavior of functional call is "
                                             r"ambiguous"):
            T.func.functional_call(m, ({"fc1.bias": params["fc1.bias"]},
                                       {"fc1.bias": params["fc1.bias"]}), (xt,))
        with pytest.raises(ValueError, match="Expected all elements of "
                                             "parameter_and_buffer_dicts to be dictionaries"):
            T.func.functional_call(m, ({"fc1.bias": params["fc1.bias"]}, 3), (xt,))
        # strict=False: a name the module does not have is set for the call only
        T.func.functional_call(m, {"not_a_param": T.ones(1)}, (xt,))
        assert not hasattr(m, "not_a_param")


def test_forward_ad_tutorial_functional_call():
    """Forward-mode AD through a module with dual parameters (the forward-AD tutorial)."""
    model = tg.nn.Linear(5, 5).double()
    tmodel = copy_to_torch(model, torch.nn.Linear(5, 5).double())
    rng = np.random.default_rng(5)
    inp = rng.standard_normal((16, 5))
    tangents = {k: rng.standard_normal(tuple(p.shape)) for k, p in model.named_parameters()}

    def run(T, fwAD, m):
        params = {name: p for name, p in m.named_parameters()}
        dual_params = {}
        with fwAD.dual_level():
            for name, p in params.items():
                dual_params[name] = fwAD.make_dual(p, T.tensor(tangents[name]))
            out = T.func.functional_call(m, dual_params, T.tensor(inp))
            return fwAD.unpack_dual(out).tangent

    assert_close(run(tg, tg.autograd.forward_ad, model),
                 run(torch, torch.autograd.forward_ad, tmodel))


def test_grad_and_hessian_of_a_module_loss_wrt_its_params():
    (model,), (tmodel,) = _twins()
    x, y = _data()

    def loss(T, m):
        return lambda p, xb, yb: T.nn.functional.nll_loss(T.func.functional_call(m, p, (xb,)), yb)

    p = {k: v.detach() for k, v in model.named_parameters() if k.startswith("fc2")}
    tp = {k: v.detach() for k, v in tmodel.named_parameters() if k.startswith("fc2")}
    _close_dict(tg.func.grad(loss(tg, model))(p, tg.tensor(x), tg.tensor(y)),
                torch.func.grad(loss(torch, tmodel))(tp, torch.tensor(x), torch.tensor(y)))
    h = tg.func.hessian(loss(tg, model))(p, tg.tensor(x), tg.tensor(y))
    th = torch.func.hessian(loss(torch, tmodel))(tp, torch.tensor(x), torch.tensor(y))
    for a in th:
        _close_dict(h[a], th[a])


def _cnn_class(nn, F, flatten):
    class SimpleCNN(nn.Module):
        """The per-sample-gradients tutorial's CNN, shrunk to 8x8 images."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 6, 3, 1)
            self.fc1 = nn.Linear(24, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)
    return SimpleCNN


def test_per_sample_gradients_of_the_tutorial_cnn():
    model = _cnn_class(tg.nn, tg.nn.functional, tg.flatten)().double()
    tmodel = copy_to_torch(model, _cnn_class(torch.nn, torch.nn.functional,
                                             torch.flatten)().double())
    rng = np.random.default_rng(6)
    data, targets = rng.standard_normal((4, 1, 8, 8)), rng.integers(0, 10, 4)

    def run(T, m):
        params = {k: v.detach() for k, v in m.named_parameters()}
        buffers = {k: v.detach() for k, v in m.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            predictions = T.func.functional_call(m, (params, buffers), (sample.unsqueeze(0),))
            return T.nn.functional.nll_loss(predictions, target.unsqueeze(0))

        return T.func.vmap(T.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
            params, buffers, T.tensor(data), T.tensor(targets))

    _close_dict(run(tg, model), run(torch, tmodel))

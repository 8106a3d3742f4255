"""nn modules vs torch.nn from identical weights: values, input and parameter gradients,
buffers; the Module machinery (registration, traversal order, state_dict, modes,
hooks, repr) vs PyTorch's behaviour; error messages."""
import re

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
from _nn_helpers import close, compare_module, copy_to_torch

DTYPES = [np.float64, np.float32]


def _x(*shape, seed=0, scale=1.0):
    x = np.random.default_rng(seed).standard_normal(shape) * scale
    if x.size > 3:
        x.reshape(-1)[:4] = [0.0, -1.0, 6.0, 30.0]  # kinks, bounds, thresholds: exact points
    return x


# ---- layers vs torch ------------------------------------------------------------------
LAYERS = [
    ("Linear", lambda L: L.Linear(4, 3), (5, 4)),
    ("Linear-batched", lambda L: L.Linear(4, 3), (2, 5, 4)),
    ("Linear-nobias", lambda L: L.Linear(4, 2, bias=False), (5, 4)),
    ("Linear-1d", lambda L: L.Linear(4, 2), (4,)),
    ("Identity", lambda L: L.Identity(3, foo=1), (2, 3)),
    ("ReLU", lambda L: L.ReLU(), (4, 5)),
    ("LeakyReLU", lambda L: L.LeakyReLU(0.2), (4, 5)),
    ("Tanh", lambda L: L.Tanh(), (4, 5)),
    ("Sigmoid", lambda L: L.Sigmoid(), (4, 5)),
    ("GELU", lambda L: L.GELU(), (4, 5)),
    ("GELU-tanh", lambda L: L.GELU(approximate="tanh"), (4, 5)),
    ("SiLU", lambda L: L.SiLU(), (4, 5)),
    ("ELU", lambda L: L.ELU(alpha=0.7), (4, 5)),
    ("Softplus", lambda L: L.Softplus(), (4, 5)),
    ("Softplus-beta", lambda L: L.Softplus(beta=2.0, threshold=3.0), (4, 5)),
    ("Hardtanh", lambda L: L.Hardtanh(-0.5, 0.8), (4, 5)),
    ("ReLU6", lambda L: L.ReLU6(), (4, 5)),
    ("Softmax", lambda L: L.Softmax(dim=1), (4, 5)),
    ("LogSoftmax", lambda L: L.LogSoftmax(dim=-1), (2, 4, 5)),
    ("Flatten", lambda L: L.Flatten(), (2, 3, 4)),
    ("Flatten-range", lambda L: L.Flatten(0, 1), (2, 3, 4)),
    ("Unflatten", lambda L: L.Unflatten(1, (2, 3)), (4, 6)),
    ("LayerNorm", lambda L: L.LayerNorm(5), (4, 5)),
    ("LayerNorm-2d", lambda L: L.LayerNorm((3, 4)), (2, 3, 4)),
    ("LayerNorm-noaffine", lambda L: L.LayerNorm(5, elementwise_affine=False), (4, 5)),
    ("LayerNorm-nobias", lambda L: L.LayerNorm(5, bias=False), (4, 5)),
    ("BatchNorm1d", lambda L: L.BatchNorm1d(3), (8, 3)),
    ("BatchNorm1d-NCL", lambda L: L.BatchNorm1d(3), (4, 3, 5)),
    ("BatchNorm1d-noaffine", lambda L: L.BatchNorm1d(3, affine=False), (8, 3)),
    ("BatchNorm1d-momentum-None", lambda L: L.BatchNorm1d(3, momentum=None), (8, 3)),
    ("BatchNorm1d-momentum-0.3", lambda L: L.BatchNorm1d(3, momentum=0.3, eps=1e-3), (8, 3)),
    ("BatchNorm1d-notrack", lambda L: L.BatchNorm1d(3, track_running_stats=False), (8, 3)),
    ("Dropout-eval", lambda L: L.Dropout(0.3).eval(), (4, 5)),
    ("MLP", lambda L: L.Sequential(L.Linear(6, 8), L.Tanh(), L.Linear(8, 8), L.ReLU(),
                                   L.Linear(8, 3)), (5, 6)),
    ("MLP-BN", lambda L: L.Sequential(L.Linear(6, 8, bias=False), L.BatchNorm1d(8), L.Tanh(),
                                      L.Linear(8, 3)), (7, 6)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,make,shape", LAYERS, ids=[n for n, _, _ in LAYERS])
def test_layer_vs_torch(name, make, shape, dtype):
    tg_mod, th_mod = make(nn), make(torch.nn)
    # perturb the defaults (ones/zeros) so that the affine parameters matter
    for p in tg_mod.parameters():
        p.numpy(force=True)[...] += np.random.default_rng(1).standard_normal(p.shape) * 0.1
    compare_module(tg_mod, th_mod, _x(*shape), dtype, steps=3)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_batchnorm_eval_after_training(dtype):
    """Running statistics after several training batches, then eval mode uses them."""
    tg_bn, th_bn = nn.BatchNorm1d(4, momentum=0.2), torch.nn.BatchNorm1d(4, momentum=0.2)
    compare_module(tg_bn, th_bn, _x(10, 4, scale=3.0) + 2.0, dtype, steps=4)
    assert int(tg_bn.num_batches_tracked.item()) == int(th_bn.num_batches_tracked) == 4
    tg_bn.eval()
    th_bn.eval()
    compare_module(tg_bn, th_bn, _x(6, 4, seed=5), dtype)
    # eval mode does not touch the running statistics
    assert int(tg_bn.num_batches_tracked.item()) == 4


@pytest.mark.parametrize("momentum", [None, 0.1])
def test_batchnorm_running_var_is_unbiased(momentum):
    """PyTorch's convention: normalize with the biased variance, track the unbiased."""
    bn = nn.BatchNorm1d(2, momentum=momentum)
    x = _x(5, 2)
    bn(tg.tensor(x))
    m = 1.0 if momentum is None else momentum
    np.testing.assert_allclose(bn.running_var.numpy(force=True), (1 - m) + m * x.var(0, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(bn.running_mean.numpy(force=True), m * x.mean(0), rtol=1e-6, atol=1e-7)


def test_batchnorm_errors():
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(tg.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(tg.randn(1, 3))
    nn.BatchNorm1d(3).eval()(tg.randn(1, 3))  # fine in eval mode


def test_batchnorm_correction_keyword():
    """correction=1 normalizes with Bessel's correction (makemore); default is biased."""
    x = _x(6, 3)
    y0 = nn.BatchNorm1d(3)(tg.tensor(x, dtype=tg.float64)).numpy(force=True)
    y1 = nn.BatchNorm1d(3, correction=1)(tg.tensor(x, dtype=tg.float64)).numpy(force=True)
    np.testing.assert_allclose(y0, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-6)
    np.testing.assert_allclose(y1, (x - x.mean(0)) / np.sqrt(x.var(0, ddof=1) + 1e-5),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_embedding_vs_torch(dtype):
    idx = np.array([[1, 3, 1], [0, 3, 3]])
    compare_module(nn.Embedding(5, 4), torch.nn.Embedding(5, 4), idx, dtype, int_input=True)
    compare_module(nn.Embedding(5, 4, padding_idx=3), torch.nn.Embedding(5, 4, padding_idx=3),
                   idx, dtype, int_input=True)


def test_embedding_padding_and_pretrained():
    e = nn.Embedding(6, 3, padding_idx=-1)
    assert e.padding_idx == 5 and not np.any(e.weight.numpy(force=True)[5])
    out = e(tg.tensor([5, 5, 1]))
    out.sum().backward()
    assert not np.any(e.weight.grad.numpy(force=True)[5])
    np.testing.assert_array_equal(e.weight.grad.numpy(force=True)[1], np.ones(3))
    w = tg.randn(4, 2)
    p = nn.Embedding.from_pretrained(w)
    assert not p.weight.requires_grad and np.shares_memory(p.weight.numpy(force=True), w.numpy(force=True))
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(IndexError, match="index out of range"):
        e(tg.tensor([6]))
    with pytest.raises(RuntimeError, match="indices"):
        e(tg.tensor([1.0]))
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == repr(torch.nn.Embedding(10, 3,
                                                                               padding_idx=0))


def test_dropout_train_and_eval():
    tg.manual_seed(0)
    d = nn.Dropout(0.25)
    x = tg.ones(200, 50, requires_grad=True)
    y = d(x)
    vals = np.unique(y.numpy(force=True))
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-6)
    frac = float((y.numpy(force=True) == 0).mean())
    assert abs(frac - 0.25) < 0.02
    y.backward(tg.ones_like(y))
    np.testing.assert_array_equal(x.grad.numpy(force=True), y.numpy(force=True))   # gradient = the same mask
    d.eval()
    assert d(x) is x
    assert np.all(nn.Dropout(1.0)(x).numpy(force=True) == 0)
    with pytest.raises(ValueError, match="dropout probability"):
        nn.Dropout(1.5)
    tg.manual_seed(3)
    a = nn.Dropout(0.5)(tg.ones(10)).numpy(force=True)
    tg.manual_seed(3)
    b = nn.Dropout(0.5)(tg.ones(10)).numpy(force=True)
    np.testing.assert_array_equal(a, b)  # reproducible with tg.manual_seed


# ---- default initialisation (distributions match PyTorch's) ---------------------------------
def test_default_init_bounds():
    tg.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    for p in (lin.weight, lin.bias):
        assert np.abs(p.numpy(force=True)).max() <= bound
        assert np.abs(p.numpy(force=True)).max() > 0.99 * bound
    # U(-b, b) has variance b^2 / 3
    assert abs(lin.weight.numpy(force=True).var() - bound ** 2 / 3) < 0.02 * bound ** 2
    th = torch.nn.Linear(400, 300)
    assert abs(th.weight.detach().numpy().var() - lin.weight.numpy(force=True).var()) < 0.03 * bound ** 2
    e = nn.Embedding(1000, 50)
    assert abs(e.weight.numpy(force=True).std() - 1.0) < 0.02
    bn, ln = nn.BatchNorm1d(3), nn.LayerNorm(3)
    for m in (bn, ln):
        np.testing.assert_array_equal(m.weight.numpy(force=True), 1)
        np.testing.assert_array_equal(m.bias.numpy(force=True), 0)
    assert lin.weight.dtype == np.float32
    assert nn.Linear(2, 2, dtype=tg.float64).weight.dtype == np.float64


# ---- Module machinery ------------------------------------------------------------------------
class Block(nn.Module):
    def __init__(self, L):
        super().__init__()
        self.fc = L.Linear(3, 4)
        self.bn = L.BatchNorm1d(4)
        self.act = L.ReLU()
        self.register_buffer("scale", (tg if L is nn else torch).ones(4))
        self.register_buffer("tmp", (tg if L is nn else torch).zeros(2), persistent=False)

    def forward(self, x):
        return self.act(self.bn(self.fc(x))) * self.scale


class TBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.act = torch.nn.ReLU()
        self.register_buffer("scale", torch.ones(4))
        self.register_buffer("tmp", torch.zeros(2), persistent=False)

    def forward(self, x):
        return self.act(self.bn(self.fc(x))) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(nn), Block(nn)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Sequential(nn.Linear(4, 2))})
        self.w = nn.Parameter(tg.zeros(2))
        self.shared = self.heads["a"]   # the same module under two names

    def forward(self, x):
        return x


class TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([TBlock(), TBlock()])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(4, 2),
                                          "b": torch.nn.Sequential(torch.nn.Linear(4, 2))})
        self.w = torch.nn.Parameter(torch.zeros(2))
        self.shared = self.heads["a"]

    def forward(self, x):
        return x


def test_traversal_names_match_torch():
    a, b = Net(), TNet()
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    assert [n for n, _ in a.named_modules()] == [n for n, _ in b.named_modules()]
    assert [n for n, _ in a.named_children()] == [n for n, _ in b.named_children()]
    assert list(a.state_dict()) == list(b.state_dict())
    assert len(list(a.parameters())) == len(list(b.parameters()))
    assert len(list(a.modules())) == len(list(b.modules()))
    assert [n for n, _ in a.named_parameters(recurse=False)] == ["w"]
    assert [type(m).__name__ for m in a.children()] == [type(m).__name__ for m in b.children()]
    assert [n for n, _ in a.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in b.named_parameters(remove_duplicate=False)]


def test_apply_order_matches_torch():
    seen_a, seen_b = [], []
    Net().apply(lambda m: seen_a.append(type(m).__name__))
    TNet().apply(lambda m: seen_b.append(type(m).__name__))
    assert [s.replace("TBlock", "Block").replace("TNet", "Net") for s in seen_b] == seen_a


def test_repr_matches_torch():
    def build(L):
        return L.Sequential(
            L.Linear(3, 4), L.BatchNorm1d(4), L.ReLU(), L.LeakyReLU(0.2), L.Tanh(), L.Sigmoid(),
            L.GELU(), L.GELU(approximate="tanh"), L.Dropout(0.1), L.LayerNorm(4), L.Softmax(dim=1),
            L.LogSoftmax(dim=1), L.Flatten(), L.Identity(), L.Embedding(10, 3, padding_idx=0),
            L.Sequential(L.Linear(4, 2, bias=False)), L.ModuleList([L.ReLU()]),
            L.ModuleDict({"x": L.Linear(1, 1)}), L.CrossEntropyLoss(), L.MSELoss(),
            L.ELU(), L.Softplus(), L.Hardtanh(), L.ReLU6(), L.HuberLoss(), L.SmoothL1Loss(),
            L.BatchNorm1d(3, affine=False, momentum=None))
    assert repr(build(nn)) == repr(build(torch.nn))


def test_state_dict_roundtrip_and_copy_semantics():
    a, b = Net(), Net()
    for p in a.parameters():
        p.numpy(force=True)[...] = np.random.default_rng(0).standard_normal(p.shape)
    sd = a.state_dict()
    assert "blocks.0.tmp" not in sd and "blocks.0.scale" in sd  # non-persistent buffer
    ids = [id(p) for p in b.parameters()]
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    assert [id(p) for p in b.parameters()] == ids   # loaded in place
    for (k, v), (k2, v2) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(v.numpy(force=True), v2.numpy(force=True))
    # state_dict tensors are detached views of the live parameters
    assert not sd["w"].requires_grad and np.shares_memory(sd["w"].numpy(force=True), a.w.numpy(force=True))
    assert a.state_dict(keep_vars=True)["w"] is a.w
    # torch accepts our state dict and vice versa
    tb = TNet()
    copy_to_torch(a, tb)
    c = Net()
    c.load_state_dict({k: tg.tensor(v.numpy()) for k, v in tb.state_dict().items()})
    np.testing.assert_array_equal(c.blocks[1].fc.weight.numpy(force=True), a.blocks[1].fc.weight.numpy(force=True))


def test_load_state_dict_errors_match_torch():
    sd = Net().state_dict()
    tsd = TNet().state_dict()
    del sd["w"], tsd["w"]
    sd["extra.weight"] = tg.zeros(1)
    tsd["extra.weight"] = torch.zeros(1)
    sd["blocks.0.fc.weight"] = tg.zeros(5, 3)
    tsd["blocks.0.fc.weight"] = torch.zeros(5, 3)
    net = Net()
    before = net.blocks[1].fc.weight.numpy(force=True).copy()
    sd["blocks.1.fc.weight"] = tg.ones(4, 3)
    with pytest.raises(RuntimeError) as e1:
        net.load_state_dict(sd)
    with pytest.raises(RuntimeError) as e2:
        TNet().load_state_dict(tsd)
    norm = lambda s: s.replace("torch.", "tapegrad.").replace("TNet", "Net")  # noqa: E731
    assert str(e1.value) == norm(str(e2.value))
    assert "Missing key(s) in state_dict: \"w\"" in str(e1.value)
    assert "Unexpected key(s) in state_dict: \"extra.weight\"" in str(e1.value)
    assert "size mismatch for blocks.0.fc.weight" in str(e1.value)
    # nothing was loaded (no half-loaded model)
    np.testing.assert_array_equal(net.blocks[1].fc.weight.numpy(force=True), before)
    # strict=False: matching keys load, the report lists the rest (shape errors still raise)
    del sd["blocks.0.fc.weight"]
    res = net.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["w", "blocks.0.fc.weight"]
    assert res.unexpected_keys == ["extra.weight"]
    np.testing.assert_array_equal(net.blocks[1].fc.weight.numpy(force=True), 1.0)


def test_train_eval_zero_grad_requires_grad():
    net = nn.Sequential(nn.Linear(3, 3), nn.Dropout(), nn.Sequential(nn.BatchNorm1d(3)))
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.train(False)
    assert not net[2][0].training
    with pytest.raises(ValueError):
        net.train("yes")
    net.train()
    out = net(tg.randn(4, 3)).sum()
    out.backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not np.any(p.grad.numpy(force=True)) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    assert not net(tg.randn(4, 3)).requires_grad


def test_setattr_rules():
    m = nn.Module()
    m.w = nn.Parameter(tg.ones(2))
    assert "w" in m._parameters and m.w is m._parameters["w"]
    with pytest.raises(TypeError, match="cannot assign .* as parameter 'w'"):
        m.w = tg.ones(2)
    m.w = None
    assert m.w is None and list(m.parameters()) == []
    m.sub = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="child module 'sub'"):
        m.sub = 3
    m.register_buffer("b", tg.zeros(1))
    m.b = tg.ones(1)          # assigning a tensor to a buffer name replaces the buffer
    assert "b" in m._buffers and m.b.item() == 1
    with pytest.raises(TypeError):
        m.b = 3
    m.plain = 5
    assert m.plain == 5 and "plain" not in m._parameters
    del m.sub
    assert not hasattr(m, "sub")
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", tg.zeros(1))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        m.nope
    m.x = nn.Buffer(tg.ones(3))
    assert "x" in m.state_dict()

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tg.ones(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_containers():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(s) == 3 and isinstance(s[0], nn.Linear) and isinstance(s[-1], nn.Linear)
    assert isinstance(s[1:], nn.Sequential) and len(s[1:]) == 2
    s.append(nn.Sigmoid())
    assert len(s) == 4 and list(s._modules) == ["0", "1", "2", "3"]
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and isinstance(s[1], nn.Linear)
    with pytest.raises(IndexError):
        s[10]
    from collections import OrderedDict
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.append(nn.ReLU())
    ml += [nn.Tanh()]
    assert len(ml) == 5 and isinstance(ml[-1], nn.Tanh) and len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    x = tg.randn(5, 2)
    y = s(x)
    assert tuple(y.shape) == (5, 1)


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    seen = []
    h = lin.register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape)))
    hp = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    out = lin(tg.ones(3, 2))
    assert seen == [(3, 2)]
    np.testing.assert_allclose(out.numpy(force=True), np.broadcast_to(lin.bias.numpy(force=True), (3, 2)))
    h.remove()
    hp.remove()
    lin(tg.ones(1, 2))
    assert seen == [(3, 2)]
    # a hook may replace the output
    lin.register_forward_hook(lambda m, a, out: out * 0)
    assert not np.any(lin(tg.ones(1, 2)).numpy(force=True))


def test_linear_shape_error_names_op_and_shapes():
    lin = nn.Linear(4, 3)
    with pytest.raises(RuntimeError) as e:
        lin(tg.randn(32, 5))
    msg = str(e.value)
    assert "linear" in msg and "(32, 5)" in msg and "(3, 4)" in msg
    # and the PyTorch wording
    assert "mat1 and mat2 shapes cannot be multiplied (32x5 and 4x3)" in msg
    with pytest.raises(RuntimeError, match=re.escape("(32x5 and 4x3)")):
        torch.nn.Linear(4, 3)(torch.randn(32, 5))


def test_parameter_is_a_tensor_everywhere():
    p = nn.Parameter(tg.tensor([1.0, -2.0, 3.0]))
    assert isinstance(p, tg.Tensor) and p.requires_grad and p.is_leaf
    y = (p * p).sum() + tg.relu(p).sum() + (p @ p) + p.exp().mean()
    y.backward()
    np.testing.assert_allclose(p.grad.numpy(force=True), 4 * p.numpy(force=True) + (p.numpy(force=True) > 0) + np.exp(p.numpy(force=True)) / 3,
                               rtol=1e-6)
    assert type(p * 2) is tg.Tensor
    assert repr(p).startswith("Parameter containing:")
    assert not nn.Parameter(tg.ones(1), requires_grad=False).requires_grad
    import copy
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.numpy(force=True) is not p.numpy(force=True)


def test_module_dtype_conversion():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    net.double()
    assert all(p.dtype == np.float64 for p in net.parameters())
    assert net[1].running_mean.dtype == np.float64
    assert net[1].num_batches_tracked.dtype == np.int64
    net.to(tg.float32)
    assert all(p.dtype == np.float32 for p in net.parameters())


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_training_steps_match_torch(dtype):
    """k steps of plain SGD (written out) on an MLP with BN and CE from the same weights."""
    def build(L):
        return L.Sequential(L.Linear(6, 16), L.BatchNorm1d(16), L.GELU(), L.Linear(16, 16),
                            L.LayerNorm(16), L.LeakyReLU(0.1), L.Linear(16, 4))
    a, b = build(nn), build(torch.nn)
    if dtype == np.float64:
        a.double()
        b.double()
    copy_to_torch(a, b)
    rng = np.random.default_rng(0)
    for step in range(5):
        x = rng.standard_normal((12, 6)).astype(dtype)
        y = rng.integers(0, 4, 12)
        la = nn.functional.cross_entropy(a(tg.tensor(x)), tg.tensor(y), label_smoothing=0.05)
        lb = torch.nn.functional.cross_entropy(b(torch.tensor(x)), torch.tensor(y),
                                               label_smoothing=0.05)
        close(la, lb, dtype, f"loss at step {step}")
        a.zero_grad()
        b.zero_grad()
        la.backward()
        lb.backward()
        with tg.no_grad():
            for p in a.parameters():
                p.data -= 0.1 * p.grad.numpy(force=True)
        with torch.no_grad():
            for p in b.parameters():
                p -= 0.1 * p.grad
    tol = 1 if dtype == np.float64 else 10
    for (k, v), (k2, v2) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_allclose(v.numpy(force=True), v2.numpy(), rtol=1e-9 * tol ** 4, atol=1e-9 * tol ** 4,
                                   err_msg=k)

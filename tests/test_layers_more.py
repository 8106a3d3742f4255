"""GroupNorm, interpolate/Upsample, Identity, Unflatten, ParameterList/ParameterDict,
DataParallel, and the torch import paths (nn.modules.*, nn.parallel, onnx), against
PyTorch 2.13: values, input and parameter gradients, state-dict keys, errors."""
import importlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}
TDT = {np.float64: torch.float64, np.float32: torch.float32}


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.numpy(force=True))


def _close(a, b, dtype, what):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def _grads_match(fn, tfn, x, dtype, what, params=()):
    """fn(Tensor) and tfn(torch.Tensor) from the same array: output and input grad."""
    a = tg.tensor(x.astype(dtype), requires_grad=True)
    ta = torch.tensor(x.astype(dtype), requires_grad=True)
    out, tout = fn(a), tfn(ta)
    _close(out, tout, dtype, what + " output")
    c = np.random.default_rng(9).standard_normal(tuple(tout.shape)).astype(dtype)
    out.backward(tg.tensor(c))
    tout.backward(torch.tensor(c))
    _close(a.grad, ta.grad, dtype, what + " input grad")
    return out, tout


def _module_pair(ours, theirs, x, dtype, what):
    if dtype == np.float64:
        ours.double()
        theirs.double()
    ka = [(k, tuple(v.shape)) for k, v in ours.state_dict().items()]
    kb = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert ka == kb, what
    # non-trivial weights, the same in both
    rng = np.random.default_rng(1)
    sd = {k: rng.standard_normal(tuple(v.shape)) for k, v in ours.state_dict().items()}
    ours.load_state_dict(sd)
    theirs.load_state_dict({k: torch.tensor(v.astype(dtype)) for k, v in sd.items()})
    _grads_match(ours, theirs, x, dtype, what)
    tp = dict(theirs.named_parameters())
    for n, p in ours.named_parameters():
        _close(p.grad, tp[n].grad, dtype, f"{what} grad of {n}")


# ---- GroupNorm -------------------------------------------------------------------------------
# One element per group (e.g. (3, 6) with 6 groups) is left to float64: there x - mean is
# rounding noise, and torch's float32 one-pass variance and ours disagree on noise.
GN_CASES = [(kw, g, shape, dt)
            for kw in ({}, dict(affine=False), dict(bias=False), dict(eps=1e-3))
            for g in (1, 2, 3, 6)
            for shape in ((3, 6), (2, 6, 5), (2, 6, 4, 3), (1, 6, 2, 2, 2))
            for dt in (np.float64, np.float32)
            if dt == np.float64 or 6 // g * int(np.prod(shape[2:])) > 1]


@pytest.mark.parametrize("kw,groups,shape,dtype", GN_CASES)
def test_group_norm_module(kw, groups, shape, dtype):
    x = np.random.default_rng(0).standard_normal(shape) * 3 + 1
    _module_pair(tg.nn.GroupNorm(groups, 6, **kw), torch.nn.GroupNorm(groups, 6, **kw), x, dtype,
                 f"GroupNorm({groups}, 6, {kw})")


def test_group_norm_functional_init_and_errors():
    x = np.random.default_rng(1).standard_normal((2, 4, 3))
    w, b = np.arange(1.0, 5.0), np.linspace(-1, 1, 4)
    out = F.group_norm(tg.tensor(x), 2, tg.tensor(w), tg.tensor(b), eps=1e-4)
    tout = TF.group_norm(torch.tensor(x), 2, torch.tensor(w), torch.tensor(b), eps=1e-4)
    _close(out, tout, np.float64, "F.group_norm")
    m = tg.nn.GroupNorm(2, 4)
    assert np.all(m.weight.numpy(force=True) == 1) and np.all(m.bias.numpy(force=True) == 0)
    assert repr(m) == repr(torch.nn.GroupNorm(2, 4))
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups "
                                         r"\(2\)"):
        tg.nn.GroupNorm(2, 5)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups.*\[2, 4, 3\].*num_groups=3"):
        F.group_norm(tg.tensor(x), 3)


def test_group_norm_in_a_small_unet_style_block():
    """GroupNorm + Conv2d + SiLU + nearest Upsample, as diffusion-model code stacks them."""
    def block(nn):
        return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.GroupNorm(4, 8), nn.SiLU(),
                             nn.Upsample(scale_factor=2, mode="nearest"),
                             nn.Conv2d(8, 4, 3, padding=1))
    x = np.random.default_rng(2).standard_normal((2, 4, 5, 5))
    _module_pair(block(tg.nn), block(torch.nn), x, np.float64, "unet block")


# ---- interpolate / Upsample ------------------------------------------------------------------
INTERP = [
    # (input shape, mode, kwargs)
    ((2, 3, 5), "nearest", dict(scale_factor=2)),
    ((2, 3, 5), "nearest", dict(size=8)),
    ((2, 3, 7), "nearest", dict(size=3)),
    ((2, 3, 4, 5), "nearest", dict(scale_factor=2)),
    ((2, 3, 4, 5), "nearest", dict(size=(7, 3))),
    ((2, 3, 4, 5), "nearest", dict(scale_factor=(1.7, 0.6))),
    ((2, 3, 4, 5), "nearest", dict(scale_factor=1.7, recompute_scale_factor=True)),
    ((1, 2, 3, 4, 2), "nearest", dict(scale_factor=2)),
    ((2, 3, 4, 5), "nearest-exact", dict(size=(7, 3))),
    ((2, 3, 5), "nearest-exact", dict(scale_factor=1.5)),
    ((2, 3, 5), "linear", dict(size=9)),
    ((2, 3, 5), "linear", dict(size=9, align_corners=True)),
    ((2, 3, 6), "linear", dict(scale_factor=0.5)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=2)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=2, align_corners=True)),
    ((2, 3, 4, 5), "bilinear", dict(size=(7, 3))),
    ((2, 3, 4, 5), "bilinear", dict(size=(7, 3), align_corners=True)),
    ((2, 3, 4, 5), "bilinear", dict(size=(1, 1), align_corners=True)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=(1.3, 2.5))),
    ((2, 3, 6, 6), "bilinear", dict(scale_factor=0.5)),
    ((2, 3, 4, 5), "bilinear", dict(scale_factor=1.7, recompute_scale_factor=True)),
    ((1, 2, 3, 4, 2), "trilinear", dict(scale_factor=2)),
    ((1, 2, 3, 4, 2), "trilinear", dict(size=(2, 5, 3), align_corners=True)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate_matches_torch(case, dtype):
    shape, mode, kw = INTERP[case]
    x = np.random.default_rng(case).standard_normal(shape)
    _grads_match(lambda a: F.interpolate(a, mode=mode, **kw),
                 lambda a: TF.interpolate(a, mode=mode, **kw), x, dtype, f"interpolate {mode} {kw}")


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(size=(6, 7), mode="bilinear"),
                                dict(scale_factor=3, mode="bilinear", align_corners=True)])
def test_upsample_modules(kw):
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 4))
    ours, theirs = tg.nn.Upsample(**kw), torch.nn.Upsample(**kw)
    assert repr(ours) == repr(theirs)
    _grads_match(ours, theirs, x, np.float64, f"Upsample {kw}")
    _grads_match(tg.nn.UpsamplingNearest2d(scale_factor=2),
                 torch.nn.UpsamplingNearest2d(scale_factor=2), x, np.float64, "nearest2d")
    _grads_match(tg.nn.UpsamplingBilinear2d(size=(5, 9)),
                 torch.nn.UpsamplingBilinear2d(size=(5, 9)), x, np.float64, "bilinear2d")


def test_interpolate_errors():
    x = tg.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(tg.randn(1, 2, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.interpolate(x, scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 3, 4))


# ---- Identity, Unflatten ---------------------------------------------------------------------
def test_identity_and_unflatten():
    x = tg.randn(2, 6)
    assert tg.nn.Identity(54, unused="x")(x) is x
    for size in ((2, 3), (2, -1), [3, 2]):
        ours, theirs = tg.nn.Unflatten(1, size), torch.nn.Unflatten(1, size)
        assert repr(ours) == repr(theirs)
        _grads_match(ours, theirs, np.random.default_rng(0).standard_normal((4, 6)),
                     np.float64, f"Unflatten {size}")
    _grads_match(tg.nn.Unflatten(-1, (2, 2)), torch.nn.Unflatten(-1, (2, 2)),
                 np.random.default_rng(0).standard_normal((3, 5, 4)), np.float64, "Unflatten -1")
    with pytest.raises(TypeError, match="must be a tuple of ints, but found type int"):
        tg.nn.Unflatten(1, 3)
    with pytest.raises(TypeError, match="found element of type float at pos 1"):
        tg.nn.Unflatten(1, (2, 3.0))
    with pytest.raises(RuntimeError, match=r"don't multiply up to the size of dim 1 \(5\)"):
        tg.nn.Unflatten(1, (2, 3))(tg.zeros(2, 5))


# ---- ParameterList / ParameterDict -----------------------------------------------------------
def _mixture(nn, torch_like):
    class Mixture(nn.Module):
        """Per-component weights held in a ParameterList, named scales in a ParameterDict."""

        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(torch_like.ones(3, 3)) for _ in range(2)])
            self.ws.append(torch_like.ones(3, 3))          # a plain tensor is wrapped
            self.scales = nn.ParameterDict({"beta": nn.Parameter(torch_like.ones(3)),
                                            "alpha": torch_like.ones(3)})

        def forward(self, x):
            for w in self.ws:
                x = torch_like.tanh(x @ w)
            return x * self.scales["alpha"] + self.scales["beta"]
    return Mixture()


def test_parameter_containers_match_torch_and_train():
    ours, theirs = _mixture(tg.nn, tg), _mixture(torch.nn, torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "ws.0", "ws.1", "ws.2", "scales.alpha", "scales.beta"]
    assert all(isinstance(p, tg.nn.Parameter) for p in ours.ws)
    assert len(list(ours.parameters())) == 5
    x = np.random.default_rng(4).standard_normal((4, 3))
    _module_pair(ours, theirs, x, np.float64, "ParameterList/Dict model")
    # k SGD steps from identical weights agree
    opt, topt = tg.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(),
                                                                        lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        topt.zero_grad()
        (ours(tg.tensor(x)) ** 2).sum().backward()
        (theirs(torch.tensor(x)) ** 2).sum().backward()
        opt.step()
        topt.step()
    for k, v in theirs.state_dict().items():
        _close(ours.state_dict()[k], v, np.float64, f"after SGD {k}")


def test_parameter_list_and_dict_api():
    pl = tg.nn.ParameterList([tg.nn.Parameter(tg.zeros(2)), tg.ones(3)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2)), torch.ones(3)])
    assert len(pl) == 2 and pl[-1].shape == (3,) and len(pl[0:1]) == 1
    pl += [tg.ones(1)]
    pl[0] = tg.ones(4)
    assert isinstance(pl[0], tg.nn.Parameter) and pl[0].shape == (4,) and len(pl) == 3
    assert str(pl).count("Parameter containing") == 3
    with pytest.raises(IndexError):
        pl[5]
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl(1)
    del tpl
    pd = tg.nn.ParameterDict({"b": tg.ones(2), "a": tg.nn.Parameter(tg.zeros(1))})
    tpd = torch.nn.ParameterDict({"b": torch.ones(2), "a": torch.nn.Parameter(torch.zeros(1))})
    assert list(pd.keys()) == list(tpd.keys()) == ["a", "b"]         # a plain dict is sorted
    pd.update([("z", tg.ones(1)), ("c", tg.ones(1))])                  # pairs keep their order
    tpd.update([("z", torch.ones(1)), ("c", torch.ones(1))])
    assert list(pd) == list(tpd)
    assert "z" in pd and pd.get("nope") is None and len(pd) == 4
    assert pd.pop("z").shape == (1,) and "z" not in pd and "z" not in dict(pd.named_parameters())
    assert pd.setdefault("q", tg.ones(2)).shape == (2,)
    assert [k for k, _ in pd.items()] == ["a", "b", "c", "q"]
    pd.clear()
    assert len(pd) == 0 and not list(pd.parameters())


# ---- DataParallel ----------------------------------------------------------------------------
def test_data_parallel_is_a_pass_through_with_module_prefix():
    net = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    dp = tg.nn.DataParallel(net)
    tdp = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                                    torch.nn.Linear(4, 2)))
    assert dp.module is net
    assert list(dp.state_dict()) == list(tdp.state_dict())          # "module.0.weight", ...
    tdp.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in dp.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32)
    _grads_match(dp, tdp, x, np.float32, "DataParallel")
    # a checkpoint saved from a DataParallel model loads into the bare model after stripping
    bare = {k[len("module."):]: v for k, v in dp.state_dict().items()}
    tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2)).load_state_dict(bare)
    assert tg.nn.parallel.DataParallel is tg.nn.DataParallel
    with pytest.raises(TypeError, match="DataParallel: module must be"):
        tg.nn.DataParallel(lambda x: x)


# ---- import paths ----------------------------------------------------------------------------
@pytest.mark.parametrize("path,names", [
    ("module", ["Module"]), ("linear", ["Linear", "Identity"]), ("loss", ["CrossEntropyLoss"]),
    ("activation", ["ReLU", "GELU", "MultiheadAttention"]),
    ("container", ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]),
    ("conv", ["Conv2d"]), ("batchnorm", ["BatchNorm1d", "BatchNorm2d"]),
    ("normalization", ["LayerNorm", "GroupNorm"]), ("dropout", ["Dropout"]),
    ("sparse", ["Embedding"]), ("transformer", ["Transformer", "TransformerEncoderLayer"]),
    ("pooling", ["MaxPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]),
    ("flatten", ["Flatten", "Unflatten"]), ("upsampling", ["Upsample"]),
    ("loss", ["TripletMarginLoss", "MarginRankingLoss", "GaussianNLLLoss", "MultiMarginLoss"]),
    ("padding", ["ZeroPad2d", "ConstantPad1d", "ReflectionPad2d", "ReplicationPad1d"]),
    ("instancenorm", ["InstanceNorm1d", "InstanceNorm2d"]),
    ("distance", ["CosineSimilarity", "PairwiseDistance"]),
    ("normalization", ["RMSNorm"]), ("activation", ["PReLU", "Mish", "GLU"])])
def test_nn_modules_import_paths_like_torch(path, names):
    ours = importlib.import_module(f"tapegrad.nn.modules.{path}")
    theirs = importlib.import_module(f"torch.nn.modules.{path}")
    for n in names:
        assert hasattr(theirs, n)                                # the path is torch's
        assert getattr(ours, n) is getattr(tg.nn, n)
        assert getattr(tg.nn.modules, n) is getattr(tg.nn, n)


def test_loss_bases_importable_like_torch():
    from tapegrad.nn.modules.loss import _Loss, _WeightedLoss
    from torch.nn.modules.loss import _Loss as T_Loss, _WeightedLoss as T_WeightedLoss
    assert issubclass(tg.nn.MSELoss, _Loss) and issubclass(torch.nn.MSELoss, T_Loss)
    assert (issubclass(tg.nn.CrossEntropyLoss, _WeightedLoss)
            and issubclass(torch.nn.CrossEntropyLoss, T_WeightedLoss))


def test_program_style_imports():
    from tapegrad.nn.modules.module import Module  # noqa: F401
    from tapegrad.nn.parallel import DataParallel  # noqa: F401
    import tapegrad.onnx
    assert tg.nn.modules.module.Module is tg.nn.Module
    with pytest.raises(NotImplementedError, match="ONNX is not supported by tapegrad"):
        tapegrad.onnx.export(tg.nn.Linear(2, 2), (tg.randn(1, 2),), "model.onnx")

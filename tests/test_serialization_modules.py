"""Whole modules through `tg.save(model, PATH)` / `tg.load(PATH, weights_only=False)`,
the tutorials' pattern, against torch 2.13 running the same program: the loaded model
gives identical outputs, keeps its classes, Parameters, buffers, plain attributes and
training flag; weights_only=True refuses it as torch does (UnpicklingError naming the
outermost class) unless every class is allow-listed; a file naming a function or a
class that is not an nn.Module is refused, naming the file, and nothing is called."""
import json
import pickle

import numpy as np
import pytest
import torch
from safetensors.numpy import load as st_load, save as st_save

import tapegrad as tg
from tapegrad import serialization as tg_serialization

LIBS = {"torch": torch, "tapegrad": tg}


class Net(tg.nn.Module):
    """The CIFAR-10 tutorial's network, with plain attributes of each kind."""

    def __init__(self):
        super().__init__()
        nn = tg.nn
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.scale, self.tag, self.sizes, self.kind = 0.5, "net", (16, 5, 5), tg.float32

    def forward(self, x):
        F = tg.nn.functional
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = tg.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))) * self.scale


class TorchNet(torch.nn.Module):
    """Net, in torch."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.scale, self.tag, self.sizes, self.kind = 0.5, "net", (16, 5, 5), torch.float32

    def forward(self, x):
        F = torch.nn.functional
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))) * self.scale


class Tied(tg.nn.Module):
    """A language model's tied embedding and head: one Parameter, twice."""

    def __init__(self):
        super().__init__()
        self.emb = tg.nn.Embedding(7, 4)
        self.head = tg.nn.Linear(4, 7, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, i):
        return self.head(self.emb(i))


CALLED = []


def trap(*args, **kwargs):  # a module-level function a hostile file may name
    CALLED.append(args)


def _models(lib):
    nn = lib.nn
    return {
        "sequential": (lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.1),
                                             nn.Linear(8, 3)), (5, 6)),
        "net": (TorchNet if lib is torch else Net, (2, 3, 32, 32)),
        "lstm": (lambda: nn.LSTM(6, 5, num_layers=2, batch_first=True), (3, 4, 6)),
        "batchnorm": (lambda: nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4),
                                            nn.Tanh()), (5, 6)),
        "conv_bn": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3),
                                          nn.ReLU(), nn.Flatten()), (2, 2, 5, 5)),
    }


def _out(y):
    return (y[0] if isinstance(y, tuple) else y).detach().numpy()


def _tutorial(lib, name, path, seed):
    """torch.save(model, PATH); model = torch.load(PATH, weights_only=False);
    model.eval(): the outputs before and after, and the loaded model."""
    make, shape = _models(lib)[name]
    lib.manual_seed(seed)
    model = make()
    x = lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    model.train()
    model(x)  # moves BatchNorm's running statistics away from their initial values
    model.eval()
    before = _out(model(x))
    lib.save(model, path)
    loaded = lib.load(path, weights_only=False)
    loaded.eval()
    return before, _out(loaded(x)), model, loaded


@pytest.mark.parametrize("name", ["sequential", "net", "lstm", "batchnorm", "conv_bn"])
def test_tutorial_save_load_gives_identical_outputs(tmp_path, name):
    for lib_name, lib in LIBS.items():
        before, after, model, loaded = _tutorial(lib, name, tmp_path / lib_name, 3)
        np.testing.assert_array_equal(after, before)  # bit for bit, in both libraries
        assert type(loaded) is type(model) and loaded is not model
        ps, lps = dict(model.named_parameters()), dict(loaded.named_parameters())
        assert list(ps) == list(lps)
        for k in ps:
            assert type(lps[k]).__name__ == "Parameter" and lps[k].requires_grad
            np.testing.assert_array_equal(lps[k].detach().numpy(), ps[k].detach().numpy())
        bs, lbs = dict(model.named_buffers()), dict(loaded.named_buffers())
        assert list(bs) == list(lbs)
        for k in bs:
            assert lbs[k].dtype == bs[k].dtype
            np.testing.assert_array_equal(lbs[k].numpy(), bs[k].numpy())
        assert repr(loaded) == repr(model)
        assert [type(m).__name__ for m in loaded.modules()] == \
            [type(m).__name__ for m in model.modules()]


def test_plain_attributes_and_training_flag_come_back(tmp_path):
    for lib, cls in ((torch, TorchNet), (tg, Net)):
        model = cls()
        model.fc2.eval()  # a mixed training flag, kept per module
        lib.save(model, tmp_path / "m")
        loaded = lib.load(tmp_path / "m", weights_only=False)
        assert (loaded.scale, loaded.tag, loaded.sizes, loaded.kind) == \
            (0.5, "net", (16, 5, 5), lib.float32)
        assert type(loaded.sizes) is tuple
        assert [m.training for m in loaded.modules()] == [m.training for m in model.modules()]
        assert (loaded.conv1.stride, loaded.conv1.padding, loaded.fc1.in_features) == \
            ((1, 1), (0, 0), 400)


def test_loaded_model_trains_as_the_original(tmp_path):
    """The loaded model is a working model: its Parameters get gradients, an optimizer
    steps them, and it continues exactly as the original would."""
    for lib_name, lib in LIBS.items():
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.BatchNorm1d(5),
                                  lib.nn.Linear(5, 1))
        lib.save(model, tmp_path / lib_name)
        x = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4))
        res = []
        for m in (model, lib.load(tmp_path / lib_name, weights_only=False)):
            opt = lib.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad()
                m(x).pow(2).mean().backward()
                opt.step()
            res.append(m(x).detach().numpy())
        np.testing.assert_array_equal(res[0], res[1])


def test_tied_parameters_stay_one_object(tmp_path):
    model = Tied()
    tg.save(model, tmp_path / "m")
    loaded = tg.load(tmp_path / "m", weights_only=False)
    assert loaded.head.weight is loaded.emb.weight
    assert len(list(loaded.parameters())) == 1
    i = tg.tensor([0, 3, 6])
    np.testing.assert_array_equal(loaded(i).detach().numpy(), model(i).detach().numpy())


def test_module_inside_a_checkpoint_dict(tmp_path):
    model = tg.nn.Linear(3, 2)
    tg.save({"model": model, "epoch": 4}, tmp_path / "m")
    ck = tg.load(tmp_path / "m", weights_only=False)
    assert ck["epoch"] == 4 and isinstance(ck["model"], tg.nn.Linear)
    np.testing.assert_array_equal(ck["model"].weight.detach().numpy(),
                                  model.weight.detach().numpy())


def test_transformer_holding_an_nn_functional_activation(tmp_path):
    """TransformerEncoderLayer keeps `activation = F.relu`: saved by its name in
    nn.functional and found there again (never called by load)."""
    for lib_name, lib in LIBS.items():
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu")
        model = lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
        x = lib.tensor(np.random.default_rng(0).standard_normal((3, 2, 8)).astype(np.float32))
        lib.save(model, tmp_path / lib_name)
        loaded = lib.load(tmp_path / lib_name, weights_only=False).eval()
        assert loaded.layers[1].activation is lib.nn.functional.gelu
        np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
        with pytest.raises(pickle.UnpicklingError, match="TransformerEncoder"):
            lib.load(tmp_path / lib_name)


def test_crafted_function_outside_nn_functional_is_refused(tmp_path):
    model = tg.nn.Linear(2, 2)
    model.act = tg.nn.functional.relu
    tg.save(model, tmp_path / "m")
    for module, name in (("os", "system"), (__name__, "trap"), ("builtins", "eval"),
                         ("tapegrad.nn.functional", "Module"), ("tapegrad.nn.functional",
                                                                "NoSuchFunction")):
        def edit(meta, module=module, name=name):
            for pair in meta["root"]["items"]:
                if pair[0] == "act":
                    assert pair[1]["t"] == "function"
                    pair[1]["module"], pair[1]["name"] = module, name
        _rewrite(tmp_path / "m", tmp_path / "bad", edit)
        CALLED.clear()
        with pytest.raises((TypeError, AttributeError), match="bad") as e:
            tg.load(tmp_path / "bad", weights_only=False)
        assert "function" in str(e.value) or "no longer defines" in str(e.value)
        assert CALLED == []


def test_parameters_load_as_parameters_with_weights_only():
    """A Parameter outside a module (a list of them) loads as a Parameter, with the
    default weights_only=True, as torch's (_rebuild_parameter is allowed by default)."""
    import io
    for lib in (torch, tg):
        m = lib.nn.Linear(2, 2)
        m.bias.requires_grad_(False)
        buf = io.BytesIO()
        lib.save({"p": list(m.parameters())}, buf)
        buf.seek(0)
        got = lib.load(buf)["p"]
        assert [type(p).__name__ for p in got] == ["Parameter", "Parameter"]
        assert [p.requires_grad for p in got] == [True, False]


# ---- weights_only=True refuses, as torch's ---------------------------------------------
def test_weights_only_true_refuses_with_torchs_wording(tmp_path):
    msgs = {}
    for lib_name, lib in LIBS.items():
        lib.save(lib.nn.Sequential(lib.nn.Linear(2, 2)), tmp_path / lib_name)
        for kwargs in ({}, {"weights_only": True}, {"weights_only": None}):
            with pytest.raises(pickle.UnpicklingError) as e:
                lib.load(tmp_path / lib_name, **kwargs)
            msgs[lib_name] = str(e.value)
    for lib_name, prefix in (("torch", "torch"), ("tapegrad", "tapegrad")):
        assert "Weights only load failed" in msgs[lib_name]
        # the outermost class is named first, as torch's unpickler meets it first
        assert (f"Unsupported global: GLOBAL {prefix}.nn.modules.container.Sequential was "
                "not an allowed global by default") in msgs[lib_name].replace(
                    " (an nn.Module)", "")
        assert "weights_only" in msgs[lib_name]
    assert str(tmp_path / "tapegrad") in msgs["tapegrad"]


def test_weights_only_true_loads_once_every_class_is_allow_listed(tmp_path):
    for lib_name, lib in LIBS.items():
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        lib.save(model, tmp_path / lib_name)
        with lib.serialization.safe_globals([lib.nn.Sequential]):
            with pytest.raises(pickle.UnpicklingError, match="nn.modules.linear.Linear"):
                lib.load(tmp_path / lib_name)
        with lib.serialization.safe_globals([lib.nn.Sequential, lib.nn.Linear,
                                             lib.nn.ReLU]):
            loaded = lib.load(tmp_path / lib_name)
        x = lib.ones(1, 2)
        np.testing.assert_array_equal(loaded(x).detach().numpy(),
                                      model(x).detach().numpy())


# ---- what save refuses -----------------------------------------------------------------
def test_save_refuses_a_module_holding_a_function(tmp_path):
    model = tg.nn.Linear(2, 2)
    model.act = trap  # torch pickles it by reference; only nn.functional's are named here
    with pytest.raises(TypeError, match=r"cannot save an object of type function \(at act\)"):
        tg.save(model, tmp_path / "m")
    model = tg.nn.Linear(2, 2)
    model.register_forward_hook(lambda m, i, o: o)
    with pytest.raises(TypeError, match=r"Linear module at the top level: it has "
                                        r"forward_hooks registered"):
        tg.save(model, tmp_path / "m")
    assert not (tmp_path / "m").exists()


# ---- crafted files: classes that are not modules, functions ------------------------------
def _rewrite(path, out, edit):
    """Rewrite the structure in a tapegrad file with `edit(meta)`, with a valid
    checksum: the file a hostile writer could make."""
    raw = path.read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    meta = json.loads(header["__metadata__"]["tapegrad"])
    edit(meta)
    arrays = st_load(raw)
    text = json.dumps(meta)
    crc = tg_serialization._crc32(text, {
        k: (header[k]["dtype"], a.shape, a.astype(a.dtype.newbyteorder("<")).reshape(-1))
        for k, a in arrays.items()})
    out.write_bytes(st_save(arrays, metadata={"format": "pt", "tapegrad": text,
                                              "tapegrad.crc32": str(crc)}))


@pytest.mark.parametrize("module,name,exc,match", [
    (__name__, "trap", TypeError, r"class tests?.*trap, but .*is now <function trap.*"
                                  r"not an nn.Module subclass"),
    ("collections", "OrderedDict", TypeError, "not an nn.Module subclass"),
    ("os", "system", TypeError, "not an nn.Module subclass"),
    ("builtins", "eval", TypeError, "not an nn.Module subclass"),
    ("tapegrad_no_such_module", "Net", ModuleNotFoundError, "cannot be imported"),
    ("tapegrad.nn", "NoSuchLayer", AttributeError, "no longer defines"),
])
def test_crafted_class_name_is_refused_naming_the_file(tmp_path, module, name, exc, match):
    tg.save(tg.nn.Linear(2, 2), tmp_path / "m")

    def edit(meta):
        meta["root"]["module"], meta["root"]["name"] = module, name
    _rewrite(tmp_path / "m", tmp_path / "bad", edit)
    CALLED.clear()
    with pytest.raises(exc, match=match) as e:
        tg.load(tmp_path / "bad", weights_only=False)
    assert str(tmp_path / "bad") in str(e.value)
    assert CALLED == []
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {module}.{name}"):
        tg.load(tmp_path / "bad")


def test_crafted_module_tables_are_refused(tmp_path):
    tg.save(tg.nn.Linear(2, 2), tmp_path / "m")

    def edit(meta):
        for pair in meta["root"]["items"]:
            if pair[0] == "_parameters":
                pair[1] = {"t": "list", "items": [p[1] for p in pair[1]["items"]]}
    _rewrite(tmp_path / "m", tmp_path / "bad", edit)
    with pytest.raises(TypeError, match=r"bad.*_parameters is not a dict of Parameters"):
        tg.load(tmp_path / "bad", weights_only=False)

    def flag(meta):
        for pair in meta["root"]["items"]:
            if pair[0] == "_parameters":
                pair[1]["items"][0][1]["p"] = 1
    _rewrite(tmp_path / "m", tmp_path / "bad2", flag)
    with pytest.raises(RuntimeError, match=r"bad2.*parameter flag"):
        tg.load(tmp_path / "bad2", weights_only=False)

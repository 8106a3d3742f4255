"""tg.save / tg.load of the small objects programs keep in checkpoints (a dataclass
config, argparse.Namespace, Size, dtype, device, bytes, Counter...), against torch 2.13:
the same program saves and loads with each library and both results (or both
refusals) are compared. weights_only=True refuses a class not allow-listed, loads it
once listed (add_safe_globals / safe_globals); weights_only=False imports it."""
import argparse
import collections
import dataclasses
import io
import json
import os
import pickle
import sys
import types
import zlib

import numpy as np
import pytest
import torch
from safetensors.numpy import save as st_save

import tapegrad as tg


@dataclasses.dataclass
class GPTConfig:  # build-nanogpt's train_gpt2.py
    block_size: int = 1024
    vocab_size: int = 50257
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768


@dataclasses.dataclass(frozen=True)
class Frozen:
    name: str
    sizes: tuple = (1, 2)


@dataclasses.dataclass(slots=True)
class Slotted:
    a: int = 1
    b: float = 0.5


INIT_CALLS = []


@dataclasses.dataclass
class Derived:
    """__post_init__ converts a field and fills an init=False one: loading must give the
    saved values, not run it again."""
    lr: float = 0.1
    scaled: float = dataclasses.field(init=False, default=0.0)

    def __post_init__(self):
        INIT_CALLS.append(self.lr)
        self.lr = self.lr * 2
        self.scaled = self.lr * 10


@dataclasses.dataclass
class Holder:
    config: GPTConfig
    weights: object = None
    history: list = dataclasses.field(default_factory=list)


CALLED = []


def trap(*args, **kwargs):  # a module-level function a hostile file may name
    CALLED.append(args)


# ---- helpers ---------------------------------------------------------------------------
def _plain(x):
    """A library-neutral view of a loaded value: the type's name and the values, so a
    torch result and a tapegrad result compare with ==."""
    if isinstance(x, (torch.Tensor, tg.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, (torch.dtype, tg.dtype)):
        return ("dtype", str(x).split(".")[-1])
    if isinstance(x, (torch.Size, tg.Size)):
        return ("Size", [type(n).__name__ for n in x], tuple(x))
    if isinstance(x, (torch.device, tg.device)):
        return ("device", str(x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__qualname__, [(f.name, _plain(getattr(x, f.name)))
                                       for f in dataclasses.fields(x)])
    if isinstance(x, argparse.Namespace):
        return ("Namespace", [(k, _plain(v)) for k, v in vars(x).items()])
    if isinstance(x, dict):
        return (type(x).__name__, [(k, _plain(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    return (type(x).__name__, x)


def _outcome(m, obj, tmp_path, **load_kwargs):
    """Save `obj` with library m (torch or tg) and load it back: ("ok", value) or
    ("error", exception)."""
    path = tmp_path / f"ck_{m.__name__}.pt"
    m.save(obj, path)
    try:
        return "ok", m.load(path, **load_kwargs)
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return "error", e


def _same(make, tmp_path, **load_kwargs):
    """Run make(m) -> obj through save/load with both libraries; assert the same
    outcome. Returns (torch outcome, tapegrad outcome)."""
    t = _outcome(torch, make(torch), tmp_path, **load_kwargs)
    g = _outcome(tg, make(tg), tmp_path, **load_kwargs)
    assert t[0] == g[0], (t, g)
    if t[0] == "ok":
        assert _plain(g[1]) == _plain(t[1])
    else:
        assert type(g[1]) is type(t[1]), (t[1], g[1])
    return t[1], g[1]


def _nanogpt_checkpoint(m):
    """train_gpt2.py's checkpoint dict, with a small model whose weights are literals."""
    model = m.nn.Sequential(m.nn.Embedding(5, 4), m.nn.Linear(4, 5))
    with m.no_grad():
        model[0].weight.copy_(m.tensor(np.arange(20.0).reshape(5, 4) / 8, dtype=m.float32))
        model[1].weight.copy_(m.tensor(np.arange(20.0).reshape(5, 4) / -4, dtype=m.float32))
        model[1].bias.copy_(m.tensor([0.5, -1.0, 2.0, 0.0, 3.0], dtype=m.float32))
    val_loss_accum = m.tensor(3.25)
    return {"model": model.state_dict(), "config": GPTConfig(block_size=8, vocab_size=5,
                                                             n_layer=1, n_head=2, n_embd=4),
            "step": 250, "val_loss": val_loss_accum.item()}


# ---- build-nanogpt's checkpoint -------------------------------------------------------------
def test_nanogpt_checkpoint_is_refused_by_default_naming_the_class(tmp_path):
    for kwargs in ({}, {"weights_only": True}, {"weights_only": None}):
        t, g = _same(_nanogpt_checkpoint, tmp_path, **kwargs)
        assert isinstance(g, pickle.UnpicklingError)
        for msg in (str(t), str(g)):
            assert "GPTConfig" in msg and "add_safe_globals" in msg and "safe_globals([" in msg
        assert f"{__name__}.GPTConfig" in str(g) and "ck_tapegrad.pt" in str(g)
        assert "weights_only=False" in str(g)


def test_nanogpt_checkpoint_loads_with_the_class_allowed(tmp_path):
    with torch.serialization.safe_globals([GPTConfig]), tg.serialization.safe_globals(
            [GPTConfig]):
        t, g = _same(_nanogpt_checkpoint, tmp_path)
    assert type(g["config"]) is GPTConfig and g["config"] == GPTConfig(8, 5, 1, 2, 4)
    assert type(g["model"]) is collections.OrderedDict
    assert list(g["model"]) == ["0.weight", "1.weight", "1.bias"]
    assert g["step"] == 250 and type(g["step"]) is int
    assert g["val_loss"] == 3.25 and type(g["val_loss"]) is float
    np.testing.assert_array_equal(g["model"]["1.bias"].numpy(), [0.5, -1.0, 2.0, 0.0, 3.0])
    # the context manager removed it again: refused as before
    assert GPTConfig not in tg.serialization.get_safe_globals()
    _same(_nanogpt_checkpoint, tmp_path)
    # and the model loads into a fresh one, as train_gpt2's readers do
    fresh = tg.nn.Sequential(tg.nn.Embedding(5, 4), tg.nn.Linear(4, 5))
    fresh.load_state_dict(g["model"])
    np.testing.assert_array_equal(fresh[0].weight.detach().numpy(),
                                  np.arange(20.0).reshape(5, 4) / 8)


def test_add_safe_globals_and_name_pairs(tmp_path):
    try:
        for m in (torch, tg):
            m.serialization.add_safe_globals([GPTConfig])
        _same(lambda m: {"config": GPTConfig()}, tmp_path)
    finally:
        for m in (torch, tg):
            m.serialization.clear_safe_globals()
    # an (object, "module.qualname") pair allows by that name, as torch
    pair = (GPTConfig, f"{__name__}.GPTConfig")
    with torch.serialization.safe_globals([pair]), tg.serialization.safe_globals([pair]):
        _, g = _same(lambda m: GPTConfig(n_layer=3), tmp_path)
    assert g == GPTConfig(n_layer=3)
    wrong = (GPTConfig, "elsewhere.GPTConfig")
    with torch.serialization.safe_globals([wrong]), tg.serialization.safe_globals([wrong]):
        t, g = _same(lambda m: GPTConfig(n_layer=3), tmp_path)
    assert isinstance(t, pickle.UnpicklingError) and isinstance(g, pickle.UnpicklingError)


def test_nanogpt_checkpoint_with_weights_only_false(tmp_path):
    _, g = _same(_nanogpt_checkpoint, tmp_path, weights_only=False)
    assert type(g["config"]) is GPTConfig and g["config"].n_embd == 4


# ---- argparse.Namespace --------------------------------------------------------------------
def _args(m):
    args = argparse.Namespace(lr=3e-4, batch_size=64, layers=[2, 3], name="run-1",
                              device="cpu", resume=None, amp=False)
    return {"args": args, "epoch": 3}


def test_namespace_follows_torch(tmp_path):
    # not on torch's default allow-list: refused, naming argparse.Namespace
    t, g = _same(_args, tmp_path)
    assert "argparse.Namespace" in str(t) and "argparse.Namespace" in str(g)
    with torch.serialization.safe_globals([argparse.Namespace]), \
            tg.serialization.safe_globals([argparse.Namespace]):
        _, g = _same(_args, tmp_path)
    assert type(g["args"]) is argparse.Namespace and g["args"].layers == [2, 3]
    _, g = _same(_args, tmp_path, weights_only=False)
    assert vars(g["args"]) == vars(_args(tg)["args"])
    # vars(args), a plain dict, needs no allow-list in either
    _same(lambda m: {"args": vars(_args(m)["args"])}, tmp_path)


# ---- other dataclasses: no __init__ / __post_init__ on load, frozen, slots, nested ---------
def test_post_init_does_not_run_again_on_load(tmp_path):
    with torch.serialization.safe_globals([Derived]), tg.serialization.safe_globals([Derived]):
        INIT_CALLS.clear()
        t, g = _same(lambda m: Derived(0.5), tmp_path)
    assert INIT_CALLS == [0.5, 0.5]  # one construction per library, none on load
    assert (g.lr, g.scaled) == (1.0, 10.0) == (t.lr, t.scaled)


@pytest.mark.parametrize("make", [
    lambda m: Frozen("x", (3, (4, 5))),
    lambda m: Slotted(7, 2.5),
    lambda m: {"h": Holder(GPTConfig(n_head=4), m.arange(6.0).reshape(2, 3), [1, (2.5,)]),
               "more": [Frozen("y"), Slotted()]},
], ids=["frozen", "slots", "nested"])
def test_dataclass_kinds(tmp_path, make):
    classes = [GPTConfig, Frozen, Slotted, Holder]
    t, g = _same(make, tmp_path)  # refused by both
    assert isinstance(g, pickle.UnpicklingError)
    with torch.serialization.safe_globals(classes), tg.serialization.safe_globals(classes):
        _same(make, tmp_path)
    _same(make, tmp_path, weights_only=False)


def test_local_class_is_refused_at_save_as_by_torch(tmp_path):
    @dataclasses.dataclass
    class Local:
        a: int = 1

    with pytest.raises(AttributeError, match="local object"):  # pickle's refusal
        torch.save({"c": Local()}, tmp_path / "t")
    with pytest.raises(TypeError, match=r"Local.*cannot be found again"):
        tg.save({"c": Local()}, tmp_path / "g")
    assert not os.path.exists(tmp_path / "g")


# ---- plain containers and values torch's weights_only accepts by default ------------------
def _plain_values(m):
    return {
        "tuple": (1, (2, [3.5, None]), ()), "list": [True, "s", [], {}],
        "odict": collections.OrderedDict([("b", 1), ("a", (2, 3))]),
        "counter": collections.Counter("abracadabra"),
        "size": m.Size([2, 3]), "shape": m.zeros(4, 5).shape,
        "dtypes": [m.float32, m.int64, m.bool, m.float16],
        "device": m.device("cpu"), "bytes": b"\x00\xffab", "bytearray": bytearray(b"xyz"),
        "complex": complex(1.5, -2.0), "float": float("inf"),
        "set": {3, "b", (1, 2), 2.5}, "empty set": set(),
        "nested": {1: {"t": m.tensor([1, 2]), "k": (m.float64, m.Size([]))}},
    }


def test_plain_values_round_trip_as_torch(tmp_path):
    _, g = _same(_plain_values, tmp_path)
    assert type(g["odict"]) is collections.OrderedDict and list(g["odict"]) == ["b", "a"]
    assert type(g["counter"]) is collections.Counter and g["counter"]["a"] == 5
    assert type(g["size"]) is tg.Size and type(g["tuple"][1]) is tuple
    assert g["dtypes"][0] is tg.float32 and g["bytes"] == b"\x00\xffab"
    assert type(g["set"]) is set and g["set"] == {3, "b", (1, 2), 2.5}
    _same(_plain_values, tmp_path, weights_only=False)


def test_a_set_writes_the_same_file_in_every_process(tmp_path):
    """Members are written in a fixed order: str hashes (and so set order) change with
    PYTHONHASHSEED, the tree must not. (The tree is compared, not the bytes: the
    safetensors writer orders its own metadata keys by a hash of its own.)"""
    import subprocess
    code = ("import sys, tapegrad as tg; tg.save({'s': {'x', 'yy', 'zzz', 'w', 1, 2.5}}, "
            "sys.argv[1])")
    files = []
    for seed in ("1", "2", "3"):
        path = tmp_path / f"s{seed}"
        subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                       env=dict(os.environ, PYTHONHASHSEED=seed))
        raw = path.read_bytes()
        header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
        files.append(header["__metadata__"]["tapegrad"])
    assert files[0] == files[1] == files[2]
    assert tg.load(tmp_path / "s1")["s"] == {"x", "yy", "zzz", "w", 1, 2.5}


def test_whole_optimizer_is_refused_naming_state_dict(tmp_path):
    # (whole modules are saved: tests/test_serialization_modules.py)
    for obj in (tg.optim.SGD(tg.nn.Linear(2, 2).parameters(), lr=0.1),
                {"opt": tg.optim.Adam(tg.nn.Linear(2, 2).parameters())}):
        with pytest.raises(TypeError, match=r"cannot save a whole (SGD|Adam).*"
                                            r"state_dict\(\)"):
            tg.save(obj, tmp_path / "m")
    assert not os.path.exists(tmp_path / "m")


# ---- weights_only=False: the class is looked up again, nothing else is called -------------
@pytest.fixture
def vanishing(monkeypatch):
    """A dataclass in a module of its own, which the test can take away."""
    mod = types.ModuleType("_tg_vanishing_mod")

    @dataclasses.dataclass
    class Gone:
        a: int = 1

    Gone.__module__, Gone.__qualname__ = mod.__name__, "Gone"
    mod.Gone = Gone
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return mod


def test_missing_class_with_weights_only_false(tmp_path, vanishing, monkeypatch):
    paths = {}
    for m in (torch, tg):
        paths[m] = tmp_path / f"{m.__name__}.pt"
        m.save({"cfg": vanishing.Gone(5)}, paths[m])
    assert tg.load(paths[tg], weights_only=False)["cfg"].a == 5
    del vanishing.Gone
    for exc in (AttributeError, ModuleNotFoundError):
        with pytest.raises(exc):
            torch.load(paths[torch], weights_only=False)
        with pytest.raises(exc) as e:
            tg.load(paths[tg], weights_only=False)
        assert "_tg_vanishing_mod.Gone" in str(e.value) and "tapegrad.pt" in str(e.value)
        monkeypatch.delitem(sys.modules, vanishing.__name__, raising=False)


def _write(path, root):
    """A tapegrad file holding `root` as its tree and no tensors: the CRC-32 is then
    that of the metadata text alone (the format's rule, computed here, not by tg)."""
    text = json.dumps({"format": "tapegrad", "version": 2, "root": root, "shared": []})
    path.write_bytes(st_save({}, metadata={"format": "pt", "tapegrad": text,
                                           "tapegrad.crc32": str(zlib.crc32(text.encode()))}))


def test_hand_written_entry_loads(tmp_path):
    # guards the damaged cases below: the same layout, undamaged, loads
    _write(tmp_path / "ok", {"t": "dataclass", "module": __name__, "name": "GPTConfig",
                             "items": [["n_layer", {"t": "int", "v": 2}]]})
    got = tg.load(tmp_path / "ok", weights_only=False)
    assert type(got) is GPTConfig and got.n_layer == 2 and got.block_size == 1024


@pytest.mark.parametrize("root", [
    {"t": "dataclass", "name": "GPTConfig", "items": []},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig"},
    {"t": "dataclass", "module": __name__, "name": 3, "items": []},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig", "items": {}},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig", "items": [[1, {"t": "none"}]]},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig", "items": [["a"]]},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig", "items": [],
     "code": "print(1)"},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig",
     "items": [["a", {"t": "none"}], ["a", {"t": "none"}]]},
    {"t": "dataclass", "module": "os;x", "name": "GPTConfig", "items": []},
    {"t": "namespace", "module": "argparse", "name": "<locals>.N", "items": []},
    {"t": "dataclass", "module": __name__, "name": "GPTConfig",
     "items": [["n_layer", {"t": "int", "v": "2"}]]},
    {"t": "size", "items": [{"t": "float", "v": "2.0"}]},
    {"t": "bytes", "v": "not base64!"},
    {"t": "bytes", "v": 12},
    {"t": "dtype", "v": "object"},
    {"t": "device", "v": "gpu"},
    {"t": "complex", "v": ["1.0"]},
    {"t": "counter", "items": [["a"]]},
])
def test_damaged_entries_are_refused_as_damaged(tmp_path, root):
    _write(tmp_path / "bad", root)
    for weights_only in (True, False):
        with pytest.raises(RuntimeError, match=r"'.*bad' is damaged or not a tapegrad"):
            tg.load(tmp_path / "bad", weights_only=weights_only)


@pytest.mark.parametrize("kind, module, name", [
    ("dataclass", __name__, "trap"),          # a function, not a class
    ("dataclass", "os", "system"),
    ("namespace", __name__, "GPTConfig"),     # a class, but not a Namespace
    ("dataclass", "argparse", "Namespace"),   # a class, but not a dataclass
    ("dataclass", "builtins", "dict"),
])
def test_weights_only_false_calls_nothing_but_the_recorded_kind(tmp_path, kind, module, name):
    _write(tmp_path / "evil", {"t": kind, "module": module, "name": name,
                               "items": [["a", {"t": "str", "v": "echo hi"}]]})
    CALLED.clear()
    with pytest.raises(TypeError, match=f"{module}.{name}.*not rebuilt"):
        tg.load(tmp_path / "evil", weights_only=False)
    assert CALLED == []
    with pytest.raises(pickle.UnpicklingError, match=f"{module}.{name}"):
        tg.load(tmp_path / "evil")  # and refused by default, as any unlisted class


# ---- format compatibility --------------------------------------------------------------
def test_files_without_new_entries_are_unchanged_version_2(tmp_path):
    tg.save({"model": tg.nn.Linear(2, 2).state_dict(), "cfg": {"lr": 0.1, "p": (1, 2)}},
            tmp_path / "ck")
    raw = (tmp_path / "ck").read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    meta = json.loads(header["__metadata__"]["tapegrad"])
    assert meta["version"] == 2
    kinds = set()
    stack = [meta["root"]]
    while stack:
        node = stack.pop()
        kinds.add(node["t"])
        for item in node.get("items", []):
            stack.append(item[1] if node["t"] in ("dict", "odict") else item)
    assert kinds == {"dict", "odict", "tensor", "float", "tuple", "int"}


def test_old_v1_fixture_still_loads():
    path = os.path.join(os.path.dirname(__file__), "data", "checkpoint_v1.npz")
    ck = tg.load(path)
    assert ck["config"] == {"lr": 0.25, "hidden": [4], "inf": float("inf"), "flag": True,
                            "none": None, "pair": (1, 2)}
    np.testing.assert_array_equal(ck["model"]["0.bias"].numpy(), [-1.0, 0.5])

"""tg.save / tg.load: round trips, the safetensors layout, atomic writes (mode kept,
symlinks followed), sharing kept, and clear errors for damaged or malicious files."""
import io
import json
import math
import os
import stat
import struct
import zlib

import numpy as np
import pytest
import torch
from safetensors.numpy import load as st_load, save as st_save

import tapegrad as tg


def _nested():
    return {
        "weight": tg.tensor(np.arange(6.0).reshape(2, 3)),
        "w64": tg.tensor(np.ones((2, 2)), dtype=tg.float64, requires_grad=True),
        "scalar": tg.tensor(3.5),
        "ints": tg.tensor([1, 2, 3]),
        "mask": tg.tensor([True, False]),
        "half": tg.tensor([1.5, -2.0], dtype=tg.float16),
        "empty": tg.zeros(0, 4),
        "arr": np.arange(4, dtype=np.int32),
        "u16": np.arange(3, dtype=np.uint16),
        "n": 7, "big": 2 ** 70, "x": 0.1, "inf": math.inf, "ninf": -math.inf, "flag": True,
        "off": False, "name": "mlp", "none": None,
        "list": [1, 2.5, "a", [tg.ones(2)]], "tup": (1, (2, (3,))), "emptyt": (),
        "keys": {1: "int", 2.5: "float", None: "none", True: "bool"},
        "optim": {"state": {0: {"step": tg.tensor(3.0)}, 1: {}},
                  "param_groups": [{"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999)}]},
    }


def _eq(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, tg.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.numpy(force=True), b.numpy(force=True))
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b) and [type(k) for k in a] == [type(k) for k in b]
        for k in a:
            _eq(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _eq(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def test_round_trip(tmp_path):
    obj = _nested()
    obj["nan"] = math.nan
    tg.save(obj, tmp_path / "ck.pt")
    _eq(obj, tg.load(tmp_path / "ck.pt"))
    assert os.listdir(tmp_path) == ["ck.pt"]  # no temp file left, no suffix appended


def test_round_trip_file_object_and_str_path(tmp_path):
    buf = io.BytesIO()
    tg.save(_nested(), buf)
    buf.seek(0)
    _eq(_nested(), tg.load(buf))
    tg.save([1, 2], str(tmp_path / "a"))
    assert tg.load(str(tmp_path / "a")) == [1, 2]
    tg.save(tg.tensor([1.0]), tmp_path / "t")  # a bare tensor at the top
    _eq(tg.tensor([1.0]), tg.load(tmp_path / "t"))


def test_loaded_tensors_are_writable_and_own_their_memory(tmp_path):
    sd = {"w": tg.ones(3)}
    tg.save(sd, tmp_path / "ck")
    out = tg.load(tmp_path / "ck")
    out["w"].numpy(force=True)[0] = 5.0  # an optimizer updates in place
    assert sd["w"].numpy(force=True)[0] == 1.0


def test_file_is_plain_safetensors_with_torch_key_names(tmp_path):
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    tg.save(model.state_dict(), tmp_path / "m.safetensors")
    raw = (tmp_path / "m.safetensors").read_bytes()
    arrays = st_load(raw)
    assert sorted(arrays) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    np.testing.assert_array_equal(arrays["0.weight"], model[0].weight.numpy(force=True))
    n = struct.unpack("<Q", raw[:8])[0]
    meta = json.loads(raw[8:8 + n])["__metadata__"]
    assert meta["format"] == "pt" and json.loads(meta["tapegrad"])["version"] == 2


def test_nested_names_are_dotted_paths_and_unique(tmp_path):
    obj = {"model": {"0.weight": tg.ones(1)}, "model.0": {"weight": tg.zeros(1)},
           "opt": {"state": {0: {"exp_avg": tg.ones(2)}}}, "__metadata__": tg.ones(1)}
    tg.save(obj, tmp_path / "ck")
    names = set(st_load((tmp_path / "ck").read_bytes()))
    assert {"model.0.weight", "model.0.weight#1", "opt.state.0.exp_avg"} <= names
    assert "__metadata__" not in names  # safetensors' reserved key is renamed
    _eq(obj, tg.load(tmp_path / "ck"))


def test_big_endian_arrays_come_back_with_their_values(tmp_path):
    be = np.array([1.5, -2.25, 3.0], dtype=">f4")
    tg.save({"be": be}, tmp_path / "ck")
    out = tg.load(tmp_path / "ck")["be"]
    assert out.dtype == np.float32 and out.dtype.isnative
    np.testing.assert_array_equal(out, [1.5, -2.25, 3.0])


def test_non_contiguous_arrays_are_saved_by_value(tmp_path):
    a = np.arange(12.0).reshape(3, 4)
    tg.save({"t": a.T, "s": a[:, ::2]}, tmp_path / "ck")  # each alone: no sharing table
    raw = st_load((tmp_path / "ck").read_bytes())
    np.testing.assert_array_equal(raw["t"], a.T)
    np.testing.assert_array_equal(raw["s"], a[:, ::2])


def test_sharing_is_kept_as_torch_keeps_it(tmp_path):
    t = tg.randn(4, 3)
    obj = {"a": t, "b": t, "view": t[1:], "tr": t.T, "other": tg.randn(2)}
    tg.save(obj, tmp_path / "ck")
    out = tg.load(tmp_path / "ck")
    tt = {k: torch.from_numpy(v.numpy(force=True).copy()) for k, v in obj.items()}
    tt["b"], tt["view"], tt["tr"] = tt["a"], tt["a"][1:], tt["a"].T
    buf = io.BytesIO()
    torch.save(tt, buf)
    buf.seek(0)
    ref = torch.load(buf)
    assert (out["a"] is out["b"]) == (ref["a"] is ref["b"]) is True
    out["a"].numpy(force=True)[1, 0] = 100.0
    ref["a"][1, 0] = 100.0
    for k in obj:
        np.testing.assert_array_equal(out[k].numpy(force=True), ref[k].numpy())
    assert out["other"].numpy(force=True)[0] != 100.0


def test_tied_state_dict_keys_share_memory_and_stay_loadable_by_torch(tmp_path):
    import safetensors.torch
    emb = tg.nn.Embedding(5, 3)
    head = tg.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight  # weight tying as in nanoGPT
    model = tg.nn.Sequential(emb, head)
    tg.save(model.state_dict(), tmp_path / "ck")
    out = tg.load(tmp_path / "ck")
    assert np.shares_memory(out["0.weight"].numpy(force=True), out["1.weight"].numpy(force=True))
    tw = safetensors.torch.load_file(tmp_path / "ck")  # both keys present, as copies
    torch.testing.assert_close(tw["0.weight"], tw["1.weight"])


def test_save_overwrites_atomically_and_failure_keeps_old_file(tmp_path, monkeypatch):
    from tapegrad._serial import atomic
    path = tmp_path / "ck"
    tg.save({"v": 1}, path)

    class Boom:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.fh.close()

        def fileno(self):
            return self.fh.fileno()

        def write(self, data):
            self.fh.write(data[:10])
            raise OSError("disk full")

    real = atomic.os.fdopen
    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: Boom(real(fd, mode)))
    with pytest.raises(OSError, match="disk full"):
        tg.save({"v": 2}, path)
    monkeypatch.undo()
    assert tg.load(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["ck"]  # the temp file was removed
    tg.save({"v": 3}, path)
    assert tg.load(path) == {"v": 3}


def test_save_keeps_mode_like_torch(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for p in (ours, theirs):
        p.write_bytes(b"old")
        os.chmod(p, 0o600)
    tg.save({"v": 1}, ours)
    torch.save({"v": 1}, theirs)
    assert stat.S_IMODE(os.stat(ours).st_mode) == stat.S_IMODE(os.stat(theirs).st_mode) == 0o600


def test_save_writes_through_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "ck"
    tg.save({"v": 1}, target)
    link = tmp_path / "latest"
    link.symlink_to(target)
    tg.save({"v": 2}, link)
    assert link.is_symlink() and tg.load(target) == {"v": 2}
    dangling = tmp_path / "new"
    dangling.symlink_to(tmp_path / "real" / "fresh")
    tg.save({"v": 3}, dangling)
    assert dangling.is_symlink() and tg.load(tmp_path / "real" / "fresh") == {"v": 3}


def test_fresh_file_gets_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        tg.save({"v": 1}, tmp_path / "ck")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "ck").st_mode) == 0o640


def test_unsupported_object_raises_before_writing(tmp_path):
    path = tmp_path / "ck"
    with pytest.raises(TypeError, match="cannot save an object of type frozenset"):
        tg.save({"s": frozenset({1, 2})}, path)
    for bad in (np.array([{}, 1], dtype=object), np.array(["a"]), np.ones(2, np.complex64),
                np.zeros(2, "datetime64[s]"), np.zeros(2, [("a", "f4")])):
        with pytest.raises(TypeError, match="cannot save .* of dtype"):
            tg.save({"o": bad}, path)
    with pytest.raises(TypeError, match="dict keys"):
        tg.save({(1, 2): 1}, path)
    deep = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper than 64"):
        tg.save(deep, path)
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        tg.save(loop, path)
    assert not path.exists()


def test_text_mode_file_object_is_a_clear_type_error(tmp_path):
    tg.save({"v": 1}, tmp_path / "ck")
    with open(tmp_path / "ck", encoding="latin-1") as fh:
        with pytest.raises(TypeError, match="binary mode"):
            tg.load(fh)


def test_missing_file_is_file_not_found_like_torch(tmp_path):
    with pytest.raises(FileNotFoundError):
        torch.load(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="missing"):
        tg.load(tmp_path / "missing")


@pytest.mark.parametrize("cut", [0, 4, 8, 9, 0.5, 0.9, -1])
def test_truncated_file_raises_clear_error(tmp_path, cut):
    path = tmp_path / "ck"
    tg.save({"w": tg.randn(50, 50), "b": tg.randn(50)}, path)
    raw = path.read_bytes()
    path.write_bytes(raw[:cut if isinstance(cut, int) else int(len(raw) * cut)])
    with pytest.raises(RuntimeError, match="'.*ck' is damaged"):
        tg.load(path)


def test_foreign_files_raise(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello there, not a checkpoint")
    with pytest.raises(RuntimeError, match="t.txt.*damaged or not a tapegrad"):
        tg.load(text)
    npz = tmp_path / "plain.npz"
    np.savez(npz, x=np.ones(3))
    with pytest.raises(RuntimeError, match="plain.npz.*no manifest"):
        tg.load(npz)
    torch_file = tmp_path / "model.pth"
    torch.save({"w": torch.ones(2)}, torch_file)  # a zip archive with a pickle inside
    with pytest.raises(RuntimeError, match="model.pth.*not an .npy"):
        tg.load(torch_file)


# ---- hand-made malicious headers ------------------------------------------------------
def _raw_file(path, header, data=b""):
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


_ST = {"float32": "F32", "float64": "F64", "int64": "I64"}


def _crc(text, tensors):
    # The checksum as the format defines it (written out here, not taken from tapegrad).
    crc = zlib.crc32(text.encode())
    for name in sorted(tensors):
        a = tensors[name]
        crc = zlib.crc32(json.dumps([name, _ST[a.dtype.name], list(a.shape)]).encode(), crc)
        crc = zlib.crc32(a.tobytes(), crc)
    return str(crc)


def _with_meta(path, meta_text, tensors=None):
    tensors = tensors if tensors is not None else {"w": np.ones(2, np.float32)}
    path.write_bytes(st_save(tensors, metadata={"tapegrad": meta_text,
                                                "tapegrad.crc32": _crc(meta_text, tensors)}))


def _meta(root, shared=()):
    return json.dumps({"format": "tapegrad", "version": 2, "root": root,
                       "shared": list(shared)})


W = {"t": "tensor", "a": "w", "rg": False}


def test_huge_declared_shape_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge"
    _raw_file(path, {"w": {"dtype": "F64", "shape": [2 ** 40], "data_offsets": [0, 2 ** 43]}},
              b"\0" * 200)
    with pytest.raises(RuntimeError, match="huge"):
        tg.load(path)
    _raw_file(path, {"w": {"dtype": "F64", "shape": [2 ** 62, 2 ** 62],
                           "data_offsets": [0, 8]}}, b"\0" * 8)
    with pytest.raises(RuntimeError, match="huge"):
        tg.load(path)
    path.write_bytes(struct.pack("<Q", 2 ** 63) + b"{}")
    with pytest.raises(RuntimeError, match="header size"):
        tg.load(path)


@pytest.mark.parametrize("dtype", ["BF16", "F8_E4M3", "C64", "U1", "XX"])
def test_unsupported_dtypes_are_refused(tmp_path, dtype):
    path = tmp_path / "odd"
    _raw_file(path, {"w": {"dtype": dtype, "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    with pytest.raises(RuntimeError, match="odd"):
        tg.load(path)


def test_bf16_from_torch_is_refused_by_name(tmp_path):
    import safetensors.torch
    safetensors.torch.save_file({"w": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "b")
    with pytest.raises(RuntimeError, match="BF16.*not support"):
        tg.load(tmp_path / "b")


@pytest.mark.parametrize("root, match", [
    ({"t": "int", "v": 1.5}, "'int' node holds float"),
    ({"t": "bool", "v": "false"}, "'bool' node holds str"),
    ({"t": "bool", "v": 0}, "'bool' node holds int"),
    ({"t": "int", "v": True}, "'int' node holds bool"),
    ({"t": "float", "v": 1.5}, "'float' node holds float"),
    ({"t": "float", "v": "1e999"}, "canonical"),
    ({"t": "float", "v": "abc"}, "not a float"),
    ({"t": "str"}, "without a value"),
    ({"t": "none", "v": 1}, "unexpected field"),
    ({"t": "frozenset", "items": []}, "unknown node type"),
    ({"t": "list", "items": {}}, "items list"),
    ({"t": "dict", "items": [[{"t": "list", "items": []}, {"t": "none"}]]}, "not a scalar"),
    ({"t": "dict", "items": [[{"t": "int", "v": 1}, {"t": "none"}],
                             [{"t": "int", "v": 1}, {"t": "none"}]]}, "duplicate dict key"),
    ({"t": "tensor", "a": "nope", "rg": False}, "not in the file"),
    ({"t": "tensor", "a": "w", "rg": "yes"}, "not a bool"),
    ({"t": "tensor", "a": "w", "is": "w2"}, "earlier"),
    ({"t": "list", "items": [W, W]}, "used twice"),
    ({"t": "none"}, "not in its structure"),
    ("just a string", "node object"),
])
def test_malformed_metadata_tree_is_refused(tmp_path, root, match):
    path = tmp_path / "bad"
    _with_meta(path, _meta(root))
    with pytest.raises(RuntimeError, match=f"'.*bad' is damaged.*({match})"):
        tg.load(path)


def test_metadata_constants_overflow_and_duplicates_are_refused(tmp_path):
    path = tmp_path / "bad"
    for text, match in [
        ('{"format": "tapegrad", "version": 2, "root": {"t": "int", "v": Infinity}, '
         '"shared": []}', "Infinity"),
        ('{"format": "tapegrad", "version": 2, "root": {"t": "int", "v": NaN}, '
         '"shared": []}', "NaN"),
        ('{"format": "tapegrad", "version": 2, "version": 2, "root": {"t": "none"}, '
         '"shared": []}', "duplicate JSON key"),
        ('{"format": "tapegrad", "version": 3, "root": {"t": "none"}, "shared": []}',
         "version 3"),
        ('{"format": "tapegrad", "version": 2.0, "root": {"t": "none"}, "shared": []}',
         "version 2.0"),
        ('{"format": "tapegrad", "version": 2, "root": {"t": "none"}}', "fields"),
        ('{"format": "tapegrad", "version": 2, "root": {"t": "int", "v": '
         + "9" * 5000 + '}, "shared": []}', "invalid JSON"),
        ("not json", "invalid JSON"),
    ]:
        _with_meta(path, text, {})
        with pytest.raises(RuntimeError, match=f"bad.*{match}"):
            tg.load(path)


def test_deep_metadata_gives_a_clear_error_not_recursion(tmp_path):
    path = tmp_path / "deep"
    node = {"t": "none"}
    text = json.dumps(node)
    for _ in range(3000):
        text = '{"t": "list", "items": [' + text + "]}"
    _with_meta(path, _meta(None).replace("null", text), {})
    with pytest.raises(RuntimeError, match="deep.*nested deeper than the limit of 64"):
        tg.load(path)
    # Just inside the limit is fine.
    ok = json.dumps(node)
    for _ in range(64):
        ok = '{"t": "list", "items": [' + ok + "]}"
    _with_meta(path, _meta(None).replace("null", ok), {})
    out = tg.load(path)
    for _ in range(64):
        out = out[0]
    assert out is None


@pytest.mark.parametrize("shared, match", [
    ([{"nbytes": 8, "members": [["w", 0, [4]]]}], "fewer than two"),
    ([{"nbytes": 2 ** 40, "members": [["w", 0, [4]], ["v", 0, [4]]]}], "declares"),
    ([{"nbytes": 8, "members": [["w", 0, [4]], ["w", 0, [4]]]}], "two groups"),
    ([{"nbytes": 8, "members": [["w", 4, [4]], ["v", 0, [4]]]}], "outside"),
    ([{"nbytes": 8, "members": [["w", -4, [4]], ["v", 0, [4]]]}], "outside"),
    ([{"nbytes": 8, "members": [["w", 0, [-4]], ["v", 0, [4]]]}], "outside"),
    ([{"nbytes": 8, "members": [["w", 1, [4]], ["v", 0, [4]]]}], "misaligned"),
    ([{"nbytes": 8, "members": [["w", 0, [4, 4]], ["v", 0, [4]]]}], "dimensions"),
    ([{"nbytes": 8, "members": [["w", 0, ["4"]], ["v", 0, [4]]]}], "not an integer"),
    ([{"nbytes": 8, "members": [["w", 0, [4]], ["v", 0, [4]]]}], "different values"),
    ([{"nbytes": 8}], "malformed"),
    ({"nbytes": 8}, "not a list"),
])
def test_malformed_sharing_table_is_refused(tmp_path, shared, match):
    path = tmp_path / "shr"
    tensors = {"w": np.ones(2, np.float32), "v": np.zeros(2, np.float32)}
    root = {"t": "list", "items": [W, {"t": "tensor", "a": "v", "rg": False}]}
    _with_meta(path, json.dumps({"format": "tapegrad", "version": 2, "root": root,
                                 "shared": shared}), tensors)
    with pytest.raises(RuntimeError, match=f"shr.*{match}"):
        tg.load(path)


def test_checksum_catches_changed_data_and_strings(tmp_path):
    path = tmp_path / "ck"
    tg.save({"w": tg.tensor([1.0, 2.0]), "name": "mlp", "e": tg.zeros(0, 3)}, path)
    raw = path.read_bytes()
    for old, new in [(np.float32(2.0).tobytes(), np.float32(3.0).tobytes()),
                     (b"mlp", b"mlq"), (b'"shape":[0,3]', b'"shape":[0,4]')]:
        assert raw.count(old) == 1
        path.write_bytes(raw.replace(old, new))
        with pytest.raises(RuntimeError, match="ck.*checksum mismatch"):
            tg.load(path)
    text = struct.unpack("<Q", raw[:8])[0]
    meta = json.loads(raw[8:8 + text])["__metadata__"]
    tensors = st_load(raw)
    for drop in ("tapegrad", "tapegrad.crc32"):
        kept = {k: v for k, v in meta.items() if k != drop}
        path.write_bytes(st_save(tensors, metadata=kept))
        with pytest.raises(RuntimeError, match="ck.*lacks its structure or its checksum"):
            tg.load(path)


def test_foreign_safetensors_file_loads_as_flat_dict(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(st_save({"b": np.ones(2), "a": np.zeros(3, np.int64)},
                             metadata={"anything": "else"}))
    out = tg.load(path)
    assert set(out) == {"a", "b"} and all(isinstance(v, tg.Tensor) for v in out.values())
    assert out["a"].dtype == tg.int64 and not out["b"].requires_grad


# ---- the old .npz format (read only) --------------------------------------------------
def _v1_file(path, root, **arrays):
    manifest = {"format": "tapegrad", "version": 1, "root": root}
    blob = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, __tapegrad_manifest__=blob, **arrays)


def test_old_npz_checkpoints_still_load(tmp_path):
    path = tmp_path / "old.npz"
    root = {"t": "dict", "items": [
        [{"t": "str", "v": "w"}, {"t": "tensor", "a": "a0", "dtype": "<f4", "shape": [2],
                                  "rg": True}],
        [{"t": "str", "v": "be"}, {"t": "ndarray", "a": "a1", "dtype": ">f4", "shape": [2]}],
        [{"t": "int", "v": 0}, {"t": "tuple", "items": [{"t": "float", "v": "inf"}]}]]}
    _v1_file(path, root, a0=np.array([1.0, 2.0], np.float32),
             a1=np.array([3.5, 4.0], ">f4"))
    out = tg.load(path)
    assert out["w"].requires_grad and out["w"].dtype == tg.float32
    assert out["be"].dtype == np.float32 and out["be"].dtype.isnative
    np.testing.assert_array_equal(out["be"], [3.5, 4.0])
    assert out[0] == (math.inf,)


@pytest.mark.parametrize("arr", [np.array([1 + 2j]), np.array(["abc"]),
                                 np.zeros(1, "datetime64[s]"), np.zeros(1, [("a", "f4")]),
                                 np.array([{"x": 1}], dtype=object)])
def test_old_npz_with_unsupported_member_dtype_is_refused(tmp_path, arr):
    path = tmp_path / "evil.npz"
    _v1_file(path, {"t": "ndarray", "a": "a0", "dtype": arr.dtype.str, "shape": [1]}, a0=arr)
    with pytest.raises(RuntimeError, match="evil.npz.*(unsupported dtype|pickle|Object)"):
        tg.load(path)


def test_old_npz_huge_declared_shape_is_refused(tmp_path):
    import zipfile
    path = tmp_path / "huge.npz"
    _v1_file(path, {"t": "ndarray", "a": "a0", "dtype": "<f8", "shape": [2 ** 40]},
             a0=np.zeros(2))
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        member, {"descr": "<f8", "fortran_order": False, "shape": (2 ** 40,)})
    with zipfile.ZipFile(path) as z:
        blob = z.read("__tapegrad_manifest__.npy")
    with zipfile.ZipFile(path, "w") as z:  # a 200-byte member claiming 8 TiB
        z.writestr("__tapegrad_manifest__.npy", blob)
        z.writestr("a0.npy", member.getvalue() + b"\0" * 16)
    with pytest.raises(RuntimeError, match="huge.npz.*declares shape"):
        tg.load(path)


def test_old_npz_bool_must_be_typed_and_shapes_must_match(tmp_path):
    path = tmp_path / "o.npz"
    _v1_file(path, {"t": "bool", "v": "false"})
    with pytest.raises(RuntimeError, match="o.npz.*'bool' node holds str"):
        tg.load(path)
    _v1_file(path, {"t": "ndarray", "a": "a0", "dtype": "<f4", "shape": [3]},
             a0=np.ones(2, np.float32))
    with pytest.raises(RuntimeError, match="o.npz.*manifest says"):
        tg.load(path)


def test_checkpoint_written_by_tapegrad_0_1_still_loads(tmp_path):
    # tests/data/checkpoint_v1.npz was written by the format-1 tg.save (commit ee43946)
    # from a model whose weights were set to the literals checked here.
    path = os.path.join(os.path.dirname(__file__), "data", "checkpoint_v1.npz")
    ck = tg.load(path)
    assert ck["config"] == {"lr": 0.25, "hidden": [4], "inf": math.inf, "flag": True,
                            "none": None, "pair": (1, 2)}
    np.testing.assert_array_equal(ck["model"]["0.weight"].numpy(force=True), np.arange(6).reshape(2, 3) / 8)
    np.testing.assert_array_equal(ck["model"]["0.bias"].numpy(force=True), [-1.0, 0.5])
    assert ck["model"]["1.num_batches_tracked"].dtype == tg.int64
    assert ck["be"].dtype == np.float32 and ck["be"].tolist() == [1.5, 2.5]
    assert list(ck["optimizer"]["state"]) == [0, 1, 2, 3]
    assert ck["optimizer"]["param_groups"][0]["momentum"] == 0.9
    m = tg.nn.Sequential(tg.nn.Linear(3, 2), tg.nn.BatchNorm1d(2))
    m.load_state_dict(ck["model"])
    opt = tg.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
    opt.load_state_dict(ck["optimizer"])
    assert opt.param_groups[0]["lr"] == 0.25
    tg.save(ck, tmp_path / "new.safetensors")  # and it converts to the new format
    _eq(ck, tg.load(tmp_path / "new.safetensors"))

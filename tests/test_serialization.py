"""tg.save / tg.load: round trips, atomic writes, clear errors for truncated or foreign
files, and no pickle anywhere (object arrays cannot be smuggled in)."""
import io
import json
import math
import os
import zipfile

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad import serialization


def _nested():
    return {
        "weight": tg.tensor(np.arange(6.0).reshape(2, 3)),
        "w64": tg.tensor(np.ones((2, 2)), dtype=tg.float64, requires_grad=True),
        "scalar": tg.tensor(3.5),
        "ints": tg.tensor([1, 2, 3]),
        "mask": tg.tensor([True, False]),
        "empty": tg.zeros(0, 4),
        "arr": np.arange(4, dtype=np.int32),
        "n": 7, "x": 0.1, "inf": math.inf, "flag": True, "name": "mlp", "none": None,
        "list": [1, 2.5, "a", [tg.ones(2)]], "tup": (1, (2, 3)),
        "optim": {"state": {0: {"step": tg.tensor(3.0)}, 1: {}},
                  "param_groups": [{"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999)}]},
    }


def _eq(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, tg.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.data, b.data)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _eq(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _eq(x, y)
    else:
        assert a == b


def test_round_trip(tmp_path):
    obj = _nested()
    tg.save(obj, tmp_path / "ck.pt")
    _eq(obj, tg.load(tmp_path / "ck.pt"))
    assert os.listdir(tmp_path) == ["ck.pt"]  # no temp file left, no .npz appended


def test_round_trip_file_object_and_str_path(tmp_path):
    buf = io.BytesIO()
    tg.save(_nested(), buf)
    buf.seek(0)
    _eq(_nested(), tg.load(buf))
    tg.save([1, 2], str(tmp_path / "a"))
    assert tg.load(str(tmp_path / "a")) == [1, 2]


def test_plain_numpy_can_read_it(tmp_path):
    tg.save({"w": tg.tensor([1.0, 2.0])}, tmp_path / "ck")
    with np.load(tmp_path / "ck", allow_pickle=False) as z:
        manifest = json.loads(z["__tapegrad_manifest__"].tobytes())
        assert manifest["format"] == "tapegrad"
        np.testing.assert_array_equal(z["a0"], [1.0, 2.0])


def test_save_overwrites_atomically_and_failure_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ck"
    tg.save({"v": 1}, path)
    real = np.savez

    def exploding(fh, **members):
        fh.write(b"PK partial garbage")
        raise OSError("disk full")

    monkeypatch.setattr(serialization.np, "savez", exploding)
    with pytest.raises(OSError, match="disk full"):
        tg.save({"v": 2}, path)
    monkeypatch.setattr(serialization.np, "savez", real)
    assert tg.load(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["ck"]  # the temp file was removed
    tg.save({"v": 3}, path)
    assert tg.load(path) == {"v": 3}


def test_unsupported_object_raises_before_writing(tmp_path):
    path = tmp_path / "ck"
    with pytest.raises(TypeError, match="cannot save an object of type set"):
        tg.save({"s": {1, 2}}, path)
    with pytest.raises(TypeError, match="dtype object"):
        tg.save({"o": np.array([{}, 1], dtype=object)}, path)
    assert not path.exists()


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.999])
def test_truncated_file_raises_clear_error(tmp_path, cut):
    path = tmp_path / "ck"
    tg.save({"w": tg.randn(50, 50), "b": tg.randn(50)}, path)
    raw = path.read_bytes()
    path.write_bytes(raw[:int(len(raw) * cut)])
    with pytest.raises(RuntimeError, match="ck.*(truncated|corrupt|not a tapegrad)"):
        tg.load(path)


def test_corrupt_member_detected_by_crc(tmp_path):
    path = tmp_path / "ck"
    tg.save({"w": tg.tensor(np.arange(1000.0))}, path)
    raw = bytearray(path.read_bytes())
    i = raw.find(np.arange(1000.0)[500:501].tobytes())
    raw[i] ^= 0xFF  # flip a byte inside the array data
    path.write_bytes(bytes(raw))
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        tg.load(path)


def test_foreign_files_raise(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello")
    with pytest.raises(RuntimeError, match="t.txt.*not a tapegrad checkpoint"):
        tg.load(text)
    npz = tmp_path / "plain.npz"
    np.savez(npz, x=np.ones(3))
    with pytest.raises(RuntimeError, match="plain.npz.*no manifest"):
        tg.load(npz)
    torch_file = tmp_path / "model.pth"
    torch.save({"w": torch.ones(2)}, torch_file)  # a zip archive with a pickle inside
    with pytest.raises(RuntimeError, match="model.pth"):
        tg.load(torch_file)
    with pytest.raises(RuntimeError, match="cannot read"):
        tg.load(tmp_path / "missing")


def test_no_pickle_object_array_cannot_be_smuggled(tmp_path):
    """A hand-made file whose manifest points at an object array (a pickle inside the
    .npy member) is refused by np.load(allow_pickle=False)."""
    path = tmp_path / "evil"
    manifest = {"format": "tapegrad", "version": 1,
                "root": {"t": "ndarray", "a": "a0", "dtype": "|O", "shape": [1]}}
    blob = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, __tapegrad_manifest__=blob, a0=np.array([{"x": 1}], dtype=object))
    with pytest.raises(RuntimeError, match="evil.*(corrupt|pickle)"):
        tg.load(path)


def test_load_calls_np_load_without_pickle(tmp_path, monkeypatch):
    calls = []
    real = np.load

    def spy(*args, **kwargs):
        calls.append(kwargs.get("allow_pickle", "default"))
        return real(*args, **kwargs)

    monkeypatch.setattr(serialization.np, "load", spy)
    tg.save({"w": tg.ones(2)}, tmp_path / "ck")
    tg.load(tmp_path / "ck")
    assert calls == [False]


def test_manifest_mismatch_is_corrupt(tmp_path):
    path = tmp_path / "ck"
    manifest = {"format": "tapegrad", "version": 1,
                "root": {"t": "tensor", "a": "a0", "dtype": "<f4", "shape": [3]}}
    blob = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, __tapegrad_manifest__=blob, a0=np.ones(2, np.float32))
    with pytest.raises(RuntimeError, match="corrupt.*manifest says"):
        tg.load(path)
    manifest["version"] = 99
    with open(path, "wb") as fh:
        np.savez(fh, __tapegrad_manifest__=np.frombuffer(json.dumps(manifest).encode(),
                                                         np.uint8))
    with pytest.raises(RuntimeError, match="version 99"):
        tg.load(path)
    with zipfile.ZipFile(tmp_path / "z", "w") as z:
        z.writestr("readme.txt", "not numpy")
    with pytest.raises(RuntimeError, match="z"):
        tg.load(tmp_path / "z")

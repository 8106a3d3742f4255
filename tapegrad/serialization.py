"""Saving and loading: `tg.save(obj, path)` / `tg.load(path)`, in the safetensors format.

A checkpoint is a plain safetensors file (8-byte little-endian header size, JSON
header, raw little-endian tensor data), written with the `safetensors` package:

- every tensor / ndarray in `obj` is a safetensors tensor named by its dotted path, so a
  model's state dict keeps torch's key names exactly: `safetensors.torch.load_file(path)`
  loads straight into the PyTorch twin with `load_state_dict(strict=True)`, and a file
  written by `safetensors.torch.save_file(model.state_dict(), path)` loads here;
- the nested structure (optimizer state, config, Python scalars, strings, bytes, None,
  lists, tuples, dicts, torch.Size, dtypes, devices, dataclass instances and
  argparse.Namespace; see `_serial.tree`) and a table of memory shared between tensors
  (tied weights, views; see `_serial.sharing`) go in the header's `__metadata__` under
  the key "tapegrad", as JSON, with a CRC-32 of that text and of every tensor (name,
  dtype, shape, bytes) under "tapegrad.crc32": safetensors has no checksum of its own,
  and a damaged checkpoint must fail, not load as different numbers.
  `"format": "pt"` is there too, as transformers expects.

Why safetensors and not pickle: loading a pickle runs code chosen by whoever wrote the
file; safetensors holds only numbers and a header, parsed by an audited parser that
checks the header size and every tensor's declared size against the file before it
allocates anything. On top of that `load` accepts only the dtypes tapegrad computes with
(bool, int8/16/32/64, uint8/16/32/64, float16/32/64), parses the metadata strictly
(no NaN/Infinity tokens, typed values, a depth limit) and raises a `RuntimeError` naming
the file for anything truncated, damaged or malicious. A missing file raises
FileNotFoundError, as torch.load does.

A dataclass instance, argparse.Namespace (a saved config) or whole nn.Module
(`torch.save(model, PATH)`) in the file is recorded by its class's name and attributes. `load` rebuilds it with torch 2.13's `weights_only`
rules (`_serial.objects`): by default only if the class is allow-listed with
`add_safe_globals` / `safe_globals`, otherwise a `pickle.UnpicklingError` as torch's
that names the class and how to allow it; with `weights_only=False` by importing the
class. No other code named in a file is ever run.

Files written by tapegrad 0.1 (an `.npz` with a JSON manifest) are still read.
Writes are atomic (`_serial.atomic`).
"""
import json
import os
import zlib

import numpy as np

from . import dtypes as _dt
from ._serial import npz_v1, objects, sharing, tree
from ._serial.atomic import write_atomic
from ._tensor import Tensor

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals"]

_FORMAT = "tapegrad"
_VERSION = 2
_META_KEY = "tapegrad"
_CRC_KEY = "tapegrad.crc32"
# safetensors dtype name -> NumPy dtype (dtypes.py): what tapegrad computes with, nothing
# more (BF16, FP8 and complex tensors are refused rather than half-supported).
_DTYPES = _dt.SAFETENSORS
_SUPPORTED = {np.dtype(d).str.lstrip("<>|=") for d in _DTYPES.values()}
_ST_NAME = {np.dtype(d).str.lstrip("<>|="): k for k, d in _DTYPES.items()}


def _crc32(text, tensors):
    """CRC-32 of the metadata text and, in name order, each tensor's name, dtype, shape
    and little-endian bytes. safetensors itself has no checksum: without this a flipped
    bit in the data, in a shape of an empty tensor or in a config string would load
    silently as a different checkpoint."""
    crc = zlib.crc32(text.encode("utf-8"))
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        crc = zlib.crc32(json.dumps([name, dtype, list(shape)]).encode("utf-8"), crc)
        crc = zlib.crc32(data, crc)
    return crc


def _safetensors():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:  # a core dependency, but say what to do if it is missing
        raise ImportError("tg.save / tg.load need the `safetensors` package: "
                          "pip install safetensors") from None
    return safetensors


def _check_array(arr, where):
    if arr.dtype.names or arr.dtype.str.lstrip("<>|=") not in _SUPPORTED:
        raise TypeError(f"tg.save: cannot save {where} of dtype {arr.dtype} (supported: "
                        "bool, int8/16/32/64, uint8/16/32/64, float16/32/64)")


# ---- save -----------------------------------------------------------------------------
def save(obj, f):
    """Save `obj` (a state dict or any nest of tensors, numbers, strings, bytes, None,
    lists, tuples, dicts, torch.Size, dtypes, devices, dataclass instances and
    argparse.Namespace, whole nn.Module objects) to the path `f` atomically, or to a
    writable binary file object. A module is recorded by its class's import path and
    its state (see `_serial.objects`), never by code."""
    st = _safetensors()
    root, arrays, _ = tree.encode(obj, _check_array)
    meta = {"format": _FORMAT, "version": _VERSION, "root": root,
            "shared": sharing.find_groups(arrays)}
    # safetensors writes what the array's buffer holds, so hand it C-ordered data
    # (copy(order="C") and not ascontiguousarray, which turns 0-d into 1-d).
    flat = {k: a if a.flags.c_contiguous else a.copy(order="C") for k, a in arrays.items()}
    text = json.dumps(meta, separators=(",", ":"))
    crc = _crc32(text, {k: (_ST_NAME[a.dtype.str.lstrip("<>|=")], a.shape,
                            a.astype(a.dtype.newbyteorder("<"), copy=False).reshape(-1))
                        for k, a in flat.items()})
    data = st.numpy.save(flat, metadata={"format": "pt", _META_KEY: text,
                                         _CRC_KEY: str(crc)})
    if hasattr(f, "write"):
        f.write(data)
    else:
        write_atomic(f, data)


# ---- weights_only's allow-list ----------------------------------------------------------
# torch's weights_only unpickler refuses classes not on this list; programs list theirs
# (`with torch.serialization.safe_globals([GPTConfig]): torch.load(f)`). `load` consults
# it for the dataclass instances and Namespaces a file holds (matched by
# "module.qualname", or the name of an `(obj, "module.name")` pair, as torch); other
# entries (RNNModel, nn.LSTM, ...) are kept so such code runs, and never needed: no
# other objects are in a tapegrad file. A set, as torch's.
_SAFE_GLOBALS = set()


def add_safe_globals(safe_globals):
    """Mark classes (or `(obj, "module.name")` pairs) safe for a weights_only load: a
    dataclass instance or argparse.Namespace of a listed class then loads."""
    _SAFE_GLOBALS.update(safe_globals)  # TypeError for a non-iterable, as torch


def get_safe_globals():
    """The list of globals added with `add_safe_globals` / `safe_globals`."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    """Empty the list `add_safe_globals` fills."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager: `add_safe_globals(globals)` on entry, removes them on exit."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _SAFE_GLOBALS.difference_update(self.safe_globals)


# ---- load -----------------------------------------------------------------------------
def _name(f):
    name = getattr(f, "name", None) if hasattr(f, "read") else os.fspath(f)
    return repr(str(name)) if name is not None else "<file object>"


def load(f, map_location=None, weights_only=True, **kwargs):
    """Load a checkpoint written by `save` (or any safetensors file: then a flat dict
    `name -> Tensor`). `map_location` is accepted for PyTorch compatibility and ignored:
    everything lives on the CPU.

    `weights_only` decides only how a dataclass instance / argparse.Namespace / nn.Module
    in the file is rebuilt (see the module docstring): True (the default; None too, as torch's
    default) needs its class allow-listed, False imports it.

    Raises FileNotFoundError for a missing path and RuntimeError naming the file if it
    is truncated, damaged, not a checkpoint or holds an unsupported dtype;
    pickle.UnpicklingError (as torch) for a class weights_only does not allow.
    Nothing is returned until every tensor has been read and checked."""
    name = _name(f)
    weights_only = weights_only is None or bool(weights_only)
    if hasattr(f, "read"):
        raw = f.read()
    else:
        with open(f, "rb") as fh:  # OSErrors (FileNotFoundError...) pass as torch's do
            raw = fh.read()
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise TypeError(f"tg.load: {name} gave {type(raw).__name__}, not bytes (open the "
                        "file in binary mode, 'rb')")
    raw = bytes(raw)
    try:
        if raw[:2] == b"PK":
            return _load_npz_v1(raw)
        return _load_safetensors(raw, _object_maker(weights_only, name))
    except (tree.TreeError, sharing.SharingError, npz_v1.NpzError) as e:
        raise RuntimeError(f"tg.load: {name} is damaged or not a tapegrad checkpoint: "
                           f"{e}") from None


def _object_maker(weights_only, name):
    """`tree.decode`'s make_object: finds the class (allow-list or import) and rebuilds."""
    def make(kind, module, qualname, where):
        cls = objects.find_class(kind, module, qualname, weights_only=weights_only,
                                 safe_globals=_SAFE_GLOBALS, file=name)
        return lambda attrs: objects.build(cls, attrs, name)
    return make


def _load_safetensors(raw, make_object):
    st = _safetensors()
    if len(raw) < 8:
        raise tree.TreeError(f"{len(raw)} bytes is too short for a safetensors file")
    n = int.from_bytes(raw[:8], "little")
    if n > len(raw) - 8:
        raise tree.TreeError(f"header size {n} exceeds the file's {len(raw)} bytes "
                             "(truncated, or not a safetensors file)")
    try:
        # The audited parser checks the header and every declared size against the
        # file before it copies anything.
        entries = st.deserialize(raw)
    except Exception as e:  # SafetensorError; never let a parser detail escape raw
        raise tree.TreeError(f"{type(e).__name__}: {str(e)[:300]}") from None
    header = json.loads(raw[8:8 + n])  # valid: the parser above checked it
    arrays = {}
    for key, info in entries:
        if info["dtype"] not in _DTYPES:
            raise tree.TreeError(f"tensor {key[:60]!r} has dtype {info['dtype']}, which "
                                 "tapegrad does not support (supported: "
                                 + ", ".join(_DTYPES) + ")")
        # deserialize hands out a fresh bytearray, so the array is writable and owned.
        arrays[key] = np.frombuffer(info["data"], _DTYPES[info["dtype"]]).reshape(
            info["shape"])
    metadata = header.get("__metadata__") or {}
    text, crc = metadata.get(_META_KEY), metadata.get(_CRC_KEY)
    if text is None and crc is None:  # a foreign safetensors file: its tensors in order
        order = sorted(arrays, key=lambda k: header[k]["data_offsets"][0])
        return {k: Tensor._of(arrays[k]) for k in order}
    if text is None or crc is None:
        raise tree.TreeError("the metadata lacks its structure or its checksum")
    want = _crc32(text, {k: (info["dtype"], info["shape"], info["data"]) for k, info in entries})
    if crc != str(want):
        raise tree.TreeError(f"checksum mismatch (CRC-32 {want}, the file says "
                             f"{crc[:20]}): the file was damaged after it was written")
    meta = tree.parse_json(text)
    _check_meta(meta)
    if set(meta) != {"format", "version", "root", "shared"}:
        raise tree.TreeError(f"metadata has fields {sorted(meta)}")
    sharing.rebuild(meta["shared"], arrays)

    def take(key, node, where):
        if key not in arrays:
            raise tree.TreeError(f"{where}: tensor {key[:60]!r} is not in the file")
        return arrays[key]

    obj, used = tree.decode(meta["root"], take, make_object=make_object)
    if len(used) != len(arrays):
        extra = sorted(set(arrays) - used)
        raise tree.TreeError(f"tensor(s) {extra[:5]} are in the file but not in its "
                             "structure")
    return obj


def _check_meta(meta, version=_VERSION):
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise tree.TreeError("the metadata is not tapegrad's")
    if meta.get("version") != version or type(meta.get("version")) is not int:
        raise tree.TreeError(f"format version {str(meta.get('version'))[:20]}, this "
                             f"tapegrad reads version {version} here")


def _load_npz_v1(raw):
    text, arrays, stored = npz_v1.read(raw, _SUPPORTED)
    meta = tree.parse_json(text)
    _check_meta(meta, version=1)
    if set(meta) != {"format", "version", "root"}:
        raise tree.TreeError(f"manifest has fields {sorted(meta)}")

    def take(key, node, where):
        arr = arrays.get(key)
        if arr is None:
            raise tree.TreeError(f"{where}: array {key[:60]!r} is not in the archive")
        shape = node.get("shape")
        if node.get("dtype") != stored[key] or type(shape) is not list or \
                shape != list(arr.shape):
            raise tree.TreeError(f"{where}: array {key!r} is {stored[key]} "
                                 f"{list(arr.shape)}, the manifest says "
                                 f"{str(node.get('dtype'))[:20]} {str(shape)[:40]}")
        return arr

    obj, used = tree.decode(meta["root"], take, legacy=True)
    return obj

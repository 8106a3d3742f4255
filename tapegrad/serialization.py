"""Saving and loading state dicts: `tg.save(obj, path)` / `tg.load(path)`, pickle-free.

File format (one `.npz`, i.e. a zip of `.npy` members, readable with plain NumPy):

    __tapegrad_manifest__.npy   uint8 bytes of a UTF-8 JSON document
    a0.npy, a1.npy, ...          one member per tensor / ndarray, in manifest order

The manifest is `{"format": "tapegrad", "version": 1, "root": NODE}` where NODE is

    {"t": "tensor", "a": "a0", "rg": false}     Tensor (requires_grad kept)
    {"t": "ndarray", "a": "a1"}                 plain NumPy array
    {"t": "int"|"float"|"bool"|"str", "v": ...} Python scalars (floats as repr strings,
                                                so inf / nan survive strict JSON)
    {"t": "none"}
    {"t": "list"|"tuple", "items": [NODE, ...]}
    {"t": "dict", "items": [[KEYNODE, NODE], ...]}   keys keep their type (int keys of
                                                     an optimizer's state stay ints)

Why not pickle: loading a pickle runs code chosen by whoever wrote the file. Here the
loader calls `np.load(..., allow_pickle=False)`, so object arrays are refused and only
numbers, strings and plain arrays can come back.

Safety: `save` writes to a temporary file in the destination directory, fsyncs it and
renames it over the target (`os.replace` is atomic on POSIX and Windows), so a crash
mid-write leaves the old file intact. `load` reads and checks everything (zip CRCs,
manifest, every array's dtype and shape) before returning anything, and raises a
`RuntimeError` naming the file for a truncated, corrupt or foreign file.
"""
import io
import json
import os
import tempfile
import zipfile

import numpy as np

from .tensor import Tensor

__all__ = ["save", "load"]

_MANIFEST = "__tapegrad_manifest__"
_FORMAT = "tapegrad"
_VERSION = 1


# ---- encoding -------------------------------------------------------------------------
def _encode(obj, arrays):
    """Turn `obj` into a JSON-able manifest node; arrays go into the `arrays` dict."""
    # NOTE: bool before int (bool is a subclass of int); Tensor subclasses (Parameter)
    # are saved as tensors, as PyTorch's state_dict() hands out detached data anyway.
    if isinstance(obj, Tensor) or isinstance(obj, np.ndarray):
        arr = obj.data if isinstance(obj, Tensor) else obj
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"tg.save: cannot save an array of dtype {arr.dtype} (only bool, "
                            "integer and floating point arrays are supported)")
        key = f"a{len(arrays)}"
        arrays[key] = arr  # NOTE: not ascontiguousarray, which turns 0-d into 1-d
        node = {"t": "tensor" if isinstance(obj, Tensor) else "ndarray", "a": key,
                "dtype": arr.dtype.str, "shape": list(arr.shape)}
        if isinstance(obj, Tensor):
            node["rg"] = bool(obj.requires_grad)
        return node
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, (bool, np.bool_)):
        return {"t": "bool", "v": bool(obj)}
    if isinstance(obj, (int, np.integer)):
        return {"t": "int", "v": int(obj)}
    if isinstance(obj, (float, np.floating)):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, str):
        return {"t": "str", "v": obj}
    if isinstance(obj, (list, tuple)):
        return {"t": "tuple" if isinstance(obj, tuple) else "list",
                "items": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (str, int, float, bool, np.integer))):
                raise TypeError(f"tg.save: dict keys must be str, int, float, bool or None, "
                                f"got {type(k).__name__}")
            items.append([_encode(k, arrays), _encode(v, arrays)])
        return {"t": "dict", "items": items}
    raise TypeError(f"tg.save: cannot save an object of type {type(obj).__name__}; supported: "
                    "Tensor, numpy array, int, float, bool, str, None, and lists, tuples and "
                    "dicts of them")


def save(obj, f):
    """Save `obj` (a state dict or any nest of tensors, numbers, strings, lists, tuples,
    dicts) to the path `f`, atomically. `f` may also be a writable binary file object."""
    arrays = {}
    manifest = {"format": _FORMAT, "version": _VERSION, "root": _encode(obj, arrays)}
    blob = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    members = {_MANIFEST: blob, **arrays}
    if hasattr(f, "write"):
        np.savez(f, **members)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            # mkstemp makes the file 0600; give it the mode a plain open() would have.
            umask = os.umask(0)
            os.umask(umask)
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), 0o666 & ~umask)
            np.savez(fh, **members)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


def _fsync_dir(directory):
    # The rename itself is durable only once the directory entry is on disk (POSIX).
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# ---- decoding -------------------------------------------------------------------------
class _Corrupt(Exception):
    pass


def _decode(node, arrays):
    t = node.get("t") if isinstance(node, dict) else None
    if t in ("tensor", "ndarray"):
        key = node.get("a")
        if key not in arrays:
            raise _Corrupt(f"array {key!r} named in the manifest is missing")
        arr = arrays[key]
        if arr.dtype.str != node.get("dtype") or list(arr.shape) != node.get("shape"):
            raise _Corrupt(f"array {key!r} has dtype {arr.dtype.str} shape {list(arr.shape)}, "
                           f"the manifest says {node.get('dtype')} {node.get('shape')}")
        if t == "ndarray":
            return arr
        out = Tensor(arr)
        if node.get("rg"):
            out.requires_grad_(True)
        return out
    if t == "none":
        return None
    if t == "bool":
        return bool(node["v"])
    if t == "int":
        return int(node["v"])
    if t == "float":
        return float(node["v"])
    if t == "str":
        return str(node["v"])
    if t in ("list", "tuple"):
        items = [_decode(v, arrays) for v in node["items"]]
        return tuple(items) if t == "tuple" else items
    if t == "dict":
        return {_decode(k, arrays): _decode(v, arrays) for k, v in node["items"]}
    raise _Corrupt(f"unknown manifest node {str(node)[:80]!r}")


def load(f, map_location=None, weights_only=True, **kwargs):
    """Load what `save` wrote. `map_location` and `weights_only` are accepted for PyTorch
    compatibility and ignored (everything lives on the CPU; nothing but data is loaded).

    Raises RuntimeError naming the file if it is truncated, corrupt or not a tapegrad file.
    Nothing is returned until every array has been read and checked."""
    name = getattr(f, "name", None) if hasattr(f, "read") else os.fspath(f)
    name = repr(str(name)) if name is not None else "<file object>"
    try:
        if hasattr(f, "read"):
            raw = f.read()
        else:
            with open(f, "rb") as fh:
                raw = fh.read()
    except OSError as e:
        raise RuntimeError(f"tg.load: cannot read {name}: {e}") from None
    if not raw.startswith(b"PK"):
        raise RuntimeError(f"tg.load: {name} is not a tapegrad checkpoint (not an .npz/zip "
                           "archive; was it written by tg.save?)")
    try:
        # Every member is read here, so zipfile checks every CRC before we build anything.
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as e:
        raise RuntimeError(f"tg.load: {name} is truncated or corrupt ({type(e).__name__}: "
                           f"{e})") from None
    blob = arrays.pop(_MANIFEST, None)
    if blob is None or blob.dtype != np.uint8 or blob.ndim != 1:
        raise RuntimeError(f"tg.load: {name} is an .npz archive but not a tapegrad checkpoint "
                           "(no manifest)")
    try:
        manifest = json.loads(blob.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RuntimeError(f"tg.load: {name} has a corrupt manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        raise RuntimeError(f"tg.load: {name} is not a tapegrad checkpoint (bad manifest)")
    if manifest.get("version") != _VERSION:
        raise RuntimeError(f"tg.load: {name} has format version {manifest.get('version')}, "
                           f"this tapegrad reads version {_VERSION}")
    try:
        return _decode(manifest.get("root"), arrays)
    except (_Corrupt, KeyError, TypeError, ValueError) as e:
        raise RuntimeError(f"tg.load: {name} is corrupt: {e}") from None

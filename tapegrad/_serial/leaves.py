"""Leaf values of a checkpoint beyond JSON's scalars: bytes, bytearray, complex, dtype
and device, both ways. torch's weights_only loader accepts each of them by default, and
programs keep them in checkpoints (`{'dtype': torch.float32}`, a tokenizer's bytes).

    {"t": "bytes", "v": BASE64}   {"t": "bytearray", "v": BASE64}
    {"t": "complex", "v": [REAL, IMAG]}   each a float's repr string, as "float" nodes
    {"t": "dtype", "v": "float32"}         a tapegrad dtype by its name (bfloat16 too)
    {"t": "device", "v": "cpu"}            str(device): "cpu", "cuda:0"...

Decoding is as strict as the rest of the tree: base64 and floats must be in the exact
form `encode` writes, and a dtype name must be one of tapegrad's; anything else is a
`TreeError`. Only tapegrad's own dtype and device objects are made: nothing is looked up
by a name the file chooses beyond the fixed tables here.
"""
import base64
import binascii

import numpy as np

from .. import dtypes
from .._device import device
from .errors import TreeError

TYPES = frozenset({"bytes", "bytearray", "complex", "dtype", "device"})
# Every dtype object a program can hold, by the name `encode` writes.
_DTYPES = {d.name: d for d in (*dtypes._BY_NAME.values(), *dtypes._UNSUPPORTED.values())}


def encode(obj):
    """The node of one of these leaves, or None if `obj` is not one."""
    if isinstance(obj, (bytes, bytearray)):
        return {"t": "bytearray" if isinstance(obj, bytearray) else "bytes",
                "v": base64.b64encode(obj).decode("ascii")}
    if isinstance(obj, (complex, np.complexfloating)):
        return {"t": "complex", "v": [repr(float(obj.real)), repr(float(obj.imag))]}
    if isinstance(obj, (dtypes.dtype, dtypes._UnsupportedDtype)):
        return {"t": "dtype", "v": obj.name}
    if isinstance(obj, device):
        return {"t": "device", "v": str(obj)}
    return None


def parse_float(v, where):
    """A float from the repr string `encode` wrote, refusing any other spelling."""
    if type(v) is not str:
        raise TreeError(f"{where}: float {str(v)[:40]!r} is not a string")
    try:
        f = float(v)
    except ValueError:
        raise TreeError(f"{where}: {v[:40]!r} is not a float") from None
    if repr(f) != v:  # what save writes; refuses "1e999", " 1", "0x1p3"...
        raise TreeError(f"{where}: float {v[:40]!r} is not in canonical form")
    return f


def decode(node, where):
    """The value of a leaf node whose "t" is in TYPES (its fields already checked)."""
    t = node["t"]
    if "v" not in node:
        raise TreeError(f"{where}: {t!r} node without a value")
    v = node["v"]
    if t == "complex":
        if type(v) is not list or len(v) != 2:
            raise TreeError(f"{where}: complex node holds {str(v)[:40]!r}, not [real, imag]")
        return complex(parse_float(v[0], where), parse_float(v[1], where))
    if type(v) is not str:
        raise TreeError(f"{where}: {t!r} node holds {type(v).__name__} {str(v)[:40]!r}")
    if t in ("bytes", "bytearray"):
        try:
            data = base64.b64decode(v.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise TreeError(f"{where}: {t} node holds invalid base64") from None
        if base64.b64encode(data).decode("ascii") != v:
            raise TreeError(f"{where}: {t} node's base64 is not in canonical form")
        return data if t == "bytes" else bytearray(data)
    if t == "dtype":
        if v not in _DTYPES:
            raise TreeError(f"{where}: unknown dtype {v[:40]!r}")
        return _DTYPES[v]
    try:
        return device(v)
    except (RuntimeError, TypeError, ValueError) as e:
        raise TreeError(f"{where}: device {v[:40]!r} is invalid ({e})") from None

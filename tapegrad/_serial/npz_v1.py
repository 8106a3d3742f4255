"""Read-only support for checkpoints written by tapegrad 0.1's `tg.save` (format 1).

Format 1 is an `.npz` (a zip of `.npy` members, ZIP_STORED): `__tapegrad_manifest__.npy`
holds the UTF-8 JSON manifest `{"format": "tapegrad", "version": 1, "root": NODE}` and
`a0.npy, a1.npy, ...` the arrays. Nothing here calls `np.load`: each member's `.npy`
header is parsed, its dtype checked against the supported set and its declared size
against the member's actual bytes BEFORE any array is made, so a damaged file can
neither allocate terabytes nor smuggle in object, unicode or structured arrays."""
import io
import math
import zipfile

import numpy as np

MANIFEST = "__tapegrad_manifest__"


class NpzError(Exception):
    """The archive is damaged or not a format-1 checkpoint; the caller names the file."""


def _read_npy(raw, member, supported):
    fh = io.BytesIO(raw)
    version = np.lib.format.read_magic(fh)
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    shape, fortran, dtype = read_header(fh)
    if dtype.kind not in "biuf" or dtype.names or dtype.str.lstrip("<>|=") not in supported:
        raise NpzError(f"member {member} has unsupported dtype {dtype}")
    data = raw[fh.tell():]
    if math.prod(shape) * dtype.itemsize != len(data):
        raise NpzError(f"member {member} declares shape {shape} of {dtype} but holds "
                       f"{len(data)} bytes")
    arr = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
    return arr.astype(dtype.newbyteorder("=")), dtype.str  # a writable native copy


def read(raw, supported):
    """Return (manifest text, {member name: ndarray in native byte order},
    {member name: the dtype string the file stored}) or raise NpzError."""
    arrays, stored = {}, {}
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    raise NpzError(f"member {info.filename[:60]!r} is not an .npy array")
                if info.compress_type != zipfile.ZIP_STORED or info.file_size > len(raw):
                    raise NpzError(f"member {info.filename[:60]!r} is compressed or larger "
                                   "than the file")
                name = info.filename[:-4]
                if name in arrays:
                    raise NpzError(f"member {name[:60]!r} appears twice")
                # z.read checks the member's CRC-32
                arrays[name], stored[name] = _read_npy(z.read(info), name, supported)
    except NpzError:
        raise
    except Exception as e:  # zipfile raises a zoo of types for damaged archives
        raise NpzError(f"{type(e).__name__}: {str(e)[:200]}") from None
    blob = arrays.pop(MANIFEST, None)
    stored.pop(MANIFEST, None)
    if blob is None or blob.dtype != np.uint8 or blob.ndim != 1:
        raise NpzError("an .npz archive but not a tapegrad checkpoint (no manifest)")
    try:
        text = blob.tobytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise NpzError(f"manifest is not UTF-8 ({e})") from None
    return text, arrays, stored

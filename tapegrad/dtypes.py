"""Dtypes: tapegrad's dtype objects are NumPy dtypes under PyTorch's names.

The default floating dtype is float32, as in PyTorch; `set_default_dtype` changes it.
Only floating tensors may require grad.
"""
import numpy as np

float16 = half = np.dtype("float16")
float32 = float = np.dtype("float32")
float64 = double = np.dtype("float64")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
int16 = short = np.dtype("int16")
int32 = int = np.dtype("int32")
int64 = long = np.dtype("int64")
bool = np.dtype("bool")


class _UnsupportedDtype:
    """A dtype PyTorch has and NumPy lacks: it exists (programs build dtype tables with
    it), and making a tensor of it raises one error naming it."""

    __slots__ = ("name",)
    is_floating_point = True
    is_complex = False

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tapegrad.{self.name}"

    def refuse(self):
        raise TypeError(f"dtype {self.name} is not supported: NumPy, which tapegrad computes "
                        f"with, has no {self.name}; use float32, or float16 with "
                        "tg.amp.GradScaler")


bfloat16 = _UnsupportedDtype("bfloat16")
_UNSUPPORTED = {"bfloat16": bfloat16}

_default = {"float": float32}

_BY_NAME = {
    "float16": float16, "half": float16, "float32": float32, "float": float32,
    "float64": float64, "double": float64, "int8": int8, "uint8": uint8,
    "int16": int16, "short": int16, "int32": int32, "int": int32, "int64": int64,
    "long": int64, "bool": bool,
}
_SUPPORTED = frozenset(_BY_NAME.values())
# The legacy tensor types (torch.FloatTensor, ...) and the dtypes they stand for.
LEGACY_TYPES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16,
                "ByteTensor": uint8, "CharTensor": int8, "ShortTensor": int16,
                "IntTensor": int32, "LongTensor": int64, "BoolTensor": bool}
_LEGACY_NAMES = {d: n for n, d in LEGACY_TYPES.items()}


def legacy_name(d):
    """'FloatTensor' for float32, ...: what `Tensor.type()` answers."""
    return _LEGACY_NAMES[np.dtype(d)]


def get_default_dtype():
    return _default["float"]


def set_default_dtype(d):
    d = as_dtype(d)
    if not is_floating(d):
        raise TypeError(f"set_default_dtype only supports floating dtypes, got {d}")
    _default["float"] = d


def as_dtype(d):
    """Accept a tapegrad/NumPy dtype, a NumPy type, a name, or a torch-style string."""
    if d is None:
        return None
    if isinstance(d, _UnsupportedDtype):
        d.refuse()
    if isinstance(d, str):
        name = d.replace("torch.", "").replace("tapegrad.", "")
        if name in _UNSUPPORTED:
            _UNSUPPORTED[name].refuse()
        if name in _BY_NAME:
            return _BY_NAME[name]
        if name in LEGACY_TYPES:
            return LEGACY_TYPES[name]
        raise TypeError(f"unknown dtype {d!r}")
    try:
        nd = np.dtype(d)
    except TypeError:
        raise TypeError(f"unsupported dtype {d!r}") from None
    if nd not in _SUPPORTED:
        raise TypeError(f"unsupported dtype {nd}; tapegrad supports "
                        f"{sorted(str(x) for x in _SUPPORTED)}")
    return nd


def is_floating(d):
    return np.dtype(d).kind == "f"

"""Dtypes: NumPy dtypes under PyTorch's names, printed as PyTorch prints its own.

`tg.float32` is a `tg.dtype`: it wraps the NumPy dtype (its `.dtype` attribute, which
NumPy reads wherever it takes a dtype: `np.zeros(3, tg.float32)`, `a.astype(x.dtype)`),
compares equal to it (`x.dtype == np.float32`), hashes like it, and prints as
`tapegrad.float32`, as torch prints `torch.float32`. `Tensor.dtype` returns one.
Inside tapegrad arrays keep NumPy dtypes, and `as_dtype` answers a NumPy dtype (what
NumPy compares fastest); `of(np_dtype)` gives the public object.

The default floating dtype is float32, as in PyTorch; `set_default_dtype` changes it.
Only floating tensors may require grad.
"""
import numpy as np

_np_dtype = np.dtype


class dtype:
    """A tapegrad dtype (see the module docstring): PyTorch's `torch.dtype`."""

    __slots__ = ("dtype", "name")

    def __init__(self, np_dtype, name):
        self.dtype = np_dtype  # what NumPy reads when given this object as a dtype
        self.name = name

    def __repr__(self):
        return f"tapegrad.{self.name}"

    __str__ = __repr__

    def __eq__(self, other):
        if type(other) is dtype:
            return self.dtype == other.dtype
        if isinstance(other, _np_dtype):
            return self.dtype == other
        if isinstance(other, _UnsupportedDtype):
            return False
        try:
            return self.dtype == _np_dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)

    def __reduce__(self):  # copy/pickle give back the same object
        return (_by_name, (self.name,))

    # torch.dtype's attributes
    is_floating_point = property(lambda self: self.dtype.kind == "f")
    is_complex = property(lambda self: False)
    is_signed = property(lambda self: self.dtype.kind in "if")
    itemsize = property(lambda self: self.dtype.itemsize)
    # NumPy's, for code that used the NumPy dtype tapegrad returned before
    kind = property(lambda self: self.dtype.kind)
    char = property(lambda self: self.dtype.char)
    type = property(lambda self: self.dtype.type)
    str = property(lambda self: self.dtype.str)
    names = property(lambda self: None)
    byteorder = property(lambda self: self.dtype.byteorder)


float16 = half = dtype(_np_dtype("float16"), "float16")
float32 = float = dtype(_np_dtype("float32"), "float32")
float64 = double = dtype(_np_dtype("float64"), "float64")
int8 = dtype(_np_dtype("int8"), "int8")
uint8 = dtype(_np_dtype("uint8"), "uint8")
int16 = short = dtype(_np_dtype("int16"), "int16")
int32 = int = dtype(_np_dtype("int32"), "int32")
int64 = long = dtype(_np_dtype("int64"), "int64")
bool = dtype(_np_dtype("bool"), "bool")
_BY_NP = {d.dtype: d for d in (float16, float32, float64, int8, uint8, int16, int32, int64,
                              bool)}


def of(np_dtype):
    """The public dtype object of a NumPy dtype (the NumPy dtype itself if unsupported)."""
    return _BY_NP.get(np_dtype, np_dtype)


def name(d):
    """How a dtype prints in messages: 'tapegrad.float32' (NumPy's name if unsupported)."""
    d = d if isinstance(d, (dtype, _UnsupportedDtype)) else _BY_NP.get(_np_dtype(d), d)
    return repr(d) if isinstance(d, (dtype, _UnsupportedDtype)) else f"{d}"


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

_default = {"float": float32.dtype}  # kept as the NumPy dtype (see as_dtype)

_BY_NAME = {
    "float16": float16, "half": float16, "float32": float32, "float": float32,
    "float64": float64, "double": float64, "int8": int8, "uint8": uint8,
    "int16": int16, "short": int16, "int32": int32, "int": int32, "int64": int64,
    "long": int64, "bool": bool,
}
_SUPPORTED = frozenset(d.dtype for d in _BY_NAME.values())  # NumPy dtypes
# The legacy tensor types (torch.FloatTensor, ...) and the dtypes they stand for.
LEGACY_TYPES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16,
                "ByteTensor": uint8, "CharTensor": int8, "ShortTensor": int16,
                "IntTensor": int32, "LongTensor": int64, "BoolTensor": bool}
_LEGACY_NAMES = {d.dtype: n for n, d in LEGACY_TYPES.items()}


def legacy_name(d):
    """'FloatTensor' for float32, ...: what `Tensor.type()` answers."""
    return _LEGACY_NAMES[np.dtype(d)]


def _by_name(n):
    return _BY_NAME[n]


def get_default_dtype():
    return _BY_NP[_default["float"]]


def set_default_dtype(d):
    d = as_dtype(d)
    if not is_floating(d):
        raise TypeError(f"set_default_dtype only supports floating dtypes, got {name(d)}")
    _default["float"] = d


def as_dtype(d):
    """The NumPy dtype of a tapegrad/NumPy dtype, a NumPy type, a name, or a torch-style
    string (None stays None)."""
    if d is None:
        return None
    if type(d) is dtype:
        return d.dtype
    if isinstance(d, _UnsupportedDtype):
        d.refuse()
    if isinstance(d, str):
        name = d.replace("torch.", "").replace("tapegrad.", "")
        if name in _UNSUPPORTED:
            _UNSUPPORTED[name].refuse()
        if name in _BY_NAME:
            return _BY_NAME[name].dtype
        if name in LEGACY_TYPES:
            return LEGACY_TYPES[name].dtype
        raise TypeError(f"unknown dtype {d!r}")
    try:
        nd = np.dtype(d)
    except TypeError:
        raise TypeError(f"unsupported dtype {d!r}") from None
    if nd not in _SUPPORTED:
        raise TypeError(f"unsupported dtype {nd}; tapegrad supports "
                        f"{sorted(x.name for x in _BY_NP.values())}")
    return nd


def is_floating(d):
    return np.dtype(d).kind == "f"

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
import builtins

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

# Every name of every dtype, one row per dtype: the one table of dtype names (the
# parsers, printers, messages and file formats below and elsewhere read it).
#   dtype    other names  torch's messages  legacy type     C++ type (torch's bound
#                         ('Float')         (Tensor.type()) messages)          safetensors
_NAMES = (
    (float16, ("half",), "Half", "HalfTensor", "c10::Half", "F16"),
    (float32, ("float",), "Float", "FloatTensor", "float", "F32"),
    (float64, ("double",), "Double", "DoubleTensor", "double", "F64"),
    (int8, (), "Char", "CharTensor", "signed char", "I8"),
    (uint8, (), "Byte", "ByteTensor", "unsigned char", "U8"),
    (int16, ("short",), "Short", "ShortTensor", "short int", "I16"),
    (int32, ("int",), "Int", "IntTensor", "int", "I32"),
    (int64, ("long",), "Long", "LongTensor", "long int", "I64"),
    (bool, (), "Bool", "BoolTensor", "bool", "BOOL"),
)
_BY_NP = {row[0].dtype: row[0] for row in _NAMES}


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

_BY_NAME = {n: row[0] for row in _NAMES for n in (row[0].name, *row[1])}
_SUPPORTED = frozenset(_BY_NP)  # NumPy dtypes
# The legacy tensor types (torch.FloatTensor, ...) and the dtypes they stand for.
LEGACY_TYPES = {row[3]: row[0] for row in _NAMES}
_LEGACY_NAMES = {row[0].dtype: row[3] for row in _NAMES}
# PyTorch's scalar-type names, as its error messages spell them
_TORCH_NAMES = {row[0].dtype: row[2] for row in _NAMES}
_CPP_NAMES = {row[0].dtype: row[4] for row in _NAMES}
# safetensors' dtype codes -> NumPy dtypes: the table's, and the unsigned integers a file
# written elsewhere may hold (loaded as NumPy arrays)
SAFETENSORS = {**{row[5]: row[0].dtype for row in _NAMES},
               "U16": _np_dtype("uint16"), "U32": _np_dtype("uint32"),
               "U64": _np_dtype("uint64")}


def torch_name(d):
    """'Float' for float32, ...: the name in PyTorch's messages."""
    d = np.dtype(d)
    return _TORCH_NAMES.get(d, str(d))


def cpp_name(d):
    """'float' for float32, 'long int' for int64, ...: the C++ type torch's bound messages
    print."""
    return _CPP_NAMES[np.dtype(d)]


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


# ---- type promotion: PyTorch's rules, in one place -------------------------------------
# An operand is described by (dtype, kind): kind DIM (a tensor with dimensions), ZERO (a
# 0-d tensor) or NUMBER (a Python number; its "dtype" is then the Python type bool, int
# or float). PyTorch promotes within each kind, then lets the higher kind win unless a
# lower kind has a higher CATEGORY (bool < integer < floating): float32 tensor * 0-d
# float64 tensor is float32, int tensor * 2.5 is the default dtype, uint8 tensor + 0-d
# int64 tensor is uint8 (c10's ResultTypeState and combine_categories).
DIM, ZERO, NUMBER = 0, 1, 2


def _cat(d):
    """0 bool, 1 integer, 2 floating."""
    k = d.kind
    return 0 if k == "b" else 2 if k == "f" else 1


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both can be cast to without leaving their
    category (a floating dtype wins over any integer: float16 with int64 is float16)."""
    a, b = as_dtype(type1), as_dtype(type2)
    ca, cb = _cat(a), _cat(b)
    if ca != cb and (ca == 2 or cb == 2):
        return a if ca == 2 else b
    return np.promote_types(a, b)  # within a category (and bool < int) NumPy agrees


def can_cast(from_, to):
    """torch.can_cast: casting may not lower the category (float -> int, int -> bool)."""
    return _cat(as_dtype(from_)) <= _cat(as_dtype(to))


def _number_dtype(t):
    """A Python number's dtype in promotion: float -> the default dtype, int -> int64."""
    if t is builtins.float:
        return _default["float"]
    return bool if t is builtins.bool else int64


def result_type(*operands):
    """The result dtype of operands given as (dtype, kind) pairs (kind DIM, ZERO or
    NUMBER; a NUMBER's dtype is its Python type). The one promotion rule every binary
    op, `where`, the in-place ops and torch.result_type use."""
    best = [None, None, None]  # the promoted dtype within each kind
    for d, kind in operands:
        if kind == NUMBER:
            d = _number_dtype(d)
        cur = best[kind]
        best[kind] = d if cur is None else promote_types(cur, d)
    return _combine(best[DIM], _combine(best[ZERO], best[NUMBER]))


def _combine(higher, lower):
    """c10's combine_categories: the higher kind's dtype, unless the lower kind is of a
    higher category (then both are promoted)."""
    if higher is None:
        return lower
    if lower is None or _cat(higher) == 2:
        return higher
    if _cat(higher) == 0 or _cat(lower) == 2:
        return promote_types(higher, lower)
    return higher

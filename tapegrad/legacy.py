"""The legacy tensor types: `tg.FloatTensor([1, 2])`, `tg.LongTensor(3)`, ...

Each is a constructor with the rules of `tg.Tensor(...)` (legacy_args.py) at a fixed
dtype, and a type for `isinstance` checks (`isinstance(t, tg.FloatTensor)` is True for a
float32 tensor), as in torch; the tensors they make are ordinary `tg.Tensor`s.
`BFloat16Tensor` exists and refuses, like the bfloat16 dtype. `set_default_tensor_type`
(deprecated in torch) sets the default dtype to a floating type's.
"""
import warnings

from . import dtypes as _dt
from . import legacy_args as _legacy
from ._device import check as _check_device
from ._tensor import Tensor


class _TensorType(type):
    """The metaclass: calling makes a Tensor of the type's dtype; isinstance checks it."""

    def __call__(cls, *args, device=None):
        _check_device(device, f"{cls.__name__}()")
        if cls.dtype is None:
            _dt.bfloat16.refuse()
        data, dtype = _legacy.legacy_data(args, cls.dtype, cls.__name__)
        return Tensor(data, dtype=dtype if dtype is not None else cls.dtype)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and cls.dtype is not None and obj.dtype == cls.dtype

    def __repr__(cls):
        return f"<class 'tapegrad.{cls.__name__}'>"


def _make(dtype, name=None):
    name = name or _dt.legacy_name(dtype)  # 'FloatTensor': dtypes.py's table of names
    return _TensorType(name, (), {"dtype": dtype, "is_cuda": False, "__module__": __name__,
                                  "__doc__": f"Legacy tensor type of dtype {dtype}."})


FloatTensor = _make(_dt.float32)
DoubleTensor = _make(_dt.float64)
HalfTensor = _make(_dt.float16)
BFloat16Tensor = _make(None, "BFloat16Tensor")
ByteTensor = _make(_dt.uint8)
CharTensor = _make(_dt.int8)
ShortTensor = _make(_dt.int16)
IntTensor = _make(_dt.int32)
LongTensor = _make(_dt.int64)
BoolTensor = _make(_dt.bool)


_DEPRECATED = ("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
               "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
_warned = {"once": False}


def set_default_tensor_type(t, /):
    """Deprecated in torch: the default dtype becomes the type's (FloatTensor: float32,
    DoubleTensor: float64, HalfTensor: float16), named by the type or its dotted name
    ('torch.DoubleTensor'). torch warns once per program."""
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        t = globals().get(name) if module in ("torch", "tapegrad") else None
        if not isinstance(t, _TensorType):
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
    if not isinstance(t, _TensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if t.dtype is None:
        _dt.bfloat16.refuse()
    if t.dtype.kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    if not _warned["once"]:
        _warned["once"] = True
        warnings.warn(_DEPRECATED, UserWarning, stacklevel=2)
    _dt.set_default_dtype(t.dtype)

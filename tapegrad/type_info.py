"""`tg.finfo` / `tg.iinfo`: torch's limits of a dtype (`torch.finfo(torch.float32).eps`,
`torch.finfo(x.dtype).min` as the fill value of a masked attention score,
`torch.iinfo(torch.int64).max`).

The numbers are NumPy's (np.finfo / np.iinfo of the same dtype: IEEE formats and two's
complement integers, so the same values torch reports), as Python floats and ints; the
names, the repr and the errors are torch's.
"""
import numpy as np

from . import dtypes as _dt

__all__ = ["finfo", "iinfo"]


def _dtype_arg(fn, type_):
    """(public dtype, NumPy dtype) of finfo's / iinfo's argument: a tapegrad dtype only,
    as torch accepts only a torch.dtype there."""
    if type(type_) is not _dt.dtype:
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be torch.dtype, not "
                        f"{type(type_).__name__}")
    return type_, type_.dtype


class _Info:
    """What finfo and iinfo share: equal when of the same class and dtype, unhashable (as
    torch's), str is repr."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype

    __hash__ = None

    def __str__(self):
        return repr(self)


class finfo(_Info):
    """The limits of a floating dtype (default: the default dtype): bits, eps, max, min,
    tiny (= smallest_normal), resolution, dtype (its name, a str)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    def __init__(self, type=None):
        d, nd = _dtype_arg("finfo", _dt.get_default_dtype() if type is None else type)
        if nd.kind != "f":
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = np.finfo(nd)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # (a double, as torch: not a float32)
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_Info):
    """The limits of an integer dtype: bits, max, min (Python ints), dtype (its name)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        d, nd = _dtype_arg("iinfo", type)
        if nd.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if nd.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(nd)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

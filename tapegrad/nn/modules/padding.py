"""torch.nn.modules.padding: the padding layers over `F.pad`: `ConstantPad1d/2d/3d`,
`ZeroPad1d/2d/3d`, `ReflectionPad1d/2d/3d`, `ReplicationPad1d/2d/3d`, `CircularPad1d/2d/3d`
(PyTorch's arguments, reprs and input-rank errors)."""
from ...ops.shape import pad as _pad
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d"]


def _ntuple(padding, n):
    """An int pads every side by it; a tuple is taken as given (torch's `_ntuple(2 * n)`)."""
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    return tuple(padding)


def _check_non_constant(x, padding, mode):
    """torch's F.pad checks the rank for the non-constant modes (batch dim optional), and
    circular padding may wrap at most once; tapegrad's F.pad would pad any rank."""
    n, nd = len(padding), x.dim()
    if n // 2 + 1 != nd and n // 2 + 2 != nd:
        raise NotImplementedError(
            f"Padding size {n} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        for i in range(n // 2):
            size = x.shape[nd - 1 - i]
            if padding[2 * i] > size or padding[2 * i + 1] > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")


class _ConstantPadNd(Module):
    _n = 1

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _ntuple(padding, self._n)
        self.value = value

    def forward(self, input):
        return _pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    _n = 3


class _ModePadNd(Module):
    _n = 1
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self._n)

    def forward(self, input):
        _check_non_constant(input, self.padding, self._mode)
        return _pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    _n, _mode = 3, "replicate"


class _CircularPadNd(_ModePadNd):
    _mode = "circular"

    def forward(self, input):
        # torch's CircularPadNd checks the rank itself, with its own message
        nd = input.dim()
        if nd not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got {nd}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    _n = 1


class CircularPad2d(_CircularPadNd):
    _n = 2


class CircularPad3d(_CircularPadNd):
    _n = 3

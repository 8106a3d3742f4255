"""`tg.device`: PyTorch's device object, for programs written for any device.

tapegrad computes on the CPU only. `device('cpu')`, `device('cpu', 0)` and the
strings 'cpu'/'cpu:0' are accepted everywhere a device is (`.to(device)`, `device=`
of the creation functions, `set_default_device`); naming another device (cuda, mps,
...) is refused by `check` with one error that says which device was asked for.
"""
import numpy as np

_KNOWN = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "mtia", "ipu", "privateuseone")


class device:
    """`device('cpu')`, `device('cuda:0')`, `device('cuda', 1)`: a type and an index.

    Equal to another device with the same type and index. NOT equal to its string,
    as in torch (`torch.device('cpu') == 'cpu'` is False there, so a program comparing
    them behaves the same here): compare `x.device.type == 'cpu'` or `str(x.device)`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): an index cannot be given with a device object")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, (int, np.integer)) and not isinstance(type, bool):
            # torch.device(0) means the accelerator's device 0; a CPU-only torch refuses
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or a device, got "
                            f"{type.__class__.__name__}")
        name, sep, idx = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index "
                                   f"was passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in _KNOWN:
            raise RuntimeError(f"Expected one of {', '.join(_KNOWN)} device type at start of "
                               f"device string: {type}")
        if index is not None and (not isinstance(index, (int, np.integer)) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = name
        self.index = None if index is None else int(index)

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):  # `with torch.device('cpu'):` sets the default device
        check(self, "with device")
        return self

    def __exit__(self, *exc):
        return False


CPU = device("cpu")
_default = {"device": CPU}


def check(dev, where="device"):
    """The device `dev` names (None = the default), refused unless it is the CPU."""
    if dev is None:
        return _default["device"]
    if not isinstance(dev, device):
        if not isinstance(dev, (str, int, np.integer)) or isinstance(dev, bool):
            raise TypeError(f"{where}: expected a device (a string like 'cpu' or a "
                            f"tapegrad._device), got {dev!r}")
        dev = device(dev)
    if dev.type != "cpu":
        raise RuntimeError(
            f"{where}: device '{dev}' is not available: tapegrad runs on the CPU only "
            "(use device='cpu'; torch.cuda.is_available() is False here)")
    return CPU


def set_default_device(dev):
    """Only the CPU (or None, meaning the CPU) can be the default device."""
    _default["device"] = check(dev, "set_default_device")


def get_default_device():
    return _default["device"]

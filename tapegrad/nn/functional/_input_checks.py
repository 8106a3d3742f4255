"""`_t`: the check that a functional's argument is a Tensor (torch's TypeError), shared by
the functional sections."""
from ..._tensor import Tensor


def _t(x, name="input"):
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")

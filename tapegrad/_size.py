"""torch.Size: a tensor's shape, a tuple printed as PyTorch prints it (tapegrad.Size).
Its own module so that the ops below the Tensor class (broadcast_shapes) can return one."""
import math


class Size(tuple):
    """Tensor shape: a tuple, printed as PyTorch prints it."""

    __slots__ = ()

    def __repr__(self):
        return f"tapegrad.Size({list(self)})"

    def numel(self):
        return math.prod(self)

"""torch.nn.modules.flatten: `Flatten` (merges dims start_dim..end_dim into one (default: all
but the batch dim)) and `Unflatten`."""

from .module import Module
from ...ops import shape as _shape

__all__ = ["Flatten", "Unflatten"]


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:
        return _shape.reshape(input, (1,))
    s, e = start_dim % nd, end_dim % nd
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(input.shape)
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return _shape.reshape(input, shape[:s] + (n,) + shape[e + 1:])


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size` (one entry may be -1), as tensor.unflatten."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, e in enumerate(unflattened_size):
            if not isinstance(e, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                f"type {type(e).__name__} at pos {i}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

"""torch.broadcast_shapes: the shape tensors of the given shapes broadcast to, as a
tapegrad.Size, computed from the shapes alone (no tensors made), with torch's message
for shapes that do not broadcast. An API-layer module: Size lives in _tensor.py.
"""
from ._tensor import Size


def broadcast_shapes(*shapes):
    """The broadcast shape of `shapes` (each a sequence of ints, or an int for (n,))."""
    res = []
    for i, shape in enumerate(shapes):
        shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        res = [1] * (len(shape) - len(res)) + res
        for k in range(-1, -len(shape) - 1, -1):
            a, b = res[k], shape[k]
            if a == 1:
                res[k] = b
            elif b != 1 and b != a:
                # torch names the argument by its tuple repr: (4,)
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b} at "
                                   f"{k}! Mismatching argument at index {i} had {shape}; but "
                                   f"expected shape should be broadcastable to {res}")
    return Size(res)

"""The arguments that convolution and pooling share: ints or tuples of sizes
(`_pair`, `_single`), and the unbatched input that gets a batch dim of 1 on the way in
and loses it on the way out (`_batched`, `_unbatch`)."""
import numbers

from ..._tensor import Tensor
from ...ops import shape as _shape


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor._of(x)



def _pair(v, name="argument"):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v}")
    return v



def _single(v):
    if isinstance(v, numbers.Integral):
        return int(v)
    v = tuple(v)
    if len(v) != 1:
        raise ValueError(f"expected an int or a 1-tuple, got {v}")
    return int(v[0])



def _batched(x, name, nd):
    """Accept unbatched input (one dim fewer) as PyTorch does; return (x, was_unbatched)."""
    if x.ndim == nd:
        return x, False
    if x.ndim == nd - 1:
        return _shape.reshape(x, (1,) + tuple(x.shape)), True
    raise RuntimeError(f"{name}: expected {nd - 1}D (unbatched) or {nd}D (batched) input, "
                       f"but got input of size: {list(x.shape)}")



def _unbatch(y, was):
    return _shape.reshape(y, tuple(y.shape[1:])) if was else y

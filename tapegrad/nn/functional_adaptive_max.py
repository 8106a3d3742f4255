"""`F.adaptive_max_pool1d/2d` (with `return_indices`): torch's windows
[floor(i L / out), ceil((i + 1) L / out)) as a gather plus `max(dim)`.

Windows differ in length by at most one, so each is gathered at the longest length,
a short one repeating its last index: a repeat never changes the maximum, and `max(dim)`
picks the first maximum, the original element, so the gradient goes to one element per
window as torch's. The 2-D pool is the max over rows of the max along each row: the
first maximum in row-major order, torch's scan order.
"""
import numpy as np

from ..ops.creation import tensor as _tensor


def _windows(n, out):
    """(out, K) source indices of each window, K the longest window."""
    starts = [(i * n) // out for i in range(out)]
    ends = [-(-((i + 1) * n) // out) for i in range(out)]
    k = max([e - s for s, e in zip(starts, ends)], default=1)
    return np.array([[min(s + j, e - 1) for j in range(k)] for s, e in zip(starts, ends)],
                    dtype=np.int64).reshape(out, k)


def _pool_last(x, dim, out):
    """Max over the adaptive windows of dimension `dim` (negative): values and the source
    index along `dim` of each maximum."""
    n = x.shape[dim]
    idx = _windows(n, out)
    k = idx.shape[1]
    g = x.index_select(dim, _tensor(idx.reshape(-1)))
    shape = list(g.shape)
    d = dim % len(shape)
    g = g.reshape(shape[:d] + [out, k] + shape[d + 1:])
    vals, pos = g.max(dim=d + 1)
    p = np.asarray(pos.numpy())
    rows = np.arange(out).reshape((out,) + (1,) * (len(shape) - d - 1))
    return vals, idx[rows, p]


def _check_sizes(x, name, nd):
    for d in range(x.dim() - nd, x.dim()):
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with "
                               f"dimension {d} being empty")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Input (N, C, L) or (C, L) -> (..., output_size)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError("adaptive_max_pool1d() argument 'output_size' should contain one "
                               f"int (got {len(output_size)})")
        output_size = output_size[0]
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    _check_sizes(input, "adaptive_max_pool1d", 1)
    vals, idx = _pool_last(input, -1, int(output_size))
    return (vals, _tensor(idx)) if return_indices else vals


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Input (N, C, H, W) or (C, H, W) -> (..., oh, ow); an output size of None keeps the
    input's size; indices count in the flattened H * W plane, as torch's."""
    if input.dim() not in (3, 4):
        raise RuntimeError("adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    if len(output_size) != 2:
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    H, W = input.shape[-2], input.shape[-1]
    oh = H if output_size[0] is None else int(output_size[0])
    ow = W if output_size[1] is None else int(output_size[1])
    _check_sizes(input, "adaptive_max_pool2d", 2)
    row_max, cols = _pool_last(input, -1, ow)        # (..., H, ow): max along each row
    vals, rows = _pool_last(row_max, -2, oh)         # (..., oh, ow): max over the rows
    if not return_indices:
        return vals
    col_of_max = np.take_along_axis(cols, rows, axis=-2)
    return vals, _tensor(rows * W + col_of_max)

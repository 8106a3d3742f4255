"""torch.nn.functional's sparse functions: `embedding` (a lookup whose backward is a
scatter-add), `embedding_bag` (a reduction of the looked-up rows per bag) and `one_hot`
(ops/indexing.py)."""
import numpy as np

from ...core.record import apply
from ..._tensor import Tensor
from ...ops.rules import nn as _K
from ...ops.indexing import one_hot  # noqa: F401  (F.one_hot is torch's name)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` (V, D) picked by integer indices of any shape -> (*idx, D).

    Backward is a scatter-add: a row used k times receives the sum of its k gradients.
    The row at `padding_idx` receives no gradient."""
    idx = input._data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {idx.dtype} instead")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    V = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= V:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -V:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = V + padding_idx
    if idx.size:
        # signed indices viewed as unsigned: a negative one is >= V, so ONE reduction
        # checks both ends (~1 us less than min and max on a (32, 3) batch, measured)
        if _K.index_top(idx) >= V:
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm_(weight, idx, float(max_norm), float(norm_type))
    out = apply(_K.embedding, weight, idx,
                padding_idx=-1 if padding_idx is None else int(padding_idx))
    if scale_grad_by_freq and out.requires_grad and idx.size:
        # each row's gradient divided by its count in this batch (torch's
        # scale_grad_by_freq): out + (out * s - the same detached) has out's exact value
        # (x - x = 0) and the gradient g * s
        _, inverse, counts = np.unique(idx.reshape(-1), return_inverse=True,
                                       return_counts=True)
        s = (1.0 / counts[inverse]).astype(out._data.dtype).reshape(idx.shape + (1,))
        scaled = out * Tensor._of(s)
        out = out.detach() + (scaled - scaled.detach())
    # sparse=True: torch's gradient is a sparse COO tensor; tapegrad's is dense (the same
    # values)
    return out


def _embedding_renorm_(weight, idx, max_norm, norm_type):
    """torch's embedding_renorm_: every row looked up whose norm exceeds max_norm is scaled
    in place (no gradient) to max_norm / (norm + 1e-7) times itself."""
    w = weight._data
    rows = np.unique(idx.reshape(-1))
    # torch: the row's norm in its dtype's opmath (float32 for float16), read as a double;
    # the double scale multiplies the row in opmath and rounds once
    op = np.float64 if w.dtype == np.float64 else np.float32
    sel = w[rows].astype(op)
    if norm_type == float("inf"):
        norms = np.abs(sel).max(axis=1) if sel.shape[1] else np.zeros(len(rows), op)
    else:
        norms = (np.abs(sel) ** op(norm_type)).sum(axis=1) ** op(1.0 / norm_type)
    norms = norms.astype(w.dtype).astype(np.float64)
    big = norms > max_norm
    if big.any():
        scale = max_norm / (norms[big] + 1e-7)
        w[rows[big]] = (sel[big] * scale.astype(op)[:, None]).astype(w.dtype)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """The sum, mean or max of the embeddings in each bag: a 2-D input (B, L) is B bags of
    L indices; a 1-D input is cut into bags at `offsets`. Entries equal to `padding_idx`
    are left out (not counted in a mean); an empty bag gives zeros. `per_sample_weights`
    (mode='sum') weighs each entry. Sum and mean are one product of a (bags x entries)
    matrix with the looked-up rows; max is a masked max over each bag's rows."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    psw = per_sample_weights
    if psw is not None and tuple(psw.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(psw.shape)}) is not "
                         f"None, then it must have the same shape as the input "
                         f"({list(input.shape)})")
    idx = np.asarray(input._data if isinstance(input, Tensor) else input)
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets).__name__}")
        B, L = idx.shape
        bounds = np.arange(B + 1) * L
        flat = idx.reshape(-1)
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        off = np.asarray(offsets._data if isinstance(offsets, Tensor) else offsets)
        if off.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        if off.size and off[0] != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{off[0]}")
        if off.size and off[-1] > idx.size:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"({idx.size}), but got offsets[-1] of {off[-1]}")
        bounds = np.append(off, idx.size) if not include_last_offset else off
        flat = idx
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{idx.ndim}")
    V = weight.shape[0]
    if padding_idx is not None:
        padding_idx = padding_idx + V if padding_idx < 0 else padding_idx
    n_bags = len(bounds) - 1
    rows = embedding(Tensor._of(flat.astype(np.int64)), weight, None, max_norm, norm_type,
                     scale_grad_by_freq, sparse)                   # (n, D)
    keep = np.ones(flat.shape, dtype=bool) if padding_idx is None else flat != padding_idx
    member = np.zeros((n_bags, flat.size), dtype=bool)  # member[b, i]: entry i is in bag b
    for b in range(n_bags):
        member[b, bounds[b]:bounds[b + 1]] = True
    member &= keep
    dt = weight._data.dtype
    if mode != "max":
        m = member.astype(dt)
        if mode == "mean":
            m /= np.maximum(member.sum(1, keepdims=True), 1)
        m = Tensor._of(m)
        if per_sample_weights is not None:
            m = m * per_sample_weights.reshape(1, -1)
        return m @ rows
    # max: each bag's rows gathered at the longest bag's length (short bags padded with
    # entry 0, masked to -inf), the max over them; an empty bag is 0 with no gradient
    length = max(int(member.sum(1).max(initial=0)), 1)
    pos = np.zeros((n_bags, length), dtype=np.int64)
    valid = np.zeros((n_bags, length), dtype=bool)
    for b in range(n_bags):
        where = np.flatnonzero(member[b])
        pos[b, :where.size], valid[b, :where.size] = where, True
    D = rows.shape[1]
    if flat.size == 0:
        return Tensor._of(np.zeros((n_bags, D), dtype=dt))
    g = rows.index_select(0, Tensor._of(pos.reshape(-1))).reshape(n_bags, length, D)
    g = g.masked_fill(Tensor._of(~valid[:, :, None]), float("-inf"))
    out = g.max(dim=1)[0]
    return out.masked_fill(Tensor._of(~valid.any(1)[:, None]), 0.0)

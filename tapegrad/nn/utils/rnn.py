"""`tg.nn.utils.rnn`: variable-length sequences for the recurrent layers (PyTorch's names).

A batch of sequences sorted by decreasing length is "packed" time-major: the rows of
`data` are step 0 of every sequence, then step 1 of every sequence still running, ...;
`batch_sizes[t]` is how many sequences are still running at step t. `sorted_indices`
says which original batch entry each sorted column came from (None: already sorted).

Every function here is differentiable in the data: the moves are one `index_select`
(whose backward is one scatter), not one slice per step.
"""
import builtins
from collections import namedtuple

import numpy as np

from ...ops import creation as _c
from .._public_ops import cat, stack
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """Holds `data` (sum(lengths), *) and `batch_sizes` (int64, one per step) of a packed
    batch. Made by `pack_padded_sequence` / `pack_sequence`; RNN modules accept it."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PyTorch's legacy form PackedSequence((data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert `data` (dtype); the index tensors are kept. Returns self if unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def double(self):
        return self.to(np.float64)

    def float(self):
        return self.to(np.float32)

    def half(self):
        return self.to(np.float16)

    def cpu(self):
        return self

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a 1-D index permutation (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation._data if isinstance(permutation, Tensor) else permutation)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=p.dtype)
    return _c.tensor(inv)


def _lengths_list(lengths, name):
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    try:
        out = [int(n) for n in lengths]
    except TypeError:
        raise TypeError(f"{name}: lengths must be a 1-D Tensor or a list of ints, "
                        f"got {type(lengths).__name__}") from None
    return out


def _batch_sizes(lengths):
    """batch_sizes[t] = how many of the (decreasing) lengths exceed t."""
    return [builtins.sum(1 for n in lengths if n > t) for t in range(lengths[0])] if lengths else []


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded (T, B, *) batch (B, T, * if batch_first) of sequences of `lengths`.

    enforce_sorted=True requires decreasing lengths; otherwise the batch is sorted (a
    stable sort, so equal lengths keep their order) and `sorted_indices` records it."""
    lengths = _lengths_list(lengths, "pack_padded_sequence")
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must have at least 2 dimensions "
                         f"(T, B, *), got shape {tuple(input.shape)}")
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.shape[0], input.shape[1]
    if len(lengths) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={B})")
    if builtins.any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           f"element in 'lengths' that is <= 0 (lengths={lengths})")
    sorted_indices = None
    if enforce_sorted:
        if builtins.any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                f"pack_sequence to sidestep this requirement (got lengths={lengths}).")
    else:
        order = sorted(range(B), key=lambda b: -lengths[b])
        lengths = [lengths[b] for b in order]
        sorted_indices = _c.tensor(np.array(order, dtype=np.int64))
        input = input.index_select(1, sorted_indices)
    if lengths[0] > T:
        raise RuntimeError(f"pack_padded_sequence: the longest length {lengths[0]} exceeds "
                           f"the padded length {T} of the input (shape {tuple(input.shape)})")
    sizes = _batch_sizes(lengths)
    # Row t*B + b of the flattened (T*B, *) input is step t of sequence b.
    rows = np.concatenate([np.arange(bs) + t * B for t, bs in enumerate(sizes)])
    flat = input.reshape(T * B, *input.shape[2:])
    data = flat.index_select(0, _c.tensor(rows.astype(np.int64)))
    return PackedSequence(data, _c.tensor(np.array(sizes, dtype=np.int64)), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of `pack_padded_sequence`: (padded (T, B, *) or (B, T, *), lengths int64),
    with the batch back in its original order."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got "
                        f"{type(sequence).__name__}")
    data = sequence.data
    sizes = [int(s) for s in sequence.batch_sizes.tolist()]
    T = len(sizes)
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {T}")
        T = total_length
    B = sizes[0]
    N = data.shape[0]
    # Gather every (t, b) slot from data, or from one extra padding row (index N).
    src = np.full((T, B), N, dtype=np.int64)
    offset = 0
    for t, bs in enumerate(sizes):
        src[t, :bs] = np.arange(offset, offset + bs)
        offset += bs
    pad_row = _c.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    padded = cat([data, pad_row]).index_select(0, _c.tensor(src.reshape(-1)))
    padded = padded.reshape(T, B, *data.shape[1:])
    lengths = np.array([builtins.sum(1 for bs in sizes if bs > b) for b in range(B)],
                       dtype=np.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _c.tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shape (L_i, *) into (T, B, *) (B, T, * if batch_first), padding
    each to the longest length T with `padding_value` on `padding_side`."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}") from None
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence: sequence {i} is a {type(s).__name__}, expected a "
                            "Tensor")
        if s.ndim == 0 or tuple(s.shape[1:]) != tuple(sequences[0].shape[1:]):
            raise RuntimeError(
                f"pad_sequence: every sequence must have shape (L, *) with the same trailing "
                f"dimensions, but sequence 0 has shape {tuple(sequences[0].shape)} and "
                f"sequence {i} has shape {tuple(s.shape)}")
    T = builtins.max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        short = T - s.shape[0]
        if short:
            fill = _c.full((short, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of tensors of shape (length_i, *)."""
    lengths = _lengths_list(lengths, "unpad_sequence")
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """`pack_padded_sequence(pad_sequence(sequences), lengths)` in one call."""
    sequences = list(sequences)
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Inverse of `pack_sequence`: the list of tensors, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

"""Datasets: `Dataset`, `IterableDataset`, `TensorDataset`, `Subset`, `ConcatDataset`,
`ChainDataset`, `random_split`.

A map-style dataset is anything with `__getitem__(i)` and `__len__()`. Datasets that can
return a whole batch at once define `_get_batch(indices)` (indices: an int64 array) and
return the already-collated batch; the DataLoader uses it, which turns one Python call
per sample into one NumPy fancy-index per batch (this is what makes MNIST epochs fast).
An iterable-style dataset (`IterableDataset`) defines `__iter__` instead; with worker
processes each worker iterates its own copy, and `get_worker_info()` lets it shard.
"""
import math

import numpy as np

from ...random import default_generator
from ..._tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "ChainDataset", "random_split"]


class Dataset:
    """Base class of map-style datasets: subclasses define `__getitem__` and `__len__`."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of iterable-style datasets: subclasses define `__iter__`.

    The DataLoader takes samples in the order `__iter__` yields them (no sampler, no
    shuffle). With `num_workers > 0` every worker runs its own iterator over a copy of the
    dataset; split the work with `get_worker_info()` or each sample comes once per worker."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable datasets one after the other (torch's ChainDataset)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class TensorDataset(Dataset):
    """Samples are slices along dim 0 of the given tensors: `ds[i] = (t0[i], t1[i], ...)`."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        if any(t.ndim == 0 or t.shape[0] != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        # NOTE: uses Tensor indexing when the core has it (keeps autograd history);
        # otherwise slices the array.
        if hasattr(Tensor, "__getitem__"):
            return tuple(t[index] for t in self.tensors)
        return tuple(Tensor._of(t._data[index]) for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _get_batch(self, indices):
        # One fancy-index per tensor; the result is a fresh array, like torch.stack.
        return [Tensor._of(t._data[indices]) for t in self.tensors]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return [self.dataset[self.indices[i]] for i in idx]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # torch's batched-fetch hook: the DataLoader calls it with a batch's indices.
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)

    def _batchable(self):
        return hasattr(self.dataset, "_get_batch") and (
            not hasattr(self.dataset, "_batchable") or self.dataset._batchable())

    def _get_batch(self, indices):
        return self.dataset._get_batch(np.asarray(self.indices, dtype=np.int64)[indices])


class ConcatDataset(Dataset):
    """Several datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self):
        return int(self.cumulative_sizes[-1]) if self.cumulative_sizes else 0

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = int(np.searchsorted(self.cumulative_sizes, idx, side="right"))
        start = 0 if d == 0 else int(self.cumulative_sizes[d - 1])
        return self.datasets[d][idx - start]


def random_split(dataset, lengths, generator=default_generator):
    """Split `dataset` into non-overlapping random `Subset`s of the given lengths.

    `lengths` may be integers summing to len(dataset) or fractions summing to 1; with
    fractions each part gets floor(frac * n) and the remainder is handed out one by one
    round-robin from the first part (PyTorch's rule). The permutation comes from
    `generator` (a tapegrad.Generator), so a seeded generator gives the same split."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(n * frac)))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = (generator or default_generator).rng.permutation(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out

"""Samplers: which dataset indices a DataLoader visits, and in what order.

The names, arguments, errors and draw structure are torch.utils.data's: RandomSampler
draws `randperm(n)` per pass (without replacement) or `randint` in chunks of 32 (with
replacement), SubsetRandomSampler one `randperm`, WeightedRandomSampler `multinomial`.
The draws use tapegrad's `tg.randperm` / `tg.randint` / `tg.multinomial` with a
`tapegrad.Generator`, so a seeded generator repeats its stream but the numbers are not
PyTorch's (tapegrad's RNG is NumPy's PCG64).

Every sampler is lazy: `RandomSampler(ds, replacement=True, num_samples=int(1e10))`
(makemore, minGPT) yields indices on demand and never builds a list.
"""
import itertools
import numbers

from ...ops.creation import as_tensor
from ...ops.random import randint, randperm
from ...dtypes import float64
from ...random import Generator, default_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

_CHUNK = 32  # RandomSampler(replacement=True) draws this many indices at a time, as torch


def _is_pos_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool) and x > 0


def _fresh_generator():
    """A new Generator seeded from the global one: what torch does when no generator is
    given, so `tg.manual_seed` makes unseeded samplers repeatable."""
    seed = int(randint(0, 2 ** 63 - 1, (), generator=default_generator).item())
    return Generator().manual_seed(seed)


class Sampler:
    """Base class of samplers: subclasses define `__iter__` (and usually `__len__`)."""

    def __init__(self, data_source=None):
        # torch accepts (and ignores) a data_source argument here, for old subclasses.
        pass

    def __iter__(self):
        raise NotImplementedError("Subclasses of Sampler should implement __iter__.")


class SequentialSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into `data_source`: shuffled passes, or draws with replacement.

    Without replacement each pass is a fresh permutation; `num_samples` larger than the
    dataset takes several passes (the last cut short). With replacement `num_samples`
    independent uniform draws are made, 32 at a time, so a huge `num_samples` is free."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not _is_pos_int(self.num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # Read each time: the dataset may grow or shrink after the sampler is made.
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if n == 0:
            raise ValueError(f"RandomSampler: cannot draw num_samples={self.num_samples} "
                             f"indices from an empty data_source")
        g = self.generator if self.generator is not None else _fresh_generator()
        total = int(self.num_samples)
        if self.replacement:
            for _ in range(total // _CHUNK):
                yield from randint(0, n, (_CHUNK,), generator=g).tolist()
            yield from randint(0, n, (total % _CHUNK,), generator=g).tolist()
        else:
            for _ in range(total // n):
                yield from randperm(n, generator=g).tolist()
            yield from randperm(n, generator=g).tolist()[:total % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given `indices`, in a random order (one permutation per pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices into range(len(weights)), index i with probability
    proportional to weights[i] (weights need not sum to 1)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _is_pos_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = as_tensor(weights, dtype=float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        if not self.replacement:
            yield from self.weights.multinomial(self.num_samples, False,
                                                generator=self.generator).tolist()
            return
        # With replacement the draws are independent, so drawing in chunks gives the same
        # distribution while keeping a huge num_samples lazy (torch draws all at once).
        left = int(self.num_samples)
        while left > 0:
            k = min(left, 1 << 16)
            yield from self.weights.multinomial(k, True, generator=self.generator).tolist()
            left -= k

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of `sampler` into lists of `batch_size`; `drop_last` drops a
    short final list. `sampler` may be any iterable of indices."""

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_pos_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler):
    """None forever: the DataLoader's index stream for an IterableDataset (the dataset
    decides what comes next; the index only counts batches)."""

    def __iter__(self):
        while True:
            yield None


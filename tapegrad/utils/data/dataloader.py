"""DataLoader: batches from a dataset, optionally shuffled by a seedable generator.

    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True,
                        generator=tg.Generator().manual_seed(0))
    for xb, yb in loader: ...           # xb: (64, ...) Tensor, yb: (64,) Tensor

Each epoch draws a fresh permutation of range(len(dataset)) from `generator` (or from
tapegrad's global generator, so `tg.manual_seed` makes runs repeatable). Batches are cut
from it in order; `drop_last` drops a short final batch. Samples are merged by
`default_collate` (PyTorch's rules), unless the dataset can fetch a whole batch at once
(`_get_batch`, e.g. TensorDataset), which skips the per-sample Python loop. Single
process only: `num_workers` must be 0.
"""
import collections.abc
import math
import numbers

import numpy as np

from ...random import default_generator
from ...tensor import Tensor

__all__ = ["DataLoader", "default_collate"]


def default_collate(batch):
    """Merge a list of samples into a batch (PyTorch's `default_collate` rules).

    Tensors / ndarrays -> stacked Tensor (new leading dim); Python ints -> int64 tensor;
    floats -> float64 tensor; bools -> bool tensor; NumPy scalars keep their dtype;
    strings -> list; dicts -> dict of collated values; tuples -> list of collated
    fields (PyTorch returns a list too); other sequences -> the same type."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        shapes = {tuple(b.shape) for b in batch}
        if len(shapes) > 1:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{sorted(shapes)} in the batch")
        return Tensor(np.stack([b.data for b in batch]))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind not in "biuf":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found array of dtype {elem.dtype}")
        return Tensor(np.stack(batch))
    if isinstance(elem, (np.bool_, np.number)):
        return Tensor(np.array(batch))
    if isinstance(elem, bool):
        return Tensor(np.array(batch, dtype=np.bool_))
    if isinstance(elem, numbers.Integral):
        return Tensor(np.array(batch, dtype=np.int64))
    if isinstance(elem, float):
        return Tensor(np.array(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


class DataLoader:
    """Iterate over `dataset` in batches.

    Args: batch_size (None: yield single samples, uncollated), shuffle, sampler (an
    iterable of indices, instead of shuffle), batch_sampler (an iterable of index lists),
    num_workers (must be 0), collate_fn, drop_last, generator (tapegrad.Generator)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, generator=None, **kwargs):
        if num_workers != 0:
            raise ValueError("tapegrad's DataLoader runs in one process: num_workers must be 0")
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                       or isinstance(batch_size, bool) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        self.dataset = dataset
        self.batch_size = None if batch_sampler is not None else batch_size
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = 0
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.generator = generator

    def _indices(self):
        if self.sampler is not None:
            return np.asarray(list(self.sampler), dtype=np.int64)
        n = len(self.dataset)
        if self.shuffle:
            return (self.generator or default_generator).rng.permutation(n)
        return np.arange(n)

    def _batches(self):
        if self.batch_sampler is not None:
            for b in self.batch_sampler:
                yield np.asarray(list(b), dtype=np.int64)
            return
        idx = self._indices()
        bs = self.batch_size
        stop = (len(idx) // bs) * bs if self.drop_last else len(idx)
        for start in range(0, stop, bs):
            yield idx[start:start + bs]

    def _fast(self):
        ds = self.dataset
        if self.collate_fn not in (None, default_collate) or not hasattr(ds, "_get_batch"):
            return False
        return ds._batchable() if hasattr(ds, "_batchable") else True

    def __iter__(self):
        if self.batch_size is None and self.batch_sampler is None:
            # Automatic batching off: one sample at a time, passed through collate_fn.
            for i in self._indices().tolist():
                sample = self.dataset[i]
                yield self.collate_fn(sample) if self.collate_fn is not None else sample
            return
        fast = self._fast()
        collate = self.collate_fn or default_collate
        for b in self._batches():
            if fast:
                yield self.dataset._get_batch(b)
            else:
                yield collate([self.dataset[i] for i in b.tolist()])

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

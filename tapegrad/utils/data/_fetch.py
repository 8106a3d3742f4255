"""Fetchers: turn one index (or one list of indices) from the sampler into one batch.

The same fetcher runs in the main process (num_workers=0) and inside each worker, so both
paths build batches identically. A map-style dataset is read per index, through
`__getitems__(indices)` when it has one (torch's batched hook), or, for the default
collation, through `_get_batch(indices)` (tapegrad's fast path: the dataset returns the
collated batch, one fancy-index instead of a Python loop). An iterable dataset is read
from its own iterator; the index only says "one more batch".
"""
import numpy as np

__all__ = ["MapFetcher", "IterableFetcher", "make_fetcher"]


class MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last, fast):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.fast = fast

    def fetch(self, index):
        ds = self.dataset
        if not self.auto_collation:
            return self.collate_fn(ds[index])
        if self.fast:
            return ds._get_batch(np.asarray(index, dtype=np.int64))
        getitems = getattr(ds, "__getitems__", None)
        samples = getitems(index) if callable(getitems) else [ds[i] for i in index]
        return self.collate_fn(samples)


class IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, index):
        """The next batch; raises StopIteration when the dataset's iterator is done."""
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        samples = []
        for _ in index:  # index is [None] * batch_size
            try:
                samples.append(next(self.iterator))
            except StopIteration:
                break
        if not samples or (self.drop_last and len(samples) < len(index)):
            raise StopIteration
        return self.collate_fn(samples)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last, fast):
    if iterable:
        return IterableFetcher(dataset, auto_collation, collate_fn, drop_last)
    return MapFetcher(dataset, auto_collation, collate_fn, drop_last, fast)

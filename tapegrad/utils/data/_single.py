"""The DataLoader's iterator base and its single-process (num_workers=0) iterator.

Creating an iterator draws a 63-bit `base_seed` from the loader's generator (or the global
one) before any index is drawn, for every num_workers: workers seed themselves from it,
and because the single-process path draws it too, a seeded generator yields the same
index stream, hence the same batches, whatever num_workers is (torch draws it too).
"""
import warnings

from ...ops.random import randint
from ...random import default_generator
from ._fetch import make_fetcher

__all__ = ["BaseIter", "SingleProcessIter"]


class BaseIter:
    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._fast = loader._fast()
        self._sampler_iter = iter(self._index_sampler)  # lazy: samplers are generators
        self._base_seed = self._draw_seed(loader)
        self._num_yielded = 0

    @staticmethod
    def _draw_seed(loader):
        g = loader.generator if loader.generator is not None else default_generator
        return int(randint(0, 2 ** 63 - 1, (), generator=g).item())

    def _reset(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        claimed = self._loader._IterableDataset_len_called
        if self._iterable and claimed is not None and self._num_yielded > claimed:
            # torch's warning: len(loader) was believed, but the dataset gave more.
            hint = (" For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker (see "
                    "get_worker_info())." if self._loader.num_workers > 0 else "")
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{claimed} (when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched.{hint}", stacklevel=2)
        return data

    def _next_data(self):
        raise NotImplementedError

    def __len__(self):
        return len(self._loader)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class SingleProcessIter(BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        if loader.timeout != 0:
            raise AssertionError(f"DataLoader: timeout={loader.timeout} needs worker processes "
                                 f"(num_workers > 0); with num_workers=0 it must be 0")
        self._fetcher = make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last, self._fast)

    def _next_data(self):
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)

"""DataLoader: batches from a dataset, in one process or with worker processes.

    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True,
                        generator=tg.Generator().manual_seed(0), num_workers=2)
    for xb, yb in loader: ...           # xb: (64, ...) Tensor, yb: (64,) Tensor

torch.utils.data.DataLoader's arguments, defaults and argument errors. The index stream is
sampler -> BatchSampler (or the given batch_sampler), drawn lazily; `shuffle=True` means
`RandomSampler(dataset, generator=generator)`, so each epoch is a fresh permutation from
`generator` (or from tapegrad's global generator: `tg.manual_seed` makes runs repeatable).
Samples are merged by `default_collate` (PyTorch's rules), unless the dataset can fetch a
whole batch at once (`_get_batch`, e.g. TensorDataset), which skips the per-sample loop.
With num_workers > 0 batches are built in worker processes (see _multiprocess.py) and come
out identical and in the same order. pin_memory is accepted and does nothing (CPU only).
"""
import collections.abc
import math
import multiprocessing
import numbers
import os
import warnings

import numpy as np

from ..._tensor import Tensor
from ._multiprocess import MultiProcessIter
from ._single import SingleProcessIter
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


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
        return Tensor._of(np.stack([b._data for b in batch]))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind not in "biuf":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found array of dtype {elem.dtype}")
        return Tensor._of(np.stack(batch))
    if isinstance(elem, (np.bool_, np.number)):
        return Tensor._of(np.array(batch))
    if isinstance(elem, bool):
        return Tensor._of(np.array(batch, dtype=np.bool_))
    if isinstance(elem, numbers.Integral):
        return Tensor._of(np.array(batch, dtype=np.int64))
    if isinstance(elem, float):
        return Tensor._of(np.array(batch, dtype=np.float64))
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


def default_convert(data):
    """What batch_size=None applies to each sample (PyTorch's `default_convert`): NumPy
    arrays and scalars become Tensors, containers are converted element-wise (tuples
    become lists, as in torch), everything else is returned as it is."""
    if isinstance(data, np.ndarray):
        return Tensor._of(data) if data.dtype.kind in "biufc" else data
    if isinstance(data, (np.bool_, np.number)):
        return Tensor._of(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _suggested_max_workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


class DataLoader:
    """Iterate over `dataset` in batches (torch.utils.data.DataLoader's signature).

    batch_size (None: no batching, samples go through collate_fn one by one), shuffle,
    sampler (iterable of indices; excludes shuffle), batch_sampler (iterable of index lists;
    excludes batch_size, shuffle, sampler, drop_last), num_workers (worker processes),
    collate_fn, pin_memory (no-op), drop_last, timeout (seconds to wait for a worker's
    batch), worker_init_fn(worker_id), multiprocessing_context, generator
    (tapegrad.Generator); keyword-only prefetch_factor (batches in flight per worker,
    default 2), persistent_workers (keep workers between epochs), pin_memory_device,
    in_order (False: hand out batches as workers finish them)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             f"to disable multiprocessing (got num_workers={num_workers!r})")
        if timeout < 0:
            raise ValueError(f"timeout option should be non-negative (got timeout={timeout})")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. let num_workers > 0 to enable "
                             "multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError(f"prefetch_factor option should be non-negative (got "
                             f"prefetch_factor={prefetch_factor})")
        elif prefetch_factor == 0:
            # torch fails later, at iter(); no batch would ever be requested.
            raise ValueError("prefetch_factor option should be positive (got "
                             "prefetch_factor=0): each worker needs at least one batch in flight")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if batch_size is not None and (not isinstance(batch_size, numbers.Integral)
                                       or isinstance(batch_size, bool) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.dataset = dataset
        self.num_workers = int(num_workers)
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            # The dataset orders its own samples: no sampler, no shuffling.
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._IterableDataset_len_called = None  # set by len(); iterators warn past it
        self._initialized = True
        self._check_worker_number()

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={ctx}")
        self._mp_context = ctx

    def __setattr__(self, attr, val):
        # The index pipeline is built in __init__; changing its inputs later would be
        # silently ignored, so torch forbids it.
        if attr in _FROZEN and self.__dict__.get("_initialized"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _fast(self):
        ds = self.dataset
        if (self._iterable or not self._auto_collation or self.collate_fn is not default_collate
                or not hasattr(ds, "_get_batch")):
            return False
        return ds._batchable() if hasattr(ds, "_batchable") else True

    def _check_worker_number(self):
        cpus = _suggested_max_workers()
        if self.num_workers > 0 and cpus and self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. Our suggested max number of worker in current system is "
                          f"{cpus}, which is smaller than what this DataLoader is going to "
                          f"create. Please be aware that excessive worker creation might get "
                          f"DataLoader running slow or even freeze, lower the worker number to "
                          f"avoid potential slowness/freeze if necessary.", stacklevel=3)

    def _get_iterator(self):
        if self.pin_memory:
            # torch warns when an iterator starts (each epoch), not when the loader is made
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        if self.num_workers == 0:
            return SingleProcessIter(self)
        return MultiProcessIter(self)

    def __iter__(self):
        # Persistent workers live in one iterator reused for every epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable:
            n = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

"""The DataLoader worker process: its loop, its identity (`get_worker_info`), its errors.

A worker seeds Python's `random`, tapegrad's global generator and NumPy's legacy global
generator with `base_seed + worker_id` (torch's rule: every worker, and every epoch of a
non-persistent loader, gets different random augmentations), runs `worker_init_fn`, then
answers `(task_idx, index)` requests from its index queue with `(task_idx, bytes)` on the
shared result queue until it is sent None. Anything it raises is sent back as an
`ExceptionWrapper` carrying the traceback text, re-raised by the main process.
"""
import os
import queue
import random
import sys
import traceback

import numpy as np

from ...random import manual_seed
from . import _transport
from ._fetch import make_fetcher

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

# How often (seconds) a blocked main process checks that its workers are alive, and how
# long shutdown waits for them before terminating them.
STATUS_CHECK_INTERVAL = 1.0
# How often an idle worker checks that its parent is alive and that shutdown has begun:
# the None sent at shutdown can be lost when the iterator dies in a garbage cycle (the
# queues' own finalizers close their pipes first), so the done event is the backstop.
WORKER_POLL_INTERVAL = 0.2

_worker_info = None


class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: id, num_workers, seed, dataset
    (the worker's own copy). Read-only, as torch's."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """In a DataLoader worker: its WorkerInfo (id, num_workers, seed, dataset). In the
    main process: None. An IterableDataset uses it to give each worker its own share."""
    return _worker_info


class KeyErrorMessage(str):
    """A str whose repr is itself: KeyError reprs its argument, which would print the
    traceback text as one escaped line."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception (type + formatted traceback) that can cross a process boundary."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            # An exception class whose constructor wants other arguments.
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            # Drop the frame's reference to its own exception: otherwise exception ->
            # traceback -> this frame -> exception is a cycle that keeps the iterator
            # (and its workers) alive until the garbage collector runs.
            del exc


class ResumeIteration:
    """Main -> persistent worker: a new epoch starts (rebuild the fetcher)."""


class IterableDatasetStopIteration:
    """Worker -> main: my copy of the IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _seed_worker(base_seed, worker_id):
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    # NumPy's legacy global RNG takes 32-bit words; derive them from both numbers so
    # workers (and epochs) do not share NumPy streams.
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _send(data_queue, idx, data, worker_id):
    try:
        blob = _transport.dumps(data)
    except Exception:
        if isinstance(data, ExceptionWrapper):
            # The exception class itself does not pickle (e.g. defined in a function):
            # keep its traceback text, re-raise it as a RuntimeError.
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(
                where=f"in DataLoader worker process {worker_id} while sending a batch")
        blob = _transport.dumps(data)
    data_queue.put((idx, blob))


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, fast, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    parent = os.getppid()
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last,
                                   fast)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent:  # the parent died: stop instead of lingering
            try:
                r = index_queue.get(timeout=WORKER_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if r is None:
                break
            if isinstance(r, ResumeIteration):
                iteration_end = False
                try:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn,
                                           drop_last, fast)
                except Exception:
                    init_exception = ExceptionWrapper(
                        where=f"in DataLoader worker process {worker_id}")
                data_queue.put((r, None))
                continue
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            _send(data_queue, idx, data, worker_id)
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # the main process gets the same Ctrl-C and reports it
    if done_event.is_set():
        # Unread batches may still sit in the queue's pipe: do not wait to flush them.
        data_queue.cancel_join_thread()
        data_queue.close()

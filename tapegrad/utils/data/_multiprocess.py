"""The DataLoader's multi-process iterator (num_workers > 0).

Task i (the i-th index batch of the sampler) goes to worker i mod num_workers, through that
worker's own index queue; at most prefetch_factor * num_workers tasks are in flight. The
workers answer on one shared result queue in whatever order they finish; batches are
handed out in task order (unless in_order=False), so the stream equals num_workers=0's.

Start method: 'fork' where the platform has it (Linux). A forked worker inherits the
dataset, collate_fn and worker_init_fn as they are, so lambdas, local classes and big
in-memory datasets need no pickling and start instantly (no re-import of tapegrad). Under
'spawn' (macOS/Windows default, or multiprocessing_context='spawn') they must pickle.
(Python 3.12+ warns when forking a process that runs threads; pass
multiprocessing_context='forkserver' or 'spawn' if that matters to you.)
Workers are daemonic, so an interpreter exit ends them even if an iterator was abandoned;
a dropped iterator shuts its workers down when it is garbage-collected; a worker whose
parent died exits by itself.
"""
import itertools
import multiprocessing
import queue
import signal
import time

from . import _transport
from ._single import BaseIter
from ._worker import (STATUS_CHECK_INTERVAL, ExceptionWrapper, IterableDatasetStopIteration,
                      ResumeIteration, worker_loop)

__all__ = ["MultiProcessIter", "default_context"]


def default_context():
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class MultiProcessIter(BaseIter):
    _shutdown = True  # nothing to shut down until __init__ has made the queues

    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context or default_context()
        self._done_event = ctx.Event()
        self._data_queue = ctx.Queue()
        self._receiver = _transport.Receiver(self._data_queue)
        self._index_queues, self._workers = [], []
        self._shutdown = False
        try:
            for wid in range(self._num_workers):
                iq = ctx.Queue()
                # A dead worker never drains its queue: do not block exit flushing it.
                iq.cancel_join_thread()
                w = ctx.Process(target=worker_loop, daemon=True, args=(
                    self._iterable, self._dataset, iq, self._data_queue, self._done_event,
                    self._auto_collation, self._collate_fn, self._drop_last, self._fast,
                    self._base_seed, loader.worker_init_fn, wid, self._num_workers))
                self._index_queues.append(iq)
                w.start()  # under 'spawn' this pickles the dataset and may fail
                self._workers.append(w)
            self._reset(loader, first_iter=True)
        except BaseException:
            self._shutdown_workers()
            raise

    # ---- epoch bookkeeping --------------------------------------------------------
    def _reset(self, loader, first_iter=False):
        super()._reset(loader)
        if not first_iter:
            # A persistent loader's new epoch: draw the seed a fresh iterator would draw,
            # so the sampler's stream stays that of num_workers=0 (the workers keep their
            # RNG state, as torch's persistent workers do).
            self._draw_seed(loader)
        self._send_idx = 0            # next task to send
        self._rcvd_idx = 0            # next task to hand out
        self._task_info = {}          # task -> (worker,) while pending, (worker, data) if early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for iq in self._index_queues:
                iq.put(ResumeIteration())
            pending = self._num_workers
            while pending:
                idx, _ = self._get_data()
                if isinstance(idx, ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        max_tasks = self._prefetch_factor * self._num_workers
        for _ in range(self._num_workers):  # the next worker still working this epoch
            wid = next(self._worker_cycle)
            if self._workers_status[wid] and (
                    self._in_order
                    or self._workers_num_tasks[wid] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._workers_num_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    # ---- receiving ----------------------------------------------------------------
    def _try_get_data(self, timeout):
        try:
            return True, self._receiver.get(timeout)
        except queue.Empty:
            self._raise_if_a_worker_died()
            return False, None

    def _raise_if_a_worker_died(self):
        # A dead worker may have left half a message in the pipe (killed while sending):
        # nothing more can be read after it, so any death ends the iterator.
        dead = [(wid, w) for wid, w in enumerate(self._workers)
                if self._workers_status[wid] and not w.is_alive()]
        if not dead:
            return
        for wid, _ in dead:
            self._mark_worker_unavailable(wid)
        signalled = [w for _, w in dead if w.exitcode is not None and w.exitcode < 0]
        if signalled:
            w = signalled[0]
            try:
                name = signal.strsignal(-w.exitcode) or f"signal {-w.exitcode}"
            except ValueError:
                name = f"signal {-w.exitcode}"
            # torch's words (its SIGCHLD handler's), then what to do about it
            hint = (" It is possible that dataloader's workers are out of shared memory. "
                    "Please try to raise your shared memory limit."
                    if -w.exitcode == signal.SIGBUS else "")
            raise RuntimeError(f"DataLoader worker (pid {w.pid}) is killed by signal: "
                               f"{name}.{hint}") from None
        desc = ", ".join(f"{w.pid} (exit code {w.exitcode})" for _, w in dead)
        raise RuntimeError(f"DataLoader worker (pid(s) {desc}) exited unexpectedly") from None

    def _get_data(self):
        # Wait in short slices, checking the workers between them, so a dead worker is
        # reported within STATUS_CHECK_INTERVAL even under a long (or no) timeout.
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                ok, data = self._try_get_data(min(left, STATUS_CHECK_INTERVAL))
                if ok:
                    return data
        while True:
            ok, data = self._try_get_data(STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            # Skip tasks whose worker ran out of IterableDataset before doing them.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                wid, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process(data, wid)
            if self._shutdown:
                raise RuntimeError("DataLoader iterator used after its workers shut down")
            idx, blob = self._get_data()
            if isinstance(idx, ResumeIteration):
                continue  # a late acknowledgement; nothing to hand out
            self._tasks_outstanding -= 1
            data = _transport.loads(blob)
            if isinstance(data, IterableDatasetStopIteration):
                if self._persistent:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                wid = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process(data, wid)

    def _process(self, data, wid):
        self._workers_num_tasks[wid] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # ---- shutting down ------------------------------------------------------------
    def _mark_worker_unavailable(self, wid):
        # Tell that worker to exit; it is joined in _shutdown_workers.
        self._index_queues[wid].put(None)
        self._workers_status[wid] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for wid, iq in enumerate(self._index_queues):
                # Workers already told to stop get a second None: harmless.
                iq.put(None)
            deadline = time.monotonic() + STATUS_CHECK_INTERVAL
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for w in self._workers:
                if w.is_alive():  # stuck in user code (a slow __getitem__)
                    w.terminate()
                    w.join()
            for iq in self._index_queues:
                iq.close()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()
        except Exception:  # during interpreter shutdown modules may be half gone
            pass

    def __del__(self):
        self._shutdown_workers()

"""torch.multiprocessing.spawn / start_processes: run fn(i, *args) in nprocs processes.

The processes are multiprocessing's; this adds torch's contract around them: a child's
exception is written (as its formatted traceback) to a one-shot error file, and the
parent's join raises ProcessRaisedException carrying it (or ProcessExitedException for a
non-zero exit or a signal), after terminating the other processes. Same names, messages
and attributes as torch 2.x.
"""
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

# torch's opt-in to start 'forkserver' processes from threads; here they start one by one
ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed because its code raised an exception."""


class ProcessExitedException(ProcessException):
    """A process failed because of a signal or a non-zero exit code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _die_with_parent():
    # torch's prctl(PR_SET_PDEATHSIG, SIGINT): a non-daemonic child whose parent died
    # gets SIGINT instead of running on (Linux only; elsewhere nothing)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))
        except (OSError, AttributeError):
            pass


def _wrap(fn, i, args, error_file):
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # SIGINT from the parent's clean-up: nothing to report
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_procs_with_timeout(self, timeout):
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Wait for the processes (up to `timeout`). True when all have exited cleanly,
        False while some still run; if one failed, terminate the rest and raise its error."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()
        failed = self.processes[error_index]
        path = self.error_files[error_index]
        if not os.access(path, os.R_OK):  # no error file: it died, it did not raise
            code = failed.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {error_index:d} terminated with signal {name}",
                    error_index=error_index, error_pid=failed.pid, exit_code=code,
                    signal_name=name)
            raise ProcessExitedException(
                f"process {error_index:d} terminated with exit code {code:d}",
                error_index=error_index, error_pid=failed.pid, exit_code=code)
        with open(path, "rb") as fh:
            original_trace = pickle.load(fh)
        os.unlink(path)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n"
        msg += original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """`spawn` with any start method ('spawn', 'fork', 'forkserver')."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        # a free path for the child's traceback: the file existing means it raised
        fd, path = tempfile.mkstemp(prefix="tapegrad-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run `fn(i, *args)` for i in range(nprocs), each in a new 'spawn' process; `fn` must
    be importable (defined at a module's top level). join=True waits and raises the
    first failure (ProcessRaisedException with the child's traceback); join=False returns
    the ProcessContext."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")

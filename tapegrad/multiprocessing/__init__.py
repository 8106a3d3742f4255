"""tg.multiprocessing (torch.multiprocessing): Python's multiprocessing, with shared tensors.

Everything of `multiprocessing` is re-exported as it is (Process, Queue, Pool, Manager,
set_start_method, get_context, ...). Importing this package (tapegrad's __init__ does)
registers reductions.py's tensor pickling, so a tensor moved to shared memory with
`share_memory_()` / `Module.share_memory()` reaches other processes as the same memory:
Hogwild training (pytorch/examples' mnist_hogwild, A3C) updates one model from several
processes. `spawn` / `start_processes` are torch's launchers (spawn.py).
"""
import multiprocessing
import sys

from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext, ProcessExitedException, ProcessRaisedException,
                    SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException", "SpawnContext"]
__all__ += multiprocessing.__all__

# torch's names and defaults. Either way a shared tensor travels as the descriptor of
# its anonymous block (core/shared_memory.py): 'file_system' is accepted and reported,
# but it does not switch to named shared-memory files.
if sys.platform in ("darwin", "win32"):
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (one of get_all_sharing_strategies())."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, "
                             f"expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The set of sharing strategies supported on this system."""
    return _all_sharing_strategies


init_reductions()

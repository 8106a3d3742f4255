"""Grad modes: whether operations record their recipe for backward, per thread.

`no_grad`, `enable_grad` and `set_grad_enabled` work as context managers and as
decorators, like PyTorch's; the flag is `state.grad_enabled` (state.py), so a thread's
`no_grad` never switches recording off in another thread.
"""
import functools
import sys

from .cuts import no_grad_block
from .node import _PKG_DIR
from .state import state


def is_grad_enabled():
    return state.grad_enabled


def _user_block(f, target):
    """A user's block that turns recording off, found at its `with` line (frame `f`),
    for why_no_grad; None when recording is on or in tapegrad's own block (a step)."""
    if target or f.f_code.co_filename.startswith(_PKG_DIR):
        return None
    return no_grad_block(f"{f.f_code.co_filename}:{f.f_lineno}")


def _close(block):
    if block is not None:
        block.close()


class _GradMode:
    """Base for the grad-mode switches: context manager and decorator."""

    _target = True

    def __enter__(self):
        self._prev = state.grad_enabled
        self._prev_block = state.no_grad_block
        state.grad_enabled = self._target
        state.no_grad_block = _user_block(sys._getframe(1), self._target)
        return self

    def __exit__(self, *exc):
        _close(state.no_grad_block)
        state.grad_enabled = self._prev
        state.no_grad_block = self._prev_block
        return False

    def __call__(self, fn):
        target = self._target
        code = getattr(fn, "__code__", None)
        site = None  # a user's function decorated with no_grad: its `def` line
        if not target and code is not None and not code.co_filename.startswith(_PKG_DIR):
            site = f"{code.co_filename}:{code.co_firstlineno}"

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev, prev_block = state.grad_enabled, state.no_grad_block
            state.grad_enabled = target
            state.no_grad_block = None if site is None else no_grad_block(site)
            try:
                return fn(*args, **kwargs)
            finally:
                _close(state.no_grad_block)
                state.grad_enabled = prev
                state.no_grad_block = prev_block

        return wrapper


class no_grad(_GradMode):
    """Nothing computed inside records a graph: inference without saved values."""

    _target = False


class enable_grad(_GradMode):
    """Turn recording back on inside a `no_grad` region."""

    _target = True


class set_grad_enabled(_GradMode):
    """`set_grad_enabled(False)` is `no_grad()`; takes effect at construction, as in PyTorch."""

    def __init__(self, mode):
        self._target = bool(mode)
        self._prev = state.grad_enabled
        self._prev_block = state.no_grad_block
        _close(self._prev_block)  # record what it saw so far: a bare call may never exit
        state.grad_enabled = self._target
        state.no_grad_block = _user_block(sys._getframe(1), self._target)

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.grad_enabled = self._prev  # used as a decorator: undo the eager switch
        state.no_grad_block = self._prev_block
        return super().__call__(fn)


class inference_mode(no_grad):
    """Alias of `no_grad` (tapegrad has no separate inference tensors)."""

    def __init__(self, mode=True):
        self._target = not mode

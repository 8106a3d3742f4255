"""Grad modes: whether operations record their recipe for backward, per thread.

`no_grad`, `enable_grad` and `set_grad_enabled` work as context managers and as
decorators, like PyTorch's; the flag is `state.grad_enabled` (state.py), so a thread's
`no_grad` never switches recording off in another thread.
"""
import functools
import sys

from .cuts import no_grad_block
from .state import state


def is_grad_enabled():
    return state.grad_enabled


def _user_block(f):
    """A user's block that turns recording off, found at its `with` line (frame `f`),
    for why_no_grad; None in tapegrad's own block (an optimizer's step)."""
    return no_grad_block(f.f_code, f.f_lineno)


def _close(block):
    if block is not None:
        block.close()


class recording_off:
    """tapegrad's own `no_grad` (an optimizer's step, a custom Function's forward, an
    in-place fallback): recording off, and no user's line looked for (no stack frame),
    so it costs what `no_grad` cost before why_no_grad."""

    __slots__ = ("_prev", "_prev_block")

    def __enter__(self):
        self._prev, self._prev_block = state.grad_enabled, state.no_grad_block
        state.grad_enabled = False
        state.no_grad_block = None
        return self

    def __exit__(self, *exc):
        state.grad_enabled, state.no_grad_block = self._prev, self._prev_block
        return False


class _GradMode:
    """Base for the grad-mode switches: context manager and decorator."""

    _target = True

    def __enter__(self):
        self._prev = state.grad_enabled
        self._prev_block = state.no_grad_block
        state.grad_enabled = self._target
        state.no_grad_block = None if self._target else _user_block(sys._getframe(1))
        return self

    def __exit__(self, *exc):
        _close(state.no_grad_block)
        state.grad_enabled = self._prev
        state.no_grad_block = self._prev_block
        return False

    def __call__(self, fn):
        target = self._target
        code = getattr(fn, "__code__", None)
        user = not target and code is not None  # its `def` line (None if tapegrad's)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev, prev_block = state.grad_enabled, state.no_grad_block
            state.grad_enabled = target
            state.no_grad_block = no_grad_block(code, code.co_firstlineno) if user else None
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
        state.no_grad_block = None if self._target else _user_block(sys._getframe(1))

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

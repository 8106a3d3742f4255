"""Grad modes: whether operations record their recipe for backward, per thread.

`no_grad`, `enable_grad` and `set_grad_enabled` work as context managers and as
decorators, like PyTorch's; the flag is `state.grad_enabled` (state.py), so a thread's
`no_grad` never switches recording off in another thread.
"""
import functools

from .state import state


def is_grad_enabled():
    return state.grad_enabled


class _GradMode:
    """Base for the grad-mode switches: context manager and decorator."""

    _target = True

    def __enter__(self):
        self._prev = state.grad_enabled
        state.grad_enabled = self._target
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self._prev
        return False

    def __call__(self, fn):
        target = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = state.grad_enabled
            state.grad_enabled = target
            try:
                return fn(*args, **kwargs)
            finally:
                state.grad_enabled = prev

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
        state.grad_enabled = self._target

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.grad_enabled = self._prev  # used as a decorator: undo the eager switch
        return super().__call__(fn)


class inference_mode(no_grad):
    """Alias of `no_grad` (tapegrad has no separate inference tensors)."""

    def __init__(self, mode=True):
        self._target = not mode

"""Grad modes: whether operations record their recipe for backward.

`no_grad`, `enable_grad` and `set_grad_enabled` work as context managers and as
decorators, like PyTorch's. The flag lives in one module-level variable that the
recording code reads on every op, so checking it costs one global lookup.
"""
import functools

_state = {"enabled": True}


def is_grad_enabled():
    return _state["enabled"]


class _GradMode:
    """Base for the three grad-mode switches: context manager and decorator."""

    _target = True

    def __enter__(self):
        self._prev = _state["enabled"]
        _state["enabled"] = self._target
        return self

    def __exit__(self, *exc):
        _state["enabled"] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__.__new__(self.__class__).__init_copy(self):
                return fn(*args, **kwargs)

        return wrapper

    def __init_copy(self, other):
        self._target = other._target
        return self


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
        self._prev = _state["enabled"]
        _state["enabled"] = self._target

    def __enter__(self):
        return self

    def __call__(self, fn):
        _state["enabled"] = self._prev  # used as a decorator: undo the eager switch
        return super().__call__(fn)


class inference_mode(no_grad):
    """Alias of `no_grad` (tapegrad has no separate inference tensors)."""

    def __init__(self, mode=True):
        self._target = not mode

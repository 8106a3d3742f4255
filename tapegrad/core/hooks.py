"""Gradient hooks: functions called with a gradient as backward computes it.

- `t.register_hook(fn)`: `fn(grad)` may return a replacement gradient. On a leaf it
  runs on the leaf's total gradient before accumulation; on a non-leaf it is stored
  on the tensor's node (which must not point back at its output tensor).
- `t.retain_grad()`: a hook that writes the gradient into a non-leaf's `.grad`; it
  runs after the user's hooks, as in PyTorch. It holds the tensor weakly.
- `t.register_post_accumulate_grad_hook(fn)`: `fn(tensor)` after `.grad` was updated.
"""
import itertools
import weakref

from .. import dtypes as _dt
from .tensor_base import TensorBase, like

_ids = itertools.count()


class RemovableHandle:
    """Returned by every register_*: `handle.remove()` unregisters the hook."""

    def __init__(self, hooks_dict):
        self._dict = hooks_dict
        self.id = next(_ids)

    def remove(self):
        self._dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks, fn):
    """Put `fn` into the dict `hooks` (insertion order = call order); returns its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class RetainGrad:
    """The hook behind retain_grad(): stores the gradient on the (weakly held) tensor."""

    __slots__ = ("ref",)

    def __init__(self, tensor):
        self.ref = weakref.ref(tensor)

    def __call__(self, g):
        t = self.ref()
        if t is None:
            return None
        gt = g if isinstance(g, TensorBase) else like(t, g.copy())
        if t.grad is None:
            t.grad = gt
        elif t.grad.grad_fn is None and gt.grad_fn is None:
            t.grad = like(t, t.grad._data + gt._data)
        else:
            t.grad = t.grad + gt
        return None


def _check_requires_grad(t):
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")


def register_hook(t, fn):
    _check_requires_grad(t)
    if t.grad_fn is not None:
        return t.grad_fn.register_hook(fn)
    if t._hooks is None:
        t._hooks = {}
    return add_hook(t._hooks, fn)


def register_post_accumulate_grad_hook(t, fn):
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    _check_requires_grad(t)
    if t._post_hooks is None:
        t._post_hooks = {}
    return add_hook(t._post_hooks, fn)


def retain_grad(t):
    if t.grad_fn is None:
        if not t._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return  # leaves keep their .grad anyway
    if not retains_grad(t):
        t.grad_fn.register_hook(RetainGrad(t))


def retains_grad(t):
    node = t.grad_fn
    if node is None or not node.hooks:
        return False
    return any(isinstance(h, RetainGrad) and h.ref() is t for h in node.hooks.values())


def _call_all(hooks, g, like_t):
    """Run the hooks in order on g (user hooks first, retain_grad last)."""
    as_array = not isinstance(g, TensorBase)
    retain = []
    for h in list(hooks.values()):
        if isinstance(h, RetainGrad):
            retain.append(h)
            continue
        out = h(g if not as_array else like(like_t, g))
        if out is not None:
            _check_replacement(h, g, out)
            g = out._data if as_array and isinstance(out, TensorBase) else out
    for h in retain:
        h(g)
    return g


def _check_replacement(h, g, out):
    """A hook may change a gradient's values, not its shape or dtype (as PyTorch)."""
    name = getattr(h, "__name__", type(h).__name__)
    shape = getattr(out, "shape", None)
    if shape is None:
        raise TypeError(f"hook '{name}' returned a {type(out).__name__}; expected a Tensor "
                        "or None")
    if tuple(shape) != tuple(g.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if out.dtype != g.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"{_dt.name(g.dtype)} got {_dt.name(out.dtype)})")


def run_node_hooks(node, g, like_t):
    return _call_all(node.hooks, g, like_t)


def run_tensor_hooks(t, g):
    return _call_all(t._hooks, g, t)


def run_post_accumulate_hooks(t):
    for h in list(t._post_hooks.values()):
        h(t)

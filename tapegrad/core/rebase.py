"""In-place bookkeeping that recording and the walk share.

Views: a linear op whose output is a NumPy view of its first input (reshape, permute,
expand, basic slicing) shares that input's version counter; while the base has a
history, the view is remembered here so that an in-place change of the base can give
the view a history that describes its new values (ops/inplace.py).

Old values: an in-place op moves a tensor's history to a new node and records which
tensor object now holds the value from before the change (`record_old`). Nodes
recorded earlier still point at the changed tensor; `resolve` follows the records
back to the tensor that held the version they saw (PyTorch's edges do this).
"""
import weakref

from .tensor_base import TensorBase

# id(parent, a non-leaf) -> (weakref to it, [weakref to view]); by id, with weakref
# callbacks for cleanup, because Tensor's == is elementwise (no WeakSet).
_views_of = {}

# in-place node -> the tensor that holds the value before the change
_old_of = weakref.WeakKeyDictionary()


class _Used:
    """Whether any in-place rebase happened yet (the walk skips `resolve` until then)."""
    any = False


used = _Used()


def share_view_version(res, inputs, arrays):
    """res is the output of a linear op: if it is a view of its first input, share that
    input's version counter (and remember the view while the input has a history)."""
    src = inputs[0] if inputs else None
    if isinstance(src, TensorBase):
        a = arrays[0]
        base = res._data.base
        if base is a or (a.base is not None and base is a.base):
            res._version_counter = src._version_counter
            # torch's `_base`: the root. A weak reference (torch's is strong): a view must
            # not keep a forward tensor alive (tg.compile's capture checks that)
            root = getattr(src, "_vbase", None)
            res._vbase = weakref.ref(src) if root is None else root
            if res._rg and src.grad_fn is not None:
                _register_view(src, res)


def _register_view(src, view):
    key = id(src)
    entry = _views_of.get(key)
    if entry is None or entry[0]() is not src:
        entry = (weakref.ref(src, lambda r, key=key: _views_of.pop(key, None)), [])
        _views_of[key] = entry
    views = entry[1]
    views.append(weakref.ref(view))
    if len(views) > 64 and not len(views) & 63:  # a long-lived base: drop dead views
        views[:] = [r for r in views if r() is not None]


def views_of(t):
    """The live views of `t` that require grad (made while `t` had a history)."""
    entry = _views_of.get(id(t))
    if entry is None or entry[0]() is not t:
        return []
    return [v for v in (r() for r in entry[1]) if v is not None]


def record_old(node, old):
    """`node` (made by an in-place change) describes the new value; `old` the previous one."""
    _old_of[node] = old
    used.any = True


def resolve(node, i, t):
    """Input i of `node` as it was when `node` was recorded: if `t` was changed in place
    afterwards, its current grad_fn describes the NEW value; step back through the
    in-place nodes to the tensor that held the recorded version."""
    vers = node.versions
    v = vers[i] if vers is not None else 0
    p = t.grad_fn
    while p is not None:
        old = _old_of.get(p)
        if old is None or p.versions[-1] <= v:
            break
        t = old
        p = t.grad_fn
    return t


def view_base(t):
    """torch's `t._base`: the tensor `t` is a view of (the root: a view of a view names
    the first tensor), or None. A copy of a view (deepcopy) no longer shares the memory
    and is no view."""
    ref = getattr(t, "_vbase", None)
    base = None if ref is None else ref()
    if base is None:
        return None
    a, b = t._data, base._data
    ra = a if a.base is None else a.base
    rb = b if b.base is None else b.base
    return base if ra is rb else None

"""Guards: when may a call replay a capture? The key of everything a replay takes as given.

    the call's structure (pytree spec), every input tensor's class, shape, strides, dtype and
    requires_grad, every other argument's value (hashable, or no key: eager), which
    arguments share an array (with each other or with a parameter), grad mode, the
    default dtype, each submodule's `training` and its attributes of plain types (bool,
    int, float, str, None: dropout's p, a flag a forward branches on), the identity, shape, dtype and
    requires_grad of every parameter and buffer

`key` returns (key, externals) or (None, None): eager, for hooks on a module, forward-mode
AD, anomaly or strict mode (any observer of the walk), node sites being recorded, or a
capture already running on this thread (a compiled call inside another's capture).
"""
from .. import dtypes as _dt
from .._func.pytree import flatten
from ..core import tape as _tape
from ..core.state import anywhere, state
from ..core.tensor_base import TensorBase

_NO = (None, None)
WATCH = "tg.compile"  # schedule.NAME (not imported: schedule imports nothing of ours)
# module attributes whose values a forward may branch on (dropout's p, a flag): part of
# the key; attributes of other types (a config object) are not guarded
_PLAIN = frozenset((bool, int, float, str, type(None)))


def key(module, args, kwargs, cache=None):
    obs = state.observers
    if ((obs and len(obs) > (WATCH in obs)) or state.tape is not None or state.record_sites
            or (anywhere.duals and state.dual is not None)):
        return _NO  # (another capture's watch of the walk is no reason for eager)
    leaves, spec = _leaves(args, kwargs)
    ext = []
    parts = [spec, state.grad_enabled, _dt.get_default_dtype()]
    for x in leaves:
        if isinstance(x, TensorBase):
            ext.append(x)
            _tensor_part(parts, type(x), x)
        else:
            try:
                hash(x)
            except TypeError:
                return _NO
            parts.append(type(x))
            parts.append(x)
    if module is not None:
        # the module's part is the same while core/tape.py's structure epoch is: `cache`
        # ([epoch, part, tensors], the runner's) keeps it (the walk costs ~1 us a module)
        if cache is not None and cache[0] == _tape.epoch[0]:
            parts.append(cache[1])
            ext.extend(cache[2])
        else:
            mparts, mext = [], []
            if not _module_part(module, mparts, mext):
                return _NO
            mparts = tuple(mparts)
            parts.append(mparts)
            ext.extend(mext)
            if cache is not None:
                cache[:] = [_tape.epoch[0], mparts, mext]
    first = {}
    parts.append(tuple(first.setdefault(id(t._data), k) for k, t in enumerate(ext)))
    return tuple(parts), ext


def _tensor_part(parts, which, t):
    """What a guard sees of a tensor: `which` (its type for an argument, its identity for a
    parameter or buffer), shape, strides, dtype and requires_grad."""
    a = t._data
    parts.append(which)
    parts.append(a.shape)
    parts.append(a.strides)  # (a view of a transposed input: `x.view(-1)` refuses it)
    parts.append(a.dtype)
    parts.append(t._rg)


def _module_part(module, parts, ext):
    """Each submodule's state into `parts`, its parameters and buffers into `ext` (an
    explicit stack: a hand-written walk is ~4x faster than modules(), and this runs on
    every call). False: a forward hook somewhere."""
    seen_m, seen = set(), set()
    stack = [module]
    plain = _PLAIN
    while stack:
        m = stack.pop()
        if id(m) in seen_m:
            continue
        seen_m.add(id(m))
        d = m.__dict__
        if d["_forward_hooks"] or d["_forward_pre_hooks"]:
            return False
        # training and every other plain attribute (by position: the dict's order)
        parts.append(tuple([v for v in d.values() if type(v) in plain]))
        for store in (d["_parameters"], d["_buffers"]):
            for t in store.values():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    ext.append(t)
                    _tensor_part(parts, id(t), t)
        for c in d["_modules"].values():
            if c is not None:
                stack.append(c)
    return True


def _leaves(args, kwargs):
    """(leaves, structure) of the call. The usual call, tensors and plain values as
    arguments, skips the pytree (a Spec's hash walks its tree on every lookup)."""
    for x in args:
        if isinstance(x, (tuple, list, dict)):
            return flatten((args, kwargs))
    if kwargs:
        for x in kwargs.values():
            if isinstance(x, (tuple, list, dict)):
                return flatten((args, kwargs))
        return list(args) + list(kwargs.values()), (len(args), tuple(kwargs))
    return args, len(args)


class Last:
    """What `key` saw on the call that last replayed a capture (`remember`), so that the
    next call can be tested against it directly (`quick`) instead of building its key,
    hashing it and looking it up (~13 us a call right after a step's big kernels, when
    the caches are cold; the direct test touches fewer objects)."""

    __slots__ = ("entry", "pyg", "args", "grad", "dtype", "epoch", "mparts", "shared",
                 "distinct")

    def __init__(self, entry, pyg, args, grad, dtype, epoch, mparts, shared):
        self.entry, self.pyg = entry, pyg
        self.args = args      # per argument: (type, shape, dtype, requires_grad, strides)
        self.grad = grad      # of a tensor, (type, value) of a plain value
        self.dtype = dtype    # the default dtype as dtypes.py keeps it (a NumPy dtype)
        self.epoch = epoch    # the structure epoch: the module part as it was
        self.mparts = mparts  # the module part (the runner's cache of it), or None
        self.shared = shared  # which tensors shared an array (key's last part)
        self.distinct = shared == tuple(range(len(shared)))  # none did


def remember(entry, pyg, module, args, kwargs, key, cache):
    """A `Last` for a call whose key is `key` (just computed, before the replay), or None
    when the call is not the plain kind `quick` tests (keyword arguments, containers,
    arguments other than tensors and plain values)."""
    if kwargs or key[0] != len(args) or _dt.get_default_dtype() != key[2]:
        return None
    metas = []
    for x in args:
        if isinstance(x, TensorBase):
            a = x._data
            metas.append((type(x), a.shape, a.dtype, x._rg, a.strides))
        elif type(x) in _PLAIN:
            metas.append((type(x), x))
        else:
            return None
    mparts = None
    if module is not None:
        if cache is None or cache[0] != _tape.epoch[0]:
            return None
        mparts = cache[1]
    return Last(entry, pyg, tuple(metas), key[1], _dt._default["float"], _tape.epoch[0],
                mparts, key[-1])


def quick(last, args, cache):
    """The externals when this call's key is `last`'s (every test `key` makes, made
    directly: no observer or capture, the same grad mode, default dtype, arguments'
    types, shapes, dtypes, requires_grad and values, structure epoch, module part and
    shared arrays), else None (then `key` decides)."""
    obs = state.observers
    if ((obs and len(obs) > (WATCH in obs)) or (anywhere.tapes and state.tape is not None)
            or (anywhere.site_threads and state.record_sites)
            or (anywhere.duals and state.dual is not None)):
        return None  # (the process-wide counts first: each is 0 unless some thread is on)
    metas = last.args
    if (len(args) != len(metas) or state.grad_enabled != last.grad
            or _tape.epoch[0] != last.epoch or _dt._default["float"] is not last.dtype):
        return None
    ext = []
    arrays = []
    for x, m in zip(args, metas):
        if type(x) is not m[0]:
            return None
        if len(m) == 5:
            a = x._data
            if a.shape != m[1] or a.dtype != m[2] or x._rg != m[3] or a.strides != m[4]:
                return None
            ext.append(x)
            arrays.append(a)
        elif x is not m[1] and not x == m[1]:
            return None
    if last.mparts is not None:
        if cache[0] != last.epoch or cache[1] is not last.mparts:
            return None
        ext.extend(cache[2])
        arrays.extend([t._data for t in cache[2]])
    if len(arrays) > 1:
        if last.distinct:
            if (arrays[0] is arrays[1] if len(arrays) == 2
                    else len(set(map(id, arrays))) != len(arrays)):
                return None
        else:
            first = {}
            if tuple(first.setdefault(id(a), k) for k, a in enumerate(arrays)) != last.shared:
                return None
    return ext

"""Where the graph was cut: for each leaf (parameter), the file:line of the cuts above it.

`tg.autograd.why_no_grad` explains a parameter whose `.grad` is None after backward.
The usual cause is a cut: something computed from the parameter left the graph through
`.detach()`, `.data`, `.item()` / `float()` / `.tolist()` / `np.asarray()`, an integer
cast, or a `no_grad` block, so backward never reaches the parameter. When a tensor
that REQUIRES GRAD is cut at the user's line, `note` walks its graph to the leaves and
records (how, "file:line") for each: the graph is gone by the time anybody asks, so
the answer has to be written down at the cut.

Cost: nothing for a tensor that does not require grad (the callers test `_rg` first);
nothing when the tensor's graph was already backpropagated (`loss.item()` after
`loss.backward()`: its root node is freed); nothing for tapegrad's own cuts (the frame
that asked is inside the package). Otherwise a stack frame and a list append; the walk
to the leaves (at most MAX_WALK nodes) waits until somebody asks or PENDING cuts wait,
and is skipped if backward went through the cut node meanwhile (`loss.item()` BEFORE
`loss.backward()` costs no walk). Ops in
a user's `no_grad` block store their inputs that require grad in the block
(state.no_grad_block, whose `with` line was found once when it was entered); they are
recorded when the block closes: no stack walk and no walk of a graph per op; and a
`with` line whose blocks were recorded SITE_BLOCKS times is not recorded again (an
evaluation loop pays for its first batches only).

The records live in one process-wide dict keyed by id(leaf) with a weak reference to
the leaf (a dead or reused id is detected and replaced), at most KEEP distinct cuts per
leaf, the most recent last.
"""
import sys
import threading
import weakref

from .node import _PKG_DIR
from .tensor_base import TensorBase

MAX_WALK = 20_000  # nodes walked per cut (a longer graph records its first MAX_WALK)
KEEP = 4           # distinct (how, site) records kept per leaf
_PURGE_AT = 4096   # entries; then the dead ones are dropped

SITE_BLOCKS = 2    # no_grad blocks recorded per `with` line (an eval loop: its first 2)
PENDING = 1        # cuts of computed tensors waiting to be settled (see note)

_by_leaf = {}      # id(leaf) -> (weakref to leaf, [(how, site), ...])
_site_blocks = {}  # (id(code), line) of a no_grad block -> how many of its blocks closed
_pending = []      # [(how, site, node)], oldest first (see note)
_lock = threading.RLock()  # threads cut and ask at once: settle one at a time

# the facade and op-function modules between a user's call and `note`
_FACADE = tuple(f"{_PKG_DIR}/{m}" for m in (
    "_tensor.py", "ops/pointwise.py", "ops/reductions.py", "ops/shape.py", "ops/_factories.py"))


def note(t, how):
    """`t`, which requires grad, is being cut by `how` (".detach()", "an integer cast",
    ...) at the user's line: remember it for the leaves above. Call as `if t._rg: ...`.

    A leaf is recorded at once. A computed tensor's cut waits in `_pending` with its
    node until the next cut or a question (`_settle`): dropped if backward went through
    the node by then (the common `loss.item()` before `loss.backward()`: no walk at
    all), else its leaves are found by one walk. The node is held (the graph above a
    `.detach()` is often dropped at once, and it is the one to blame), but only
    PENDING = 1 of them: a loop that cuts once per step keeps the previous step's graph
    no longer than its own variables would (`out = model(x)` replaces it only after
    the next forward)."""
    f = sys._getframe(2)  # the frame that called the cutting function
    while f is not None and f.f_code.co_filename.startswith(_FACADE):
        f = f.f_back
    if f is None or f.f_code.co_filename.startswith(_PKG_DIR):
        return  # tapegrad's own use (an optimizer, a monitor): not the user's cut
    node = t.grad_fn
    if node is not None and node.freed:
        return  # backward already went through this graph: its leaves got gradients
    site = f"{f.f_code.co_filename}:{f.f_lineno}"
    if node is None:
        _add(t, how, site)
        return
    with _lock:
        _pending.append((how, site, node))
        if len(_pending) > PENDING:
            _settle(PENDING)


def _settle(left=0):
    """Settle pending cuts, oldest first, until `left` remain: a node backward went
    through (freed) is dropped; the others are walked to their leaves."""
    with _lock:
        _pending[:] = [e for e in _pending if not e[2].freed]
        while len(_pending) > left:
            how, site, node = _pending.pop(0)
            for leaf in _leaves_of(node):
                _add(leaf, how, site)


def no_grad_block(code, line):
    """A NoGradBlock for a user's block at `line` of `code`; None for tapegrad's own
    blocks and once that line's blocks were recorded SITE_BLOCKS times. After the first
    time, one dict lookup (keyed by id: hashing a code object is slow)."""
    key = (id(code), line)
    n = _site_blocks.get(key)
    if n is None:  # first time here: tapegrad's own blocks are never recorded
        n = _site_blocks[key] = SITE_BLOCKS if code.co_filename.startswith(_PKG_DIR) else 0
    if n >= SITE_BLOCKS:
        return None
    return NoGradBlock(code, line)


class NoGradBlock:
    """A user's `no_grad` block in force (state.no_grad_block): the inputs requiring
    grad its ops saw, recorded once when it closes (per op: one dict store each)."""

    __slots__ = ("code", "line", "seen")

    def __init__(self, code, line):
        self.code, self.line = code, line
        self.seen = {}

    def close(self):
        seen, self.seen = self.seen, {}
        key = (id(self.code), self.line)
        _site_blocks[key] = _site_blocks.get(key, 0) + 1
        site = f"{self.code.co_filename}:{self.line}"
        for t in seen.values():
            node = t.grad_fn
            if node is None:
                _add(t, "a no_grad block", site)
            elif not node.freed:
                for leaf in _leaves_of(node):
                    _add(leaf, "a no_grad block", site)


def note_no_grad(inputs, block):
    """An op ran in the user's no_grad `block` (apply calls this only when an input
    requires grad): remember those inputs until the block closes."""
    seen = block.seen
    for t in inputs:
        if isinstance(t, TensorBase) and t._rg:
            seen[id(t)] = t


def cuts_of(leaf):
    """[(how, "file:line"), ...] recorded for `leaf`, the most recent last."""
    if _pending:
        _settle()
    entry = _by_leaf.get(id(leaf))
    if entry is None or entry[0]() is not leaf:
        return []
    return list(entry[1])


def forget(leaf):
    """Drop the records of `leaf` (tests, and a fresh start)."""
    _by_leaf.pop(id(leaf), None)


def _leaves_of(node):
    """The leaves requiring grad that `node` was computed from (an explicit stack)."""
    out, seen_leaves = [], set()
    stack = [node]
    seen = {node}
    while stack and len(seen) <= MAX_WALK:
        node = stack.pop()
        if node.inputs is None:  # freed: backward went through here already
            continue
        for x in node.inputs:
            if not isinstance(x, TensorBase) or not x._rg:
                continue
            p = x.grad_fn
            if p is None:
                if id(x) not in seen_leaves:
                    seen_leaves.add(id(x))
                    out.append(x)
            elif p not in seen:
                seen.add(p)
                stack.append(p)
    return out


def _add(leaf, how, site):
    key = id(leaf)
    entry = _by_leaf.get(key)
    if entry is None or entry[0]() is not leaf:
        if len(_by_leaf) >= _PURGE_AT:
            for k in [k for k, (r, _) in _by_leaf.items() if r() is None]:
                del _by_leaf[k]
        entry = _by_leaf[key] = (weakref.ref(leaf), [])
    recs = entry[1]
    rec = (how, site)
    if recs and recs[-1] == rec:
        return  # the same cut again (every step, every batch): nothing new
    if rec in recs:
        recs.remove(rec)
    recs.append(rec)
    del recs[:-KEEP]

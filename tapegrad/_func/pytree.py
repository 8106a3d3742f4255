"""Pytrees: nested tuples, lists, dicts and namedtuples whose leaves are (usually) tensors.

The function transforms take and return pytrees as torch.func does: `grad(f)({'w': t})`
returns a dict shaped like its argument. A tree is taken apart into its leaves (in a
fixed order: sequences by position, dicts by insertion order) and a `Spec` that
rebuilds the same structure around new leaves:

    leaves, spec = flatten({'w': w, 'b': (b0, b1)})   # [w, b0, b1]
    unflatten([gw, gb0, gb1], spec)                     # {'w': gw, 'b': (gb0, gb1)}

Everything that is not one of those containers is a leaf (None included: the
transforms then reject it with a message naming its type).
"""
from collections import OrderedDict

__all__ = ["Spec", "flatten", "unflatten", "broadcast_prefix"]


class Spec:
    """The structure of a tree: a leaf, or a container kind with its keys and children."""

    __slots__ = ("kind", "keys", "children", "num_leaves")

    def __init__(self, kind=None, keys=None, children=()):
        self.kind = kind          # None for a leaf, else the container type
        self.keys = keys          # dict keys (in order), or namedtuple fields
        self.children = tuple(children)
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in self.children)

    def is_leaf(self):
        return self.kind is None

    def __eq__(self, other):
        return (isinstance(other, Spec) and self.kind is other.kind
                and self.keys == other.keys and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.keys, self.children))

    def __repr__(self):
        if self.kind is None:
            return "*"
        items = [repr(c) for c in self.children]
        if issubclass(self.kind, dict):
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, items)) + "}"
        if self.keys is not None:  # namedtuple
            return (f"{self.kind.__name__}("
                    + ", ".join(f"{k}={c}" for k, c in zip(self.keys, items)) + ")")
        if self.kind is list:
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


_LEAF = Spec()


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x):
    """(kind, keys, children) for a container, or None for a leaf."""
    if isinstance(x, dict):
        kind = OrderedDict if isinstance(x, OrderedDict) else dict
        return kind, tuple(x.keys()), list(x.values())
    if _is_namedtuple(x):
        return type(x), tuple(type(x)._fields), list(x)
    if isinstance(x, (tuple, list)):
        return (list if isinstance(x, list) else tuple), None, list(x)
    return None


def flatten(tree):
    """(leaves, spec) of a tree."""
    leaves = []

    def walk(x):  # pytrees are shallow user containers, not graphs: plain recursion
        c = _children(x)
        if c is None:
            leaves.append(x)
            return _LEAF
        kind, keys, kids = c
        return Spec(kind, keys, [walk(k) for k in kids])

    return leaves, walk(tree)


def unflatten(leaves, spec):
    """The tree of `spec`'s structure with `leaves` (a sequence, in flatten's order)."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"unflatten: the structure {spec!r} has {spec.num_leaves} leaves, "
                         f"got {len(leaves)}")
    it = iter(leaves)

    def build(s):
        if s.kind is None:
            return next(it)
        kids = [build(c) for c in s.children]
        if issubclass(s.kind, dict):
            return s.kind(zip(s.keys, kids))
        if s.keys is not None:
            return s.kind(*kids)
        return s.kind(kids)

    return build(spec)


def broadcast_prefix(prefix, tree, is_leaf=None):
    """The prefix tree's leaves repeated over `tree`'s leaves, or None when `prefix` is
    not a prefix of `tree` (a leaf of `prefix` covers a whole subtree of `tree`).

    E.g. prefix (0, None) over ({'a': x, 'b': y}, z) gives [0, 0, None]. `is_leaf(p)`
    says which prefix values are leaves (default: anything that is not a container)."""
    out = []

    def walk(p, t):
        pc = None if (is_leaf is not None and is_leaf(p)) else _children(p)
        if pc is None:
            out.extend([p] * flatten(t)[1].num_leaves)
            return True
        tc = _children(t)
        if tc is None or pc[0] is not tc[0] or pc[1] != tc[1] or len(pc[2]) != len(tc[2]):
            return False
        return all(walk(a, b) for a, b in zip(pc[2], tc[2]))

    return out if walk(prefix, tree) else None

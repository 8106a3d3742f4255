"""torch.return_types: the named tuples that max(dim)/min/sort/topk/kthvalue/median/
histogram return, with torch's repr:

    tapegrad.return_types.max(
    values=tensor([0.7000]),
    indices=tensor([2]))

`structseq(name, fields)` makes one class (a namedtuple: unpacking, indexing, `.values`
work as in torch); `out_type(cls)` is the `<name>_out` class torch returns when `out=`
was given (torch.return_types.max_out).
"""
from collections import namedtuple

MODULE = "tapegrad.return_types"
_TYPES = {}


def structseq(name, fields):
    """The return type `name` with the given field names (one class per name)."""
    if name in _TYPES:
        return _TYPES[name]
    base = namedtuple(name, fields, module=MODULE)

    def __repr__(self):
        body = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
        return f"{MODULE}.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                               "__module__": MODULE, "__qualname__": name})
    _TYPES[name] = cls
    return cls


def out_type(cls):
    """torch's `<name>_out` twin of a return type (what a call with out= returns)."""
    return structseq(cls.__name__ + "_out", cls._fields)


def all_types():
    """{name: class} of every return type made so far (tapegrad.return_types's names)."""
    return dict(_TYPES)

"""`Variable(t, requires_grad=False)`: the pre-0.4 wrapper, today a tensor like torch's.

`Variable(t)` is a new leaf sharing t's data (t's history is not kept), with the
requires_grad given; every tensor is an instance of Variable (`isinstance(t, Variable)`),
as in torch where the two classes were merged.
"""
from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            return Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        out = data.detach()
        out.requires_grad = requires_grad
        return out

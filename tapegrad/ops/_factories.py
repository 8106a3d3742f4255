"""The factories that make the table-backed unary and binary pointwise functions."""
import numpy as np

from ..core.record import apply
from ..core.tensor_base import TensorBase
from . import _args, promotion as P


def _binary(op, mode=P.ARITH, tensors_only=False):
    """The function of a binary table entry: PyTorch's type promotion (promotion.py)
    decides the dtype it computes in. tensors_only: both arguments must be tensors
    (torch.maximum)."""
    def f(input, other):
        # _arg's common cases inline (a call each saved on every arithmetic op)
        a = input if isinstance(input, TensorBase) else _args._arg(input)
        tb = type(other)
        b = other if tb is float or tb is int or isinstance(other, TensorBase) else _args._arg(other)
        if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
            raise TypeError(f"{op.name}(): expected at least one Tensor argument, got "
                            f"{type(input).__name__} and {type(other).__name__}")
        if tensors_only:
            _args._tensor(a, op.name)
            if not isinstance(b, TensorBase):
                raise TypeError(f"{op.name}(): argument 'other' (position 2) must be Tensor, "
                                f"not {type(other).__name__}")
        # P.operands' hot path inlined (a float tensor with a Python number or a tensor
        # of its dtype: nothing to cast), saving a call on every arithmetic op
        if not (isinstance(a, TensorBase) and a._data.dtype.kind == "f" and (
                type(b) is float or type(b) is int
                or (isinstance(b, TensorBase) and b._data.dtype is a._data.dtype))):
            a, b = P.operands(mode, a, b)
        try:
            return apply(op, a, b)
        except ValueError:
            if isinstance(a, TensorBase) and isinstance(b, TensorBase):
                _args._check_broadcast(op.name, a, b)
            raise
        except OverflowError:  # a Python int out of the dtype's range: torch wraps it
            return apply(op, *_wrapped_ints(a, b))
    f.__name__ = op.name
    f.__doc__ = f"Elementwise {op.name} with broadcasting (table entry `{op.name}`)."
    return f


def _wrapped_ints(a, b):
    """Python ints cast to the result dtype as torch casts its scalars (300 -> 44 in
    uint8) instead of NumPy's OverflowError."""
    rt = P.result_type(a, b)
    return tuple(np.asarray(x).astype(rt)[()] if type(x) is int else x for x in (a, b))


def _unary(op):
    def f(input):
        return apply(op, _args._tensor(input))
    f.__name__ = op.name
    f.__doc__ = f"Elementwise {op.name} (table entry `{op.name}`)."
    return f


def _rounding(op):
    """floor/ceil/trunc: integer tensors are returned as they are (PyTorch's no-op)."""
    f = _unary(op)

    def g(input):
        x = _args._tensor(input, op.name)
        return x if x._data.dtype.kind in "biu" else f(x)
    g.__name__ = op.name
    g.__doc__ = f.__doc__
    return g

"""Comparison ops: eq/ne/lt/le/gt/ge (and the Tensor operators' forms), maximum/minimum,
isclose/allclose/equal, isnan/isinf/isfinite, isin."""
import numpy as np

from ..core import tape as _tape
from ..core.tensor_base import TensorBase, like
from . import _args, promotion as P
from ._factories import _binary
from .public import public
from .rules import pointwise as E


maximum = public(_binary(E.maximum, tensors_only=True), name="maximum", out=True)
minimum = public(_binary(E.minimum, tensors_only=True), name="minimum", out=True)


# ---- masks: results without a gradient, computed by NumPy outside the table ops ------
_KERNELS = {}


def array_kernel(ufunc):
    """`ufunc` returning an array (a 0-d result too), one function object per ufunc."""
    k = _KERNELS.get(ufunc)
    if k is None:
        def k(*args):
            return np.asarray(ufunc(*args))
        k.__name__ = ufunc.__name__
        _KERNELS[ufunc] = k
    return k


def mask(ref, ufunc, *args):
    """A tensor with `ref`'s flags holding `ufunc(*args)` (arrays or numbers): a mask,
    an index test. Through `tape.host`, so tg.compile's capture records it as a step a
    replay computes again (nanoGPT's `self.bias[:, :, :T, :T] == 0`, `x.isfinite()`)."""
    return like(ref, _tape.host(array_kernel(ufunc), *args))


# ---- comparisons (no gradient) -------------------------------------------------------
def _compare(ufunc, name, promote=True, tensors_only=False):
    """The comparison `name`: input a tensor (torch has no `eq(2, t)`), other a tensor or
    a number (a tensor only with tensors_only: the logical ops)."""
    def f(input, other):
        if tensors_only:
            _args._tensor(input, name)
            _args._tensor(other, name, "other", 2)
        else:
            _args._tensor_first(name, input, other)
        a, b = input, other
        if promote and (isinstance(a, TensorBase) or isinstance(b, TensorBase)):
            # compared in the promoted dtype, as torch: float32 0.1 == 0-d float64 0.1
            a, b = P.operands(P.COMPARE, _args._arg(a), _args._arg(b))
        a = a._data if isinstance(a, TensorBase) else a
        b = b._data if isinstance(b, TensorBase) else b
        try:
            return mask(input, ufunc, a, b)
        except ValueError:
            raise RuntimeError(f"{name}: the shapes {np.shape(a)} and {np.shape(b)} cannot be "
                               "broadcast together") from None
    f.__name__ = name
    return f


eq = public(_compare(np.equal, "eq"), name="eq", out=True)
ne = public(_compare(np.not_equal, "ne"), name="ne", out=True)
lt = less = public(_compare(np.less, "lt"), name="lt", aliases=('less',), out=True)
le = less_equal = public(_compare(np.less_equal, "le"), name="le", aliases=('less_equal',),
                         out=True)
gt = greater = public(_compare(np.greater, "gt"), name="gt", aliases=('greater',), out=True)
ge = greater_equal = public(_compare(np.greater_equal, "ge"),
                            name="ge", aliases=('greater_equal',), out=True)


def _operator(f):
    """`t == x`, `t < x`, ...: torch's Tensor operators return NotImplemented for an operand
    that is not a tensor or a number (its wrapper turns the TypeError into NotImplemented),
    so Python falls back: `t == None` is False, `t != None` True (`if next_id == eos_id:`
    with eos_id None), `t < None` a TypeError. torch.eq(t, None) stays an error."""
    def op(self, other):
        if other is None or isinstance(other, str):
            return NotImplemented
        return f(self, other)
    op.__name__ = f"__{f.__name__}__"
    op.__qualname__ = f"Tensor.{op.__name__}"
    return op


eq_operator, ne_operator, lt_operator, le_operator, gt_operator, ge_operator = map(
    _operator, (eq, ne, lt, le, gt, ge))


@public
def isnan(input):
    return mask(input, np.isnan, _args._tensor(input, "isnan")._data)


@public
def isinf(input):
    return mask(input, np.isinf, _args._tensor(input, "isinf")._data)


@public
def isfinite(input):
    return mask(input, np.isfinite, _args._tensor(input, "isfinite")._data)


@public
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@public
def equal(input, other):
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


@public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (bool tensor, no gradient)."""
    x = _args._tensor(input, "isclose")
    o = _args._tensor(other, "isclose", "other", 2)._data
    if x._data.dtype != o.dtype:
        raise RuntimeError(f"{_args._tname(x._data.dtype)} did not match "
                           f"{_args._tname(o.dtype)}")
    for tol, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{tol} must be greater than or equal to zero, but got {v}")
    return like(x, _tape.host(_isclose, x._data, o, rtol, atol, bool(equal_nan)))


def _isclose(a, b, rtol, atol, equal_nan):
    return np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@public(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """elements' membership in test_elements, elementwise (bool, elements' shape)."""
    if not isinstance(elements, TensorBase) and not isinstance(test_elements, TensorBase):
        raise TypeError("isin() received an invalid combination of arguments: at least one "
                        "of elements and test_elements must be a Tensor")
    e, t = _args._data(elements), _args._data(test_elements)
    ref = elements if isinstance(elements, TensorBase) else test_elements
    return like(ref, _tape.host(_isin, e, t, bool(assume_unique), bool(invert)))


def _isin(e, t, assume_unique, invert):
    return np.asarray(np.isin(e, t, assume_unique=assume_unique, invert=invert))


@public(out=True)
def isposinf(input):
    return mask(input, np.isposinf, _args._tensor(input, "isposinf")._data)


@public(out=True)
def isneginf(input):
    return mask(input, np.isneginf, _args._tensor(input, "isneginf")._data)


@public
def isreal(input):
    """True everywhere for a real tensor (tapegrad has no complex dtypes)."""
    return like(input, np.ones(_args._tensor(input, "isreal")._data.shape, bool))

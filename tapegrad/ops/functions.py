"""The public op functions (PyTorch names and arguments) and the Tensor methods.

Each function converts its arguments, translates PyTorch's keywords (`dim`,
`keepdim`) to the table's (`axis`, `keepdims`) and calls `apply` on a table entry.
No derivative code lives here: it is all in the table (elementwise.py, reduce.py,
linalg.py, softmax.py, shape.py).
"""
import builtins

import numpy as np

from .. import dtypes as _dt
from ..core import cuts as _cuts
from ..core.record import apply, apply_saved
from ..core.tensor_base import TensorBase, like, to_array
from .rules import pointwise as E
from .rules import products as L
from . import promotion as P
from .rules import reductions as R
from .return_types import structseq
from .rules import shape as S
from .rules import softmax as SM
from .registry import defop

_generic = np.generic


def _arg(x):
    """An op operand: tensors pass; Python numbers stay weak scalars; arrays and lists
    become constant arrays (no gradient), with PyTorch's dtype inference."""
    if isinstance(x, TensorBase):
        return x
    tx = type(x)
    if tx is int or tx is float or tx is bool:
        return x
    if isinstance(x, _generic):
        return x.item()
    if isinstance(x, (int, float)):
        return x
    return to_array(x)


def _tensor(x, fname="this function"):
    """The tensor argument of a function of one tensor (PyTorch refuses anything else)."""
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(x).__name__}")


def _check_broadcast(name, a, b):
    """torch's message for shapes that do not broadcast (the first clash from the right,
    numbered as a dim of the result: `rand(4, 3, 2) * rand(4, 3)` is dimension 2), then
    the op's name and both shapes."""
    sa = np.shape(a._data if isinstance(a, TensorBase) else a)
    sb = np.shape(b._data if isinstance(b, TensorBase) else b)
    n = builtins.max(len(sa), len(sb))  # (max and min are torch's here)
    for i in range(1, builtins.min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            # torch's sentence, then which op and shapes (the line alone rarely says)
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {n - i} ({name}: shapes "
                               f"{tuple(sa)} and {tuple(sb)})") from None


def _binary(op, mode=P.ARITH, tensors_only=False):
    """The function of a binary table entry: PyTorch's type promotion (promotion.py)
    decides the dtype it computes in. tensors_only: both arguments must be tensors
    (torch.maximum)."""
    def f(input, other):
        # _arg's common cases inline (a call each saved on every arithmetic op)
        a = input if isinstance(input, TensorBase) else _arg(input)
        tb = type(other)
        b = other if tb is float or tb is int or isinstance(other, TensorBase) else _arg(other)
        if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
            raise TypeError(f"{op.name}(): expected at least one Tensor argument, got "
                            f"{type(input).__name__} and {type(other).__name__}")
        if tensors_only:
            _tensor(a, op.name)
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
                _check_broadcast(op.name, a, b)
            raise
        except OverflowError:  # a Python int out of the dtype's range: torch wraps it
            return apply(op, *_wrapped_ints(a, b))
    f.__name__ = op.name
    f.__doc__ = f"Elementwise {op.name} with broadcasting (table entry `{op.name}`)."
    return f


def result_type(tensor, other):
    """torch.result_type: the dtype `tensor op other` has (promotion.py, dtypes.py)."""
    return P.result_type(_arg(tensor), _arg(other))


promote_types = _dt.promote_types
can_cast = _dt.can_cast


def _wrapped_ints(a, b):
    """Python ints cast to the result dtype as torch casts its scalars (300 -> 44 in
    uint8) instead of NumPy's OverflowError."""
    rt = P.result_type(a, b)
    return tuple(np.asarray(x).astype(rt)[()] if type(x) is int else x for x in (a, b))


def _unary(op):
    def f(input):
        return apply(op, _tensor(input))
    f.__name__ = op.name
    f.__doc__ = f"Elementwise {op.name} (table entry `{op.name}`)."
    return f


_add = _binary(E.add)  # without alpha: the operators use these
_sub = _binary(E.sub, P.SUB)


def add(input, other, *, alpha=1):
    return _add(input, other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1):
    return _sub(input, other if alpha == 1 else other * alpha)


subtract = sub
mul = multiply = _binary(E.mul)
div = divide = true_divide = _binary(E.div, P.DIV)
maximum = _binary(E.maximum, tensors_only=True)
remainder = _binary(E.remainder, "remainder")
fmod = _binary(E.fmod, "fmod")
minimum = _binary(E.minimum, tensors_only=True)


def pow(input, exponent):
    a, b = _arg(input), _arg(exponent)
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        raise TypeError(f"pow(): expected a Tensor base or exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    if isinstance(a, TensorBase) and a._data.dtype.kind in "iu" and isinstance(b, int) and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if type(b) is bool and isinstance(a, TensorBase) and a._data.dtype == np.bool_:
        return like(a, a._data | (not b))  # torch keeps bool ** bool-number bool (NumPy: int8)
    a, b = P.operands("pow", a, b)
    try:
        return apply(E.pow, a, b)
    except OverflowError:
        return apply(E.pow, *_wrapped_ints(a, b))


neg = negative = _unary(E.neg)
exp = _unary(E.exp)
log = _unary(E.log)
sqrt = _unary(E.sqrt)
log2 = _unary(E.log2)
log10 = _unary(E.log10)
log1p = _unary(E.log1p)
expm1 = _unary(E.expm1)
rsqrt = _unary(E.rsqrt)
_abs = _unary(E.abs)


def abs(input):
    x = _tensor(input, "abs")
    if x._data.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return _abs(x)


absolute = abs
sign = _unary(E.sign)
sin = _unary(E.sin)
cos = _unary(E.cos)
tanh = _unary(E.tanh)
sigmoid = _unary(E.sigmoid)
relu = _unary(E.relu)


def _rounding(op):
    """floor/ceil/trunc: integer tensors are returned as they are (PyTorch's no-op)."""
    f = _unary(op)

    def g(input):
        x = _tensor(input, op.name)
        return x if x._data.dtype.kind in "biu" else f(x)
    g.__name__ = op.name
    g.__doc__ = f.__doc__
    return g


floor = _rounding(E.floor)
ceil = _rounding(E.ceil)
trunc = fix = _rounding(E.trunc)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, TensorBase) or isinstance(max, TensorBase):
        # Tensor bounds: the composite gives PyTorch's gradients (to x inside the
        # bounds, to the bound that was hit outside).
        x = _tensor(input)
        if min is not None:
            x = where(x < min, min, x)
        if max is not None:
            x = where(x > max, max, x)
        return x
    return apply(E.clamp, _tensor(input), min=_scalar(min), max=_scalar(max))


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def _logical_reduction(name, np_fn):
    def f(input, dim=None, keepdim=False):
        x = _tensor(input, name)
        d = _dims(dim)
        _check_dims(name, x, d)
        return like(x, np.asarray(np_fn(x._data, axis=d, keepdims=bool(keepdim))))
    f.__name__ = name
    f.__doc__ = f"torch.{name}: a bool tensor (no gradient)."
    return f


def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along dim (bool/int tensors sum to int64, as PyTorch)."""
    x = _tensor(input, "cumsum")
    if dtype is not None:
        x = x.to(dtype)
    elif x._data.dtype.kind in "biu":
        x = x.to(_dt.int64)
    _check_dims("cumsum", x, int(dim))
    d = int(dim) % builtins.max(x._data.ndim, 1)
    return apply(R.cumsum, x, axis=d)


def outer(input, vec2):
    """The outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j] (a composite)."""
    a, b = _tensor(input, "outer"), _tensor(vec2, "outer")
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got shapes {tuple(a._data.shape)} "
                           f"and {tuple(b._data.shape)}")
    return mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def floor_divide(input, other):
    """floor(input / other), as torch.floor_divide and `//` (not differentiable)."""
    a, b = _arg(input), _arg(other)
    like_t = a if isinstance(a, TensorBase) else _tensor(b, "floor_divide")
    a, b = P.operands("floor_divide", a, b)
    av = a._data if isinstance(a, TensorBase) else a
    bv = b._data if isinstance(b, TensorBase) else b
    try:
        out = np.floor_divide(av, bv)
    except OverflowError:
        out = np.floor_divide(*_wrapped_ints(av, bv))
    return like(like_t, np.asarray(out))


all = _logical_reduction("all", np.all)
any = _logical_reduction("any", np.any)


def _scalar(v):
    return v.item() if isinstance(v, _generic) else v


def where(condition, input=None, other=None):
    if input is None and other is None:  # torch.where(cond) = nonzero(cond, as_tuple=True)
        c = _tensor(condition, "where")
        a = c._data if c._data.ndim else c._data.reshape(1)  # nonzero(cond, as_tuple=True)
        return tuple(like(c, i.astype(np.int64)) for i in np.nonzero(a))
    c = condition._data if isinstance(condition, TensorBase) else np.asarray(condition)
    if c.dtype != np.bool_:
        c = c.astype(bool)
    a, b = _arg(input), _arg(other)
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        # where(cond, 1.0, 0.0): the values become a tensor like the condition
        a = like(_tensor(condition, "where"), to_array(a))
    a, b = P.operands(P.ARITH, a, b)
    return apply(E.where, c, a, b)


# ---- reductions ------------------------------------------------------------------
def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(int(d) for d in dim) if len(dim) else None
    return int(dim)


_UNSET = object()


def _np_alias(name, value, alias, alias_name, default):
    """torch accepts NumPy's names `axis` / `keepdims` for `dim` / `keepdim` (its
    argument parser's aliases); giving both is its TypeError."""
    if alias is _UNSET:
        return value
    if value is not default:
        raise TypeError(f"{name}() got an unexpected keyword argument '{alias_name}'")
    return alias


def _reduction(op):
    def f(input, dim=None, keepdim=False, *, dtype=None, axis=_UNSET, keepdims=_UNSET):
        x = _tensor(input)
        if dtype is not None:
            x = x.to(dtype)
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        d = _dims(dim)
        if op is R.sum and x._data.dtype.kind in "biu" and dtype is None:
            x = x.to(_dt.int64)  # PyTorch sums bool/int to int64
        _check_dims(op.name, x, d)
        return apply(op, x, axis=d, keepdims=bool(keepdim))
    f.__name__ = op.name
    return f


def _check_dims(name, x, d):
    if d is None:
        return
    nd = builtins.max(x._data.ndim, 1)
    for a in (d if isinstance(d, tuple) else (d,)):
        if not -nd <= a < nd:
            raise IndexError(f"{name}: Dimension out of range (expected to be in range of "
                             f"[{-nd}, {nd - 1}], but got {a})")


sum = _reduction(R.sum)
mean = _reduction(R.mean)
amax = _reduction(R.amax)
amin = _reduction(R.amin)
logsumexp = _reduction(R.logsumexp)


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=_UNSET, keepdims=_UNSET):
    if axis is not _UNSET:  # NumPy's name given
        dim = _np_alias("prod", dim, axis, "axis", None)
    if keepdims is not _UNSET:  # NumPy's name given
        keepdim = _np_alias("prod", keepdim, keepdims, "keepdims", False)
    x = _tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    elif x._data.dtype.kind in "biu":
        x = x.to(_dt.int64)  # PyTorch multiplies bool/int to int64 (NumPy: uint8 -> uint64)
    _check_dims("prod", x, dim)
    return apply(R.prod, x, axis=dim, keepdims=bool(keepdim))


def _max_min(op_full, op_dim, pair):
    result = structseq(op_full.name[:3], ["values", "indices"])  # torch.return_types.max

    def f(input, dim=None, keepdim=False, *, axis=_UNSET, keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op_dim.name[:3], dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op_dim.name[:3], keepdim, keepdims, "keepdims", False)
        x = _tensor(input)
        if isinstance(dim, TensorBase):
            return pair(x, dim)
        if dim is None:
            if x._data.size == 0:
                raise RuntimeError(f"{op_full.name}(): Expected reduction dim to be specified "
                                   "for input.numel() == 0.")
            return apply(op_full, x, axis=None, keepdims=False)
        _check_dims(op_dim.name, x, dim)
        vals, saved = apply_saved(op_dim, x, axis=int(dim), keepdims=bool(keepdim))
        return result(vals, like(x, saved["indices"].astype(np.int64)))
    return f


max = _max_min(R.max_all, R.max_dim, maximum)
min = _max_min(R.min_all, R.min_dim, minimum)


def _var_std(op):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=_UNSET,
          keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        x = _tensor(input)
        if isinstance(dim, bool):  # legacy overload var(unbiased)
            dim, unbiased = None, dim
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        d = _dims(dim)
        _check_dims(op.name, x, d)
        return apply(op, x, axis=d, correction=correction, keepdims=bool(keepdim))
    f.__name__ = op.name
    return f


var = _var_std(R.var)
std = _var_std(R.std)


def _arg_reduction(op):
    def f(input, dim=None, keepdim=False, *, axis=_UNSET, keepdims=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if keepdims is not _UNSET:  # NumPy's name given
            keepdim = _np_alias(op.name, keepdim, keepdims, "keepdims", False)
        x = _tensor(input)
        if x._data.dtype == np.bool_:
            raise RuntimeError(f"{op.name}(): does not support bool input")
        if dim is None:
            out = op.forward(x._data.reshape(-1), axis=0)
            if keepdim:
                out = np.reshape(out, (1,) * x._data.ndim)
            return like(x, np.asarray(out, dtype=np.int64))
        _check_dims(op.name, x, dim)
        return like(x, op.forward(x._data, axis=int(dim), keepdims=bool(keepdim)).astype(np.int64))
    f.__name__ = op.name
    return f


argmax = _arg_reduction(R.argmax)
argmin = _arg_reduction(R.argmin)


def _along_dim(op):
    """softmax / log_softmax: one dim, an optional dtype to compute in."""
    def f(input, dim=None, dtype=None, *, axis=_UNSET):
        if axis is not _UNSET:  # NumPy's name given
            dim = _np_alias(op.name, dim, axis, "axis", None)
        if dim is None:
            raise TypeError(f"{op.name}() missing required argument 'dim'")
        x = _tensor(input)
        if dtype is not None:
            x = x.to(dtype)
        _check_dims(op.name, x, dim)
        return apply(op, x, axis=int(dim))
    f.__name__ = op.name
    return f


softmax = _along_dim(SM.softmax)
log_softmax = _along_dim(SM.log_softmax)


def matmul(input, other):
    a, b = _tensor(input), _tensor(other)
    return apply(L.matmul, a, b)


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}")
    return matmul(input, mat2)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError("1D tensors expected, but got "
                           f"{input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


# ---- shapes (the core set; more in shape_functions.py) ----------------------------
def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:  # Python ints as they are (a generator costs a resumption per size)
        if type(s) is not int:
            return tuple(int(s) for s in shape)  # NumPy ints, 0-d tensors
    return shape


def reshape(input, *shape):
    x = _tensor(input)
    shape = _shape_arg(shape)
    if shape == x._data.shape:
        return x if not x._rg else apply(S.reshape, x, shape=shape)
    if shape and builtins.min(shape) < -1:  # NumPy reads any negative size as -1 (infer)
        bad = builtins.min(shape)
        raise RuntimeError(f"invalid shape dimension {bad} at index {shape.index(bad)} of "
                           f"shape {list(shape)}")
    return apply(S.reshape, x, shape=shape)


def view(input, *shape):
    """x.view(*shape) is reshape; x.view(dtype) reads the same bytes as another dtype."""
    if len(shape) == 1 and isinstance(shape[0], (_dt.dtype, np.dtype)):
        return _view_dtype(_tensor(input), shape[0])
    return reshape(input, *shape)


def _view_dtype(x, dtype):
    """torch's bitcast view (llm.c writes bfloat16 weights as `t.view(torch.int16)`): it
    shares x's memory and has no history (torch records no gradient through it). Another
    element size rescales the last dim, with torch's checks on that dim."""
    dt = _dt.as_dtype(dtype)
    a = x._data
    if dt.itemsize != a.dtype.itemsize:
        what = (f"to view {_dt.torch_name(a.dtype)} as {_dt.torch_name(dt)} (different "
                "element sizes)")
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.shape[-1] != 1 and a.strides[-1] != a.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{a.strides[-1] // a.itemsize}")
        if dt.itemsize > a.itemsize and a.shape[-1] % (dt.itemsize // a.itemsize):
            raise RuntimeError(f"self.size(-1) must be divisible by "
                               f"{dt.itemsize // a.itemsize} {what}, but got {a.shape[-1]}")
    return like(x, a.view(dt))


def expand(input, *sizes):
    x = _tensor(input)
    sizes = _shape_arg(sizes)
    nd = len(sizes) - x._data.ndim
    if nd < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({x._data.ndim})")
    shape = tuple(x._data.shape[i - nd] if s == -1 else s for i, s in enumerate(sizes))
    return apply(S.expand, x, shape=shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def permute(input, *dims):
    x = _tensor(input)
    dims = _shape_arg(dims)
    nd = x._data.ndim
    if sorted(d % nd for d in dims) != list(range(nd)) if nd else dims != ():
        raise RuntimeError(f"permute: dims {dims} are not a permutation of the {nd} dims of "
                           f"shape {tuple(x._data.shape)}")
    return apply(S.permute, x, dims=tuple(d % nd for d in dims))


def transpose(input, dim0, dim1):
    x = _tensor(input)
    nd = x._data.ndim
    if nd < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return x
    dims = list(range(nd))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return apply(S.permute, x, dims=tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


# ---- dtype cast ------------------------------------------------------------------


def cast(x, dtype):
    if x._data.dtype == dtype:
        return x
    if dtype.kind != "f":  # an integer or bool copy cuts the graph
        if x._rg:
            _cuts.note(x, f"an integer cast (to {_dt.name(dtype)})")
        return like(x, x._data.astype(dtype))
    return apply(S.cast, x, dtype=dtype)


# ---- comparisons (no gradient) -------------------------------------------------------
def _compare(ufunc, name, promote=True):
    def f(input, other):
        a, b = input, other
        if promote and (isinstance(a, TensorBase) or isinstance(b, TensorBase)):
            # compared in the promoted dtype, as torch: float32 0.1 == 0-d float64 0.1
            a, b = P.operands(P.COMPARE, _arg(a), _arg(b))
        a = a._data if isinstance(a, TensorBase) else a
        b = b._data if isinstance(b, TensorBase) else b
        try:
            out = np.asarray(ufunc(a, b))
        except ValueError:
            raise RuntimeError(f"{name}: the shapes {np.shape(a)} and {np.shape(b)} cannot be "
                               "broadcast together") from None
        return like(input if isinstance(input, TensorBase) else _tensor(other, name), out)
    f.__name__ = name
    return f


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = less = _compare(np.less, "lt")
le = less_equal = _compare(np.less_equal, "le")
gt = greater = _compare(np.greater, "gt")
ge = greater_equal = _compare(np.greater_equal, "ge")


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
logical_and = _compare(np.logical_and, "logical_and", promote=False)
logical_or = _compare(np.logical_or, "logical_or", promote=False)
logical_xor = _compare(np.logical_xor, "logical_xor", promote=False)


def _bitwise(ufunc, name):
    """bitwise_and/or/xor (`&`, `|`, `^`): integer and bool tensors, torch's promotion;
    on bool tensors they are the logical ops. Not differentiable."""
    def f(input, other):
        a, b = _arg(input), _arg(other)
        like_t = a if isinstance(a, TensorBase) else _tensor(b, name)
        a, b = P.operands(name, a, b)
        av = a._data if isinstance(a, TensorBase) else a
        bv = b._data if isinstance(b, TensorBase) else b
        try:
            out = ufunc(av, bv)
        except OverflowError:
            out = ufunc(*_wrapped_ints(av, bv))
        except ValueError:
            raise RuntimeError(f"{name}: the shapes {np.shape(av)} and {np.shape(bv)} cannot "
                               "be broadcast together") from None
        return like(like_t, np.asarray(out))
    f.__name__ = name
    return f


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def bitwise_not(input):
    """~x: bitwise NOT of an integer tensor, logical NOT of a bool tensor."""
    x = _tensor(input, "bitwise_not")
    if x._data.dtype.kind == "f":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for "
                                  f"'{_dt.torch_name(x._data.dtype)}'")
    return like(x, np.invert(x._data))


def logical_not(input):
    return like(input, np.logical_not(input._data))


def isnan(input):
    return like(input, np.isnan(_tensor(input, "isnan")._data))


def isinf(input):
    return like(input, np.isinf(_tensor(input, "isinf")._data))


def isfinite(input):
    return like(input, np.isfinite(_tensor(input, "isfinite")._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other):
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))




def clone(input):
    return apply(S.clone, _tensor(input))

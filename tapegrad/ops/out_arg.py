"""`out=`: the one helper that gives a public function PyTorch's `out=` keyword.

    add = with_out(functions.add)      # torch.add(a, b, out=c)
    max = with_out(functions.max)      # torch.max(x, 1, out=(values, indices))

With `out` given, as in torch: grad mode on and any argument (or `out`) requiring grad
is refused ("functions with out=... arguments don't support automatic
differentiation"); the result is computed, cast to out's dtype if torch allows the
cast (a float result never goes into an integer `out`), written into `out` (resized,
with torch's warning, when its shape differs and it is not empty), and `out` is
returned. Its version counter goes up like any in-place change. A function returning
several tensors (max/min/sort/topk/kthvalue/median with a dim) takes a tuple `out`, one
tensor per result, each written by the same rules.
"""
import functools
import warnings

import numpy as np

from ..core import grad_mode
from ..core.state import state
from ..core.tensor_base import TensorBase
from . import _args
from .inplace import _cast_error
from .return_types import out_type

_RESIZE = ("An output with one or more elements was resized since it had shape {old}, which "
           "does not match the required output shape {new}. This behavior is deprecated, and "
           "in a future PyTorch release outputs will not be resized unless they have zero "
           "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
           "zero elements with t.resize_(0).")


def _tensors(values):
    for v in values:
        if isinstance(v, TensorBase):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _can_cast(src, dst):
    """torch's canCast: no float -> integer/bool, no integer -> bool."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind == "f" and dst.kind in "biu":
        return False
    return not (src.kind in "iu" and dst.kind == "b")


def _set_array(t, arr):
    # NOTE: the one place a tensor gets a new array (a resize). Written against the
    # array slot of TensorBase: follow its name if it is renamed.
    t._data = arr


def write_out(name, out, res, exact=False):
    """Write the result `res` into `out` (torch's rules) and return `out`."""
    if not isinstance(out, TensorBase):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    src = res._data
    dst = out._data
    if exact:
        _args._check_out_dtype(name, src.dtype, dst.dtype)
    if src.dtype != dst.dtype and not _can_cast(src.dtype, dst.dtype):
        raise _cast_error(src.dtype, dst.dtype)
    if src.shape == dst.shape:  # (a resized out gets new memory)
        _args._check_out_internal_overlap(out)
    if src.shape != dst.shape:
        if dst.size:
            warnings.warn(_RESIZE.format(old=list(dst.shape), new=list(src.shape)),
                          UserWarning, stacklevel=3)
        _set_array(out, src.astype(dst.dtype, copy=True))
    else:
        np.copyto(dst, src, casting="unsafe")
    out._version_counter[0] += 1
    return out


def with_out(fn, name=None, disjoint=False, exact=False, dense=False):
    """`fn` with PyTorch's `out=` keyword (see the module docstring). disjoint: `out` may
    not overlap an input at all (torch's assert_no_overlap: cat, gather, take ...);
    exact: `out` must have the result's dtype (no cast: gather, index_select, kthvalue);
    dense: an expanded `out` is refused even when it would be resized (index_select,
    take; the others refuse it only when written as it is)."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if state.grad_enabled and any(
                t._rg for t in _tensors((out,) + args + tuple(kwargs.values()))):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
        if dense:
            for o in _tensors((out,)):
                _args._check_out_internal_overlap(o)
        with grad_mode.no_grad():
            res = fn(*args, **kwargs)
        if disjoint:
            inputs = list(_tensors(args + tuple(kwargs.values())))
            for o, r in zip(_tensors((out,)), _tensors((res,))):
                _args._check_out_disjoint(o, inputs, r._data.shape)
        if isinstance(res, tuple):
            return _write_outs(name, out, res, exact)
        if isinstance(out, (tuple, list)):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        return write_out(name, out, res, exact)
    return f


def _write_outs(name, out, res, exact=False):
    """A function returning (values, indices) (max/min/sort/topk ... with a dim): `out`
    is a tuple of as many tensors; the result is the function's own namedtuple of them
    (torch's `torch.return_types.max_out`: its `_out` twin)."""
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, TensorBase) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != len(res):
        raise TypeError(f"{name}(): argument 'out' must be tuple of {len(res)} Tensors, "
                        f"not {len(out)}")
    written = [write_out(name, o, r, exact) for o, r in zip(out, res)]
    return out_type(type(res))(*written) if hasattr(res, "_fields") else tuple(written)

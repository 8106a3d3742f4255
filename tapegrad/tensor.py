"""Tensor: a thin facade over a NumPy array plus the autograd bookkeeping.

Operators and methods call the public op functions (`tapegrad.ops.functions`), which
run the derivative table; no derivative code lives here. A tensor made by an op
carries its recipe in `grad_fn` (see `autograd.graph.Node`); a leaf has none.
"""
import math

import numpy as np

from . import dtypes as _dt
from .autograd import graph as _graph

_ndarray = np.ndarray


class Tensor:
    """An n-dimensional array that can record the operations applied to it."""

    __slots__ = ("data", "_rg", "grad", "grad_fn", "_version", "_hooks",
                 "_post_hooks", "_fw", "name", "__weakref__")
    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operators
    __hash__ = object.__hash__

    def __init__(self, data, requires_grad=False, dtype=None):
        arr = _to_array(data, dtype)
        self.data = arr
        self.grad = None
        self.grad_fn = None
        self._version = [0]
        self._hooks = None
        self._post_hooks = None
        self._fw = None
        self.name = None
        self._rg = False
        if requires_grad:
            self.requires_grad = True

    # ---- autograd attributes ------------------------------------------------------
    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = bool(flag)
        if self.grad_fn is not None and not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if flag and self.data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (this tensor "
                f"is {self.data.dtype}); indices and masks never need a gradient")
        self._rg = flag

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def retain_grad(self):
        """Keep `.grad` on a non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        from .autograd.hooks import retain_grad
        retain_grad(self)

    @property
    def retains_grad(self):
        from .autograd.hooks import retains_grad
        return retains_grad(self)

    def register_hook(self, hook):
        """`hook(grad)` runs when this tensor's gradient is computed; it may return a
        replacement. Returns a handle with `.remove()`."""
        from .autograd.hooks import register_hook
        return register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """`hook(tensor)` runs on a leaf after its `.grad` was accumulated."""
        from .autograd.hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backpropagate from this tensor; leaves accumulate into `.grad`."""
        _engine.backward([self], None if gradient is None else [gradient],
                         retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def detach(self):
        """The same data with no history: the graph is cut here."""
        t = _make(self.data, False, None)
        t._version = self._version  # shares storage, so it shares the version counter
        return t

    def detach_(self):
        self.grad_fn = None
        self._rg = False
        return self

    # ---- array attributes -----------------------------------------------------------
    @property
    def shape(self):
        return Size(self.data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self.data.shape)
        return self.data.shape[dim]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    def dim(self):
        return self.data.ndim

    def numel(self):
        return int(self.data.size)

    nelement = numel

    @property
    def device(self):
        return "cpu"

    def is_floating_point(self):
        return self.data.dtype.kind == "f"

    def item(self):
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted "
                               "to Scalar")
        return self.data.item()

    def numpy(self):
        """The underlying array (shares memory). Leaves the graph: no gradient flows back."""
        if self._rg:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self.data

    def tolist(self):
        return self.data.tolist()

    def __array__(self, dtype=None, copy=None):
        arr = self.data
        return arr.astype(dtype) if dtype is not None else arr

    def __len__(self):
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        if self.data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.data.shape[0]))

    def __bool__(self):
        if self.data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.data.size} values is "
                               "ambiguous")
        return bool(self.data)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.data.dtype.kind not in "iub" or self.data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted "
                            "to an index")
        return int(self.data.item())

    def __repr__(self):
        body = np.array2string(self.data, separator=", ", prefix="tensor(",
                               precision=4, threshold=200)
        extras = []
        if self.data.dtype not in (_dt.get_default_dtype(), np.dtype("int64"),
                                   np.dtype("bool")):
            extras.append(f"dtype=tapegrad.{self.data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.op.name}>")
        elif self._rg:
            extras.append("requires_grad=True")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    # ---- dtype conversion (differentiable between float dtypes) --------------------
    def to(self, dtype=None, *args, **kwargs):
        if isinstance(dtype, str) and dtype in ("cpu",):
            return self
        dtype = kwargs.get("dtype", dtype)
        if dtype is None:
            return self
        return _fn.cast(self, _dt.as_dtype(dtype))

    def type(self, dtype=None):
        if dtype is None:
            return f"tapegrad.{self.data.dtype}"
        return self.to(dtype)

    def float(self):
        return _fn.cast(self, _dt.float32)

    def double(self):
        return _fn.cast(self, _dt.float64)

    def half(self):
        return _fn.cast(self, _dt.float16)

    def long(self):
        return _fn.cast(self, _dt.int64)

    def int(self):
        return _fn.cast(self, _dt.int32)

    def bool(self):
        return _fn.cast(self, _dt.bool)

    def cpu(self):
        return self

    def contiguous(self):
        return self


class Size(tuple):
    """Tensor shape: a tuple, printed as PyTorch prints it."""

    __slots__ = ()

    def __repr__(self):
        return f"tapegrad.Size({list(self)})"

    def numel(self):
        return math.prod(self)


def _to_array(data, dtype=None):
    """Turn user data into an ndarray with PyTorch's dtype inference."""
    dtype = _dt.as_dtype(dtype)
    if isinstance(data, Tensor):
        arr = data.data
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        if isinstance(data, (str, bytes, dict, set)):
            raise TypeError(f"can't make a tensor from {type(data).__name__}: expected a "
                            "number, a (nested) list of numbers, or an array")
        arr = np.asarray(_unwrap_nested(data))
        if arr.dtype == np.float64 and dtype is None:
            arr = arr.astype(_dt.get_default_dtype())  # Python floats: the default dtype
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"can't make a tensor of dtype {arr.dtype}: tapegrad supports "
                        "bool, integer and floating point data")
    if dtype is not None and arr.dtype != dtype:
        arr = arr.astype(dtype)
    elif arr.dtype not in _dt._SUPPORTED:
        arr = arr.astype(np.int64 if arr.dtype.kind in "iu" else _dt.float64)
    return arr


def _unwrap_nested(data):
    """Lists may hold 0-d tensors: take their values (a list of tensors keeps no graph)."""
    if isinstance(data, (list, tuple)):
        if any(isinstance(d, (Tensor, list, tuple)) for d in data):
            return [_unwrap_nested(d) for d in data]
    if isinstance(data, Tensor):
        return data.data
    return data


_new = object.__new__


def _make(data, requires_grad, grad_fn):
    """Fast constructor for op results: no conversion, no checks."""
    t = _new(Tensor)
    t.data = data
    t._rg = requires_grad
    t.grad = None
    t.grad_fn = grad_fn
    t._version = [0]
    t._hooks = None
    t._post_hooks = None
    t._fw = None
    t.name = None
    return t


_graph.Tensor = Tensor
_graph._make = _make

from .autograd import engine as _engine  # noqa: E402

from .ops import functions as _fn  # noqa: E402  (methods below need the op functions)

_fn._install_methods(Tensor)

from .ops import shape_functions as _shape_fn, index_functions as _index_fn  # noqa: E402

_shape_fn._install_methods(Tensor)
_index_fn._install_methods(Tensor)

from .ops import inplace as _inplace_fn  # noqa: E402  add_, mul_, +=, zero_, copy_, ...

_inplace_fn._install_methods(Tensor)

"""In-place variants of op functions that have no NumPy fast path: `erf_`, `round_`,
`cumprod_`, `nan_to_num_`, `square_`, `floor_`, `fmod_`, `tril_`, ...; and the in-place
shape changes `t_`, `transpose_`, `squeeze_`, `unsqueeze_`.

Each one is `_inplace(self, lambda x: f(x, ...))` (ops/inplace.py): the out-of-place
function computes the result with its table entries, so the derivative is the one
already in the table, and `_inplace` does the bookkeeping (leaf check, rebasing the
history, version counter, views). The old value is always copied for backward
(`needs_old=True`): these are not the optimizer's hot path, and several of the rules
read their input. A result torch would not cast into self's dtype (a float result of an
integer tensor) is refused with torch's message ("result type Float can't be cast to
the desired output type Long").
"""
from ..core import grad_mode
from ..core.state import state
from ..core.tensor_base import like
from . import functions as F
from . import functions_extra as FX
from . import shape_functions as S
from . import trig_functions as TF
from .inplace import LEAF_ERROR, _inplace, _rebase


def _unary(fn, name):
    def method(self):
        return _inplace(self, fn, (), needs_old=True)
    method.__name__ = name
    method.__doc__ = f"In-place {fn.__name__}; returns self."
    return method


erf_ = _unary(FX.erf, "erf_")
erfc_ = _unary(FX.erfc, "erfc_")
erfinv_ = _unary(FX.erfinv, "erfinv_")
square_ = _unary(FX.square, "square_")
reciprocal_ = _unary(FX.reciprocal, "reciprocal_")
floor_ = _unary(F.floor, "floor_")
ceil_ = _unary(F.ceil, "ceil_")
trunc_ = _unary(F.trunc, "trunc_")
log1p_ = _unary(F.log1p, "log1p_")
expm1_ = _unary(F.expm1, "expm1_")
tan_ = _unary(TF.tan, "tan_")
asin_ = arcsin_ = _unary(TF.asin, "asin_")
acos_ = arccos_ = _unary(TF.acos, "acos_")
atan_ = arctan_ = _unary(TF.atan, "atan_")
sinh_ = _unary(TF.sinh, "sinh_")
cosh_ = _unary(TF.cosh, "cosh_")
asinh_ = arcsinh_ = _unary(TF.asinh, "asinh_")
acosh_ = arccosh_ = _unary(TF.acosh, "acosh_")
atanh_ = arctanh_ = _unary(TF.atanh, "atanh_")


def atan2_(self, other):
    """self = atan2(self, other) in place (an integer self is refused: the result is float)."""
    return _inplace(self, lambda x: TF.atan2(x, other), (other,), needs_old=True)


arctan2_ = atan2_
log2_ = _unary(F.log2, "log2_")
log10_ = _unary(F.log10, "log10_")
# fmod_, remainder_ and floor_divide_ (and %=, //=) live in ops/inplace.py with the
# other binary in-place ops (they share its type-promotion check).


def inplace_of(self, fn):
    """self = fn(self) in place, for the activations' `inplace=True` (leaky_relu,
    hardtanh, elu, silu: their out-of-place form keeps the derivative, `_inplace` the
    bookkeeping)."""
    return _inplace(self, fn, (), needs_old=True)


def round_(self, *, decimals=0):
    """In-place round (half to even, torch's `decimals`); returns self."""
    return _inplace(self, lambda x: FX.round(x, decimals=decimals), (), needs_old=True)


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In-place nan_to_num; returns self."""
    return _inplace(self, lambda x: FX.nan_to_num(x, nan, posinf, neginf), (), needs_old=True)


def cumsum_(self, dim, *, dtype=None):
    """In-place cumsum along dim; returns self."""
    return _inplace(self, lambda x: F.cumsum(x, dim, dtype=dtype), (), needs_old=True)


def cumprod_(self, dim, *, dtype=None):
    """In-place cumprod along dim; returns self."""
    return _inplace(self, lambda x: FX.cumprod(x, dim, dtype=dtype), (), needs_old=True)


def tril_(self, diagonal=0):
    """In place: zero above the diagonal; returns self."""
    return _inplace(self, lambda x: S.tril(x, diagonal), (), needs_old=True)


def triu_(self, diagonal=0):
    """In place: zero below the diagonal; returns self."""
    return _inplace(self, lambda x: S.triu(x, diagonal), (), needs_old=True)


# ---- in-place shape changes: the tensor becomes a view of its own memory -----------------
def _restride(self, view):
    """`self` takes the shape `view(self)` gives (a view: no data moves). Under grad mode
    a tensor with history gets the view's node with the old value as its input (as
    torch's TBackward1 / UnsqueezeBackward1); that node is linear and shares memory with
    its input, so a later in-place change follows it back to the memory's owner."""
    tracked = state.grad_enabled and self._rg
    if tracked and self.grad_fn is None:
        raise RuntimeError(LEAF_ERROR)
    if not tracked:
        with grad_mode.recording_off():
            self._data = view(self)._data
        self._version[0] += 1
        return self
    old = like(self, self._data, self._rg, self.grad_fn)
    old._out, old._fw = self._out, self._fw
    res = view(old)
    self._data = res._data
    self._version[0] += 1
    _rebase(self, old, res.grad_fn, res)
    return self


def t_(self):
    """In-place t(): self becomes its transpose (a 0-d, 1-d or 2-d tensor)."""
    return _restride(self, F.t)


def transpose_(self, dim0, dim1):
    """In-place transpose of dims dim0, dim1."""
    return _restride(self, lambda x: F.transpose(x, dim0, dim1))


def squeeze_(self, dim=None):
    """In-place squeeze (all size-1 dims, or the given dim(s))."""
    return _restride(self, lambda x: S.squeeze(x, dim))


def unsqueeze_(self, dim):
    """In-place unsqueeze: a size-1 dim at `dim`."""
    return _restride(self, lambda x: S.unsqueeze(x, dim))

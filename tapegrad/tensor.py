"""Tensor: the user-facing class. Its whole API is declared in this class body.

Each method is one line delegating to an op function (ops/functions.py, ops/
shape_functions.py, ops/index_functions.py, ops/inplace.py), which runs the
derivative table; no derivative code lives here. The data and the autograd slots
are those of `core.tensor_base.TensorBase`; a tensor made by an op carries its
recipe in `grad_fn` (core/node.py), a leaf has none.
"""
import math
import warnings

import numpy as np

from . import device as _device
from . import dtypes as _dt
from . import legacy_args as _legacy
from . import printing as _printing
from .core import backward as _backward
from .core import cuts as _cuts
from .core import grad_attribute as _grad_attribute
from .core import grad_mode as _grad_mode
from .core import hooks as _hooks
from .core import shared_memory as _shm
from .core import tape as _tape
from .core.tensor_base import TensorBase, like, make as _make
from .ops import functions as F
from .ops import functions_composite as FC
from .ops import functions_extra as FX
from .ops import functions_misc as FMI
from .ops import functions_more as FM
from .ops import functions_more2 as FM2
from .ops import functions_more3 as FM3
from .ops import functions_more4 as FM4
from .ops import index_functions as I
from .ops import inplace as IP
from .ops import inplace_more as IM
from .ops import inplace_more2 as IM2
from .ops import linalg_decomp_functions as LDF
from .ops import linalg_functions as LF
from .ops import linalg_solve_functions as LSF
from .ops import random_fills as RF
from .ops import shape_functions as S
from .ops import trig_functions as TF
from .ops.xp import namespace as _namespace


def _axis(dim, ndim):
    """`dim` of size(dim) / stride(dim) as an index, with torch's errors."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return S._dim(dim, ndim)


class Tensor(TensorBase):
    """An n-dimensional array that can record the operations applied to it."""

    __slots__ = ()
    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operators
    __hash__ = TensorBase.__hash__

    def __init__(self, *args, requires_grad=False, dtype=None, device=None):
        """`Tensor(data)`, `Tensor(2, 3)`, `Tensor()`: PyTorch's legacy constructor
        (legacy_args.py). Prefer `tg.tensor(data)`, which infers the dtype."""
        _device.check(device, "Tensor()")
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        data, dtype = _legacy.legacy_data(args, _dt.as_dtype(dtype))
        TensorBase.__init__(self, data, requires_grad=requires_grad, dtype=dtype)

    @classmethod
    def _of(cls, data, requires_grad=False, dtype=None):
        """The library's own constructor: an ndarray (or a tensor's array) keeps its dtype
        and memory. The public `Tensor(ndarray)` converts to the default dtype, as torch's."""
        if isinstance(data, TensorBase):
            data = data._data
        elif not isinstance(data, np.ndarray):
            return cls(data, requires_grad=requires_grad, dtype=dtype)
        t = cls.__new__(cls)
        TensorBase.__init__(t, data, requires_grad=requires_grad, dtype=dtype)
        return t

    # ---- autograd ------------------------------------------------------------------
    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    grad = _grad_attribute.grad  # warns on a non-leaf's .grad read, as torch

    def retain_grad(self):
        """Keep `.grad` on a non-leaf tensor after backward (leaves always keep it)."""
        _hooks.retain_grad(self)

    @property
    def retains_grad(self):
        return _hooks.retains_grad(self)

    def register_hook(self, hook):
        """`hook(grad)` runs when this tensor's gradient is computed; it may return a
        replacement. Returns a handle with `.remove()`."""
        return _hooks.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """`hook(tensor)` runs on a leaf after its `.grad` was accumulated."""
        return _hooks.register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backpropagate from this tensor; leaves accumulate into `.grad`."""
        _backward.backward(self if gradient is None else [self],  # the bare tensor:
                           None if gradient is None else [gradient],  # backward's fast path
                           retain_graph=retain_graph, create_graph=create_graph,
                           inputs=inputs)

    @property
    def data(self):
        """PyTorch's `.data` (core/tensor_base.py). Taken from a COMPUTED tensor it cuts the
        graph, so where is noted for why_no_grad; a parameter's `p.data` (an update, an
        init) is not a cut of anything backward needs."""
        if self.grad_fn is not None and self._rg:
            _cuts.note(self, ".data")
        return _make(self._result_type, self._data)  # TensorBase.data, one call less

    data = data.setter(TensorBase.data.fset)

    def detach(self):
        """The same data with no history: the graph is cut here."""
        if self._rg:  # remember where, for autograd.why_no_grad (core/cuts.py)
            _cuts.note(self, ".detach()")
        t = like(self, self._data)
        t._version = self._version  # shares storage, so it shares the version counter
        return t

    def detach_(self):
        if self._rg:
            _cuts.note(self, ".detach_()")
        self.grad_fn = None
        self._rg = False
        return self

    def __array_namespace__(self, api_version=None):
        """The namespace backward rules use on tensors (create_graph=True): ops/xp.py."""
        return _namespace

    # ---- array attributes -----------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_axis(dim, self._data.ndim)]

    def stride(self, dim=None):
        """Element strides: torch's layout of the same view is NumPy's, in bytes / item
        size (a transpose swaps them, a slice keeps them, expand gives 0)."""
        a = self._data
        strides = tuple(b // a.itemsize for b in a.strides)
        return strides if dim is None else strides[_axis(dim, a.ndim)]

    def is_contiguous(self):
        """The elements lie in row-major order without gaps (the strides of size-1 dims
        do not count, in NumPy's flag as in torch)."""
        return self._data.flags.c_contiguous

    @property
    def dtype(self):
        """A `tg.dtype` (prints as `tapegrad.float32`; equal to the NumPy dtype)."""
        return _dt.of(self._data.dtype)

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    @property
    def device(self):
        return _device.CPU

    is_cuda = False
    is_cpu = True
    is_mps = False
    is_meta = False
    # the other backends and layouts torch asks about (`input.is_cuda or input.is_xpu` in
    # dcgan's forward): a dense, strided CPU tensor is none of them
    is_xpu = is_ipu = is_xla = is_mtia = is_maia = is_vulkan = False
    is_sparse = is_sparse_csr = is_quantized = is_mkldnn = is_nested = False

    def get_device(self):
        return -1  # torch's answer for a CPU tensor

    def is_pinned(self):
        return False

    # an anonymous MAP_SHARED block (core/shared_memory.py); tg.multiprocessing sends it
    share_memory_ = _shm.share_memory_
    is_shared = _shm.is_shared

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def item(self):
        if self._rg:
            _cuts.note(self, ".item()")
        return self._scalar()

    def _scalar(self):
        _tape.data_read("a Python number")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.item()

    def numpy(self, *, force=False):
        """The underlying array (shares memory). Leaves the graph: no gradient flows back.
        `force=True` (torch's flag) allows it on a tensor that requires grad."""
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        _tape.data_read(".numpy()")
        return self._data

    def tolist(self):
        if self._rg:
            _cuts.note(self, ".tolist()")
        _tape.data_read(".tolist()")
        return self._data.tolist()

    def __array__(self, dtype=None, copy=None):
        if self._rg:
            _cuts.note(self, "a NumPy conversion (np.asarray)")
        _tape.data_read("a NumPy conversion")
        arr = self._data
        return arr.astype(dtype) if dtype is not None else arr

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} values is "
                               "ambiguous")
        _tape.data_read("bool()")
        return bool(self._data)

    def __float__(self):
        if self._rg:
            _cuts.note(self, "float()")
            if _grad_mode.is_grad_enabled():  # torch is silent under no_grad (LBFGS.step)
                _warn_scalar_once()
        return float(self._scalar())

    def __int__(self):
        if self._rg:
            _cuts.note(self, "int()")
        return int(self._scalar())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted "
                            "to an index")
        _tape.data_read("an index")
        return int(self._data.item())

    __repr__ = _printing.repr_tensor

    def __format__(self, spec):
        """A 0-d tensor formats as its number (`f"{loss:.4f}"`, `f"{t}"` gives `1.25`),
        as in torch; other tensors only with an empty spec (their str)."""
        if self._data.ndim == 0 and type(self) is Tensor:
            _tape.data_read("format()")
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)

    # ---- dtype and device conversion (differentiable between float dtypes) ----------
    def to(self, *args, **kwargs):
        """`to(dtype)`, `to(device, dtype=None)`, `to(other)`, with `non_blocking` and
        `copy` (a new tensor even when nothing changes); devices other than the CPU are
        refused by name."""
        dtype = _to_args(args, kwargs)
        out = self if dtype is None else F.cast(self, dtype)
        if kwargs.get("copy") and out is self:
            out = F.clone(self)
        return out

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """Refused with one error naming the device: tapegrad runs on the CPU only."""
        if device is None or isinstance(device, (int, np.integer)):
            device = _device.device("cuda", device)
        _device.check(device, "Tensor.cuda()")
        raise RuntimeError(f"Tensor.cuda(): invalid device '{device}', must be a cuda device")

    def type(self, dtype=None, non_blocking=False):
        """`t.type()` names the legacy type ('tapegrad.FloatTensor'); `t.type(T)` casts
        to a dtype, a legacy type name or class (`t.type(tg.LongTensor)`)."""
        if dtype is None:
            return f"{_printing.PREFIX}.{_dt.legacy_name(self._data.dtype)}"
        return self.to(_dt.as_dtype(getattr(dtype, "dtype", dtype)))

    def type_as(self, other):
        return self.to(other.dtype)

    def float(self):
        return F.cast(self, _dt.float32)

    def double(self):
        return F.cast(self, _dt.float64)

    def half(self):
        return F.cast(self, _dt.float16)

    def long(self):
        return F.cast(self, _dt.int64)

    def int(self):
        return F.cast(self, _dt.int32)

    def bool(self):
        return F.cast(self, _dt.bool)

    def cpu(self):
        return self

    # ---- new_*: tensors with this one's dtype (torch's methods) -----------------------
    def _new(self, array, dtype, requires_grad):
        t = like(self, array.astype(_dt.as_dtype(dtype) or self._data.dtype, copy=False))
        return t.requires_grad_(requires_grad) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.zeros(_size_arg(size)), dtype, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.ones(_size_arg(size)), dtype, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.empty(_size_arg(size)), dtype, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return self._new(np.full(_size_arg((size,)), fill_value), dtype, requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A copy of `data` (no history), with this tensor's dtype unless `dtype` is given."""
        arr = np.array(data._data if isinstance(data, TensorBase) else data)
        return self._new(arr, dtype, requires_grad)

    def contiguous(self):
        """self when row-major already; else a row-major copy, recorded as torch records it
        (CloneBackward0): an in-place change of the result leaves self as it was."""
        return self if self._data.flags.c_contiguous else F.clone(self)

    clone = F.clone

    # ---- operators -------------------------------------------------------------------
    # The operators are the public binary functions (one place turns a broadcasting
    # failure into an error naming the op and both shapes, for x + y and y + x alike).
    __add__ = F._add
    __sub__ = F._sub
    __mul__ = F.mul
    __truediv__ = F.div
    __pow__ = F.pow
    __matmul__ = F.matmul

    # `2 * x` and `2 + x` are recorded as torch records them, mul(x, 2) / add(x, 2):
    # next_functions in torch's order, the same values (both ops commute bit for bit),
    # and the tensor-first fast path of the binary functions
    def __radd__(self, other):
        return F._add(self, other)

    def __rsub__(self, other):
        return F._sub(other, self)

    def __rmul__(self, other):
        return F.mul(self, other)

    def __rtruediv__(self, other):
        # torch's Tensor.__rdiv__: `s / x` is x.reciprocal() * s (two roundings: other bits
        # than s / x in about a quarter of the elements, and its gradient is that chain's)
        return F.mul(FX.reciprocal(self), other)

    def __rpow__(self, other):
        return F.pow(other, self)

    def __rmatmul__(self, other):
        return F.matmul(other, self)

    __neg__ = F.neg
    __abs__ = F.abs

    def __pos__(self):
        return self

    __eq__ = F.eq_operator  # `t == None` is False (F._operator)
    __ne__ = F.ne_operator
    __lt__ = F.lt_operator
    __le__ = F.le_operator
    __gt__ = F.gt_operator
    __ge__ = F.ge_operator
    __and__ = F.bitwise_and  # logical on bool tensors, bitwise on integers (torch)
    __or__ = F.bitwise_or
    __xor__ = F.bitwise_xor
    __iand__ = IP.bitwise_and_
    __ior__ = IP.bitwise_or_
    __ixor__ = IP.bitwise_xor_
    bitwise_and = F.bitwise_and
    bitwise_or = F.bitwise_or
    bitwise_xor = F.bitwise_xor
    bitwise_not = F.bitwise_not
    bitwise_and_ = IP.bitwise_and_
    bitwise_or_ = IP.bitwise_or_
    bitwise_xor_ = IP.bitwise_xor_

    def __rand__(self, other):
        return F.bitwise_and(other, self)

    def __ror__(self, other):
        return F.bitwise_or(other, self)

    def __rxor__(self, other):
        return F.bitwise_xor(other, self)

    def __invert__(self):
        if self._data.dtype.kind == "f":
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return F.bitwise_not(self)
    __getitem__ = I.getitem
    __setitem__ = I.setitem
    __iadd__ = IP.add_
    __isub__ = IP.sub_
    __imul__ = IP.mul_
    __itruediv__ = IP.div_
    __ifloordiv__ = IP.floor_divide_
    __imod__ = IP.remainder_
    __ipow__ = IP.pow_

    # ---- elementwise -------------------------------------------------------------------
    add = F.add
    sub = subtract = F.sub
    mul = multiply = F.mul
    div = divide = F.div
    pow = F.pow
    neg = negative = F.neg
    exp = F.exp
    log = F.log
    sqrt = F.sqrt
    log2 = F.log2
    log10 = F.log10
    log1p = F.log1p
    expm1 = F.expm1
    floor = F.floor
    ceil = F.ceil
    trunc = fix = F.trunc
    rsqrt = F.rsqrt
    abs = absolute = F.abs
    sign = F.sign
    sin = F.sin
    cos = F.cos
    tanh = F.tanh
    sigmoid = F.sigmoid
    relu = F.relu
    maximum = F.maximum
    minimum = F.minimum
    clamp = clip = F.clamp
    clamp_min = F.clamp_min
    clamp_max = F.clamp_max
    remainder = F.remainder
    fmod = F.fmod
    __mod__ = F.remainder

    def __rmod__(self, other):
        return F.remainder(other, self)

    all = F.all
    cumsum = F.cumsum
    outer = ger = F.outer
    floor_divide = F.floor_divide
    __floordiv__ = F.floor_divide

    def __rfloordiv__(self, other):
        return F.floor_divide(other, self)

    any = F.any
    erf = FX.erf
    erfc = FX.erfc
    erfinv = FX.erfinv
    tan = TF.tan
    asin = arcsin = TF.asin
    acos = arccos = TF.acos
    atan = arctan = TF.atan
    atan2 = arctan2 = TF.atan2
    sinh = TF.sinh
    cosh = TF.cosh
    asinh = arcsinh = TF.asinh
    acosh = arccosh = TF.acosh
    atanh = arctanh = TF.atanh
    round = FX.round
    nan_to_num = FX.nan_to_num
    square = FX.square
    lerp = FC.lerp
    addcmul = FC.addcmul
    addcdiv = FC.addcdiv
    addmm = FC.addmm
    mv = FC.mv
    ravel = FC.ravel
    tile = FC.tile
    isclose = FC.isclose
    count_nonzero = FC.count_nonzero
    reciprocal = FX.reciprocal
    histc = FX.histc
    bincount = FX.bincount
    histogram = FX.histogram
    cumprod = FX.cumprod
    median = FX.median
    nanmedian = FX.nanmedian
    bernoulli = FX.bernoulli
    bernoulli_ = FX.bernoulli_
    norm = LF.norm
    cross = LSF.cross
    det = LSF.det
    slogdet = LSF.slogdet
    logdet = LSF.logdet
    inverse = LSF.inverse
    svd = LDF.svd
    diag = FX.diag
    diagonal = FX.diagonal
    diag_embed = FX.diag_embed
    trace = FX.trace
    # torch methods real programs use (ops/functions_more.py: compositions; functions_misc.py)
    unfold = FM.unfold
    diff = FM.diff
    take = FM.take
    index_fill = FM.index_fill
    index_copy = FM.index_copy
    masked_scatter = FM.masked_scatter
    quantile = FM.quantile
    nanquantile = FM.nanquantile
    rot90 = FM.rot90
    logaddexp = FM.logaddexp
    logaddexp2 = FM.logaddexp2
    kron = FM.kron
    nansum = FM.nansum
    nanmean = FM.nanmean
    frac = FM.frac
    unique_consecutive = FMI.unique_consecutive
    data_ptr = FMI.data_ptr
    element_size = FMI.element_size
    nbytes = property(FMI.nbytes)
    ndimension = FMI.ndimension
    byte = FMI.byte
    short = FMI.short
    char = FMI.char
    new = FMI.new
    # more torch methods (ops/functions_more2.py, 3, 4; in place: ops/inplace_more2.py)
    xlogy = FM2.xlogy
    hypot = FM2.hypot
    copysign = FM2.copysign
    heaviside = FM2.heaviside
    deg2rad = FM2.deg2rad
    rad2deg = FM2.rad2deg
    sinc = FM2.sinc
    exp2 = FM2.exp2
    logit = FM2.logit
    signbit = FM2.signbit
    fmax = FM2.fmax
    fmin = FM2.fmin
    true_divide = F.true_divide
    addmv = FM3.addmv
    addr = FM3.addr
    baddbmm = FM3.baddbmm
    addbmm = FM3.addbmm
    inner = FM3.inner
    vdot = FM3.vdot
    dist = FM3.dist
    renorm = FM3.renorm
    diagflat = FM3.diagflat
    split_with_sizes = FM3.split_with_sizes
    scatter_reduce = FM4.scatter_reduce
    scatter_reduce_ = FM4.scatter_reduce_
    cummax = FM4.cummax
    cummin = FM4.cummin
    aminmax = FM4.aminmax
    fill_diagonal_ = FM4.fill_diagonal_
    as_strided = FM4.as_strided
    resize_ = FM4.resize_
    resize_as_ = FM4.resize_as_
    xlogy_ = IM2.xlogy_
    hypot_ = IM2.hypot_
    copysign_ = IM2.copysign_
    heaviside_ = IM2.heaviside_
    deg2rad_ = IM2.deg2rad_
    rad2deg_ = IM2.rad2deg_
    sinc_ = IM2.sinc_
    exp2_ = IM2.exp2_
    logit_ = IM2.logit_
    renorm_ = IM2.renorm_
    addmv_ = IM2.addmv_
    addr_ = IM2.addr_
    baddbmm_ = IM2.baddbmm_
    addbmm_ = IM2.addbmm_

    # ---- reductions --------------------------------------------------------------------
    sum = F.sum
    mean = F.mean
    prod = F.prod
    max = F.max
    min = F.min
    amax = F.amax
    amin = F.amin
    var = F.var
    std = F.std
    logsumexp = F.logsumexp
    argmax = F.argmax
    argmin = F.argmin
    softmax = F.softmax
    log_softmax = F.log_softmax

    # ---- linear algebra ----------------------------------------------------------------
    matmul = F.matmul
    mm = F.mm
    bmm = F.bmm
    dot = F.dot

    # ---- comparisons and tests (no gradient) -------------------------------------------
    eq = F.eq
    ne = F.ne
    lt = F.lt
    le = F.le
    gt = F.gt
    ge = F.ge
    logical_not = F.logical_not
    logical_and = F.logical_and
    logical_or = F.logical_or
    logical_xor = F.logical_xor
    less = F.lt
    less_equal = F.le
    greater = F.gt
    greater_equal = F.ge
    not_equal = F.ne
    isnan = F.isnan
    isinf = F.isinf
    isfinite = F.isfinite
    allclose = F.allclose
    equal = F.equal

    # ---- shapes ------------------------------------------------------------------------
    reshape = F.reshape
    view = F.view  # also view(dtype): the bytes read as another dtype
    expand = F.expand
    broadcast_to = F.broadcast_to
    permute = F.permute
    transpose = swapaxes = F.transpose
    t = F.t
    flatten = S.flatten
    unflatten = S.unflatten
    squeeze = S.squeeze
    unsqueeze = S.unsqueeze
    repeat = S.repeat
    movedim = moveaxis = S.movedim
    tensor_split = S.tensor_split
    chunk = S.chunk
    unbind = S.unbind
    narrow = S.narrow
    select = S.select
    flip = S.flip
    fliplr = S.fliplr
    flipud = S.flipud
    roll = S.roll
    tril = S.tril
    triu = S.triu

    def split(self, split_size, dim=0):
        return S.split(self, split_size, dim)

    def expand_as(self, other):
        return F.expand(self, other.shape)

    def view_as(self, other):
        return F.reshape(self, other.shape)

    def reshape_as(self, other):
        return F.reshape(self, other.shape)

    @property
    def T(self):
        return F.permute(self, tuple(range(self._data.ndim))[::-1])

    @property
    def mT(self):
        return F.transpose(self, -2, -1)

    # ---- indexing ----------------------------------------------------------------------
    gather = I.gather
    scatter = I.scatter
    scatter_add = I.scatter_add
    index_select = I.index_select
    index_add = I.index_add
    masked_fill = I.masked_fill
    masked_select = I.masked_select
    take_along_dim = I.take_along_dim
    sort = I.sort
    argsort = I.argsort
    topk = I.topk
    kthvalue = I.kthvalue
    nonzero = I.nonzero
    argwhere = I.argwhere

    def where(self, condition, other):  # torch's x.where(cond, y) is torch.where(cond, x, y)
        return F.where(condition, self, other)

    unique = I.unique
    multinomial = I.multinomial
    index_put = I.index_put
    repeat_interleave = I.repeat_interleave

    # ---- in place (ops/inplace.py: the same table entries, written into self) ----------
    add_ = IP.add_
    sub_ = subtract_ = IP.sub_
    mul_ = multiply_ = IP.mul_
    div_ = divide_ = true_divide_ = IP.div_
    floor_divide_ = IP.floor_divide_
    remainder_ = IP.remainder_
    fmod_ = IP.fmod_
    pow_ = IP.pow_
    exp_ = IP.exp_
    log_ = IP.log_
    sqrt_ = IP.sqrt_
    rsqrt_ = IP.rsqrt_
    abs_ = absolute_ = IP.abs_
    sin_ = IP.sin_
    cos_ = IP.cos_
    tanh_ = IP.tanh_
    sigmoid_ = IP.sigmoid_
    relu_ = IP.relu_
    neg_ = negative_ = IP.neg_
    sign_ = IP.sign_
    clamp_ = clip_ = IP.clamp_
    clamp_min_ = IP.clamp_min_
    clamp_max_ = IP.clamp_max_
    addcmul_ = IP.addcmul_
    addcdiv_ = IP.addcdiv_
    lerp_ = IP.lerp_
    fill_ = IP.fill_
    zero_ = IP.zero_
    copy_ = IP.copy_
    masked_fill_ = IP.masked_fill_
    normal_ = IP.normal_
    uniform_ = IP.uniform_
    random_ = RF.random_
    exponential_ = RF.exponential_
    geometric_ = RF.geometric_
    cauchy_ = RF.cauchy_
    log_normal_ = RF.log_normal_
    index_put_ = I.index_put_
    scatter_ = I.scatter_
    scatter_add_ = I.scatter_add_
    index_add_ = I.index_add_
    erf_ = IM.erf_
    erfc_ = IM.erfc_
    erfinv_ = IM.erfinv_
    tan_ = IM.tan_
    asin_ = arcsin_ = IM.asin_
    acos_ = arccos_ = IM.acos_
    atan_ = arctan_ = IM.atan_
    atan2_ = arctan2_ = IM.atan2_
    sinh_ = IM.sinh_
    cosh_ = IM.cosh_
    asinh_ = arcsinh_ = IM.asinh_
    acosh_ = arccosh_ = IM.acosh_
    atanh_ = arctanh_ = IM.atanh_
    round_ = IM.round_
    nan_to_num_ = IM.nan_to_num_
    square_ = IM.square_
    reciprocal_ = IM.reciprocal_
    floor_ = IM.floor_
    ceil_ = IM.ceil_
    trunc_ = fix_ = IM.trunc_
    log1p_ = IM.log1p_
    expm1_ = IM.expm1_
    log2_ = IM.log2_
    log10_ = IM.log10_
    cumsum_ = IM.cumsum_
    cumprod_ = IM.cumprod_
    tril_ = IM.tril_
    t_ = IM.t_
    transpose_ = swapaxes_ = swapdims_ = IM.transpose_
    squeeze_ = IM.squeeze_
    unsqueeze_ = IM.unsqueeze_
    triu_ = IM.triu_
    index_fill_ = FM.index_fill_
    index_copy_ = FM.index_copy_
    masked_scatter_ = FM.masked_scatter_
    frac_ = FM.frac_
    logical_and_ = FMI.logical_and_
    logical_or_ = FMI.logical_or_
    logical_xor_ = FMI.logical_xor_
    logical_not_ = FMI.logical_not_


_SCALAR_WARNED = []


def _warn_scalar_once():
    # torch 2.13 warns (once per process) when float() of a tensor requiring grad drops
    # its history silently: `'%.2f' % loss`, `math.log(p)`; .item() does not warn
    if not _SCALAR_WARNED:
        _SCALAR_WARNED.append(True)
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first.",
                      UserWarning, stacklevel=3)


def _to_args(args, kwargs):
    """The dtype `Tensor.to(...)` asks for (None: keep it), checking every device."""
    allowed = {"dtype", "device", "non_blocking", "copy", "memory_format"}
    bad = set(kwargs) - allowed
    if bad:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(bad)[0]}'")
    dtype = kwargs.get("dtype")
    if "device" in kwargs:
        _device.check(kwargs["device"], "Tensor.to()")
    rest = list(args)
    if rest and isinstance(rest[0], TensorBase):  # to(other): its dtype and device
        dtype = rest.pop(0)._data.dtype
    elif rest and (isinstance(rest[0], (str, _device.device, int, np.integer))
                   and not isinstance(rest[0], bool) and not _is_dtype_name(rest[0])):
        _device.check(rest.pop(0), "Tensor.to()")
    if rest and rest[0] is not None and not isinstance(rest[0], bool):
        if dtype is not None:
            raise TypeError("to() got multiple values for argument 'dtype'")
        dtype = rest.pop(0)
    if len(rest) > 2 or not all(isinstance(r, bool) for r in rest):  # non_blocking, copy
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    if len(rest) == 2:
        kwargs["copy"] = rest[1]
    return _dt.as_dtype(dtype)


def _is_dtype_name(x):
    return isinstance(x, str) and x.replace("torch.", "").replace("tapegrad.", "") in \
        _dt._BY_NAME


def _size_arg(size):
    """new_zeros(2, 3) and new_zeros((2, 3)) alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


class Size(tuple):
    """Tensor shape: a tuple, printed as PyTorch prints it."""

    __slots__ = ()

    def __repr__(self):
        return f"tapegrad.Size({list(self)})"

    def numel(self):
        return math.prod(self)

"""Tensor: the user-facing class. Its whole API is declared in this class body.

Each op method is one line, `name = _family.name`, in its family's section (the
families of ops/: pointwise, special, comparison, conversion, reductions, sorting,
shape, indexing, products, linalg, random); the function runs the derivative table
(ops/rules/<family>.py); no derivative code lives here. The data and the autograd slots
are those of `core.tensor_base.TensorBase`; a tensor made by an op carries its
recipe in `grad_fn` (core/node.py), a leaf has none.
"""
import warnings

import numpy as np

from . import _device
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
from .core import rebase as _rebase
from ._size import Size
from .core.tensor_base import TensorBase, like, make as _make
from .ops import inplace as IP
from .ops import _args as _args
from .ops import comparison as _comparison
from .ops import conversion as _conversion
from .ops import creation as _creation
from .ops import indexing as _indexing
from .ops import linalg as _linalg
from .ops import pointwise as _pointwise
from .ops import products as _products
from .ops import random as _sampling
from .ops import reductions as _reductions
from .ops import shape as _shape
from .ops import sorting as _sorting
from .ops import special as _special
from .ops.xp import namespace as _namespace


def _axis(dim, ndim):
    """`dim` of size(dim) / stride(dim) as an index, with torch's errors."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _args._dim(dim, ndim)


def _not_a_tensor(name, self):
    """torch's error for a reflected operator called unbound on a non-tensor
    (`Tensor.__radd__(2, t)`): Python would otherwise compute `t + 2`."""
    return TypeError(f"descriptor '{name}' requires a 'Tensor' object but received a "
                     f"'{type(self).__name__}'")


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

    # ---- autograd -----------------------------------------------------------------------
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
        t._version_counter = self._version_counter  # shares storage, so the version counter
        return t

    @property
    def _base(self):
        """The tensor this one is a view of (the root of a chain of views), else None."""
        return _rebase.view_base(self)

    def _is_view(self):
        """Is this tensor a view of another (torch: a view op made it)?"""
        return _rebase.view_base(self) is not None

    def detach_(self):
        if self._rg:
            _cuts.note(self, ".detach_()")
        self.grad_fn = None
        self._rg = False
        return self

    def __array_namespace__(self, api_version=None):
        """The namespace backward rules use on tensors (create_graph=True): ops/xp.py."""
        return _namespace

    # ---- array attributes ---------------------------------------------------------------
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
        return self._scalar(True)

    def _scalar(self, named=False):
        if self._data.size != 1:
            _tape.data_read("a Python number")
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        value = self._data.item()
        # (.item() names its tensor: a tape may replay `return loss.item()`)
        _tape.data_read("a Python number", self if named else None, value)
        return value

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
        # NumPy 2's protocol: copy=True (np.array(t)) must hand over a copy, None
        # (np.asarray(t)) shares when it can, False shares or raises, as torch's result.
        if self._rg:
            _cuts.note(self, "a NumPy conversion (np.asarray)")
        _tape.data_read("a NumPy conversion")
        arr = self._data
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as "
                                 f"requested: the tensor is {arr.dtype}, not "
                                 f"{np.dtype(dtype)} (use np.asarray to allow a copy)")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

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

    # ---- dtype and device conversion (differentiable between float dtypes) --------------
    def to(self, *args, **kwargs):
        """`to(dtype)`, `to(device, dtype=None)`, `to(other)`, with `non_blocking` and
        `copy` (a new tensor even when nothing changes); devices other than the CPU are
        refused by name."""
        dtype = _to_args(args, kwargs)
        out = self if dtype is None else _conversion.cast(self, dtype)
        if kwargs.get("copy") and out is self:
            out = _conversion.clone(self)
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
        return _conversion.cast(self, _dt.float32)

    def double(self):
        return _conversion.cast(self, _dt.float64)

    def half(self):
        return _conversion.cast(self, _dt.float16)

    def bfloat16(self):  # NumPy has no bfloat16: refused with the dtype's own TypeError
        _dt.bfloat16.refuse()

    def long(self):
        return _conversion.cast(self, _dt.int64)

    def int(self):
        return _conversion.cast(self, _dt.int32)

    def bool(self):
        return _conversion.cast(self, _dt.bool)

    def cpu(self):
        return self

    # ---- new_*: tensors with this one's dtype (torch's methods) -------------------------
    def _new(self, array, dtype, requires_grad):
        t = like(self, array.astype(_dt.as_dtype(dtype) or self._data.dtype, copy=False))
        return t.requires_grad_(requires_grad) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.zeros(_size_arg(size)), dtype, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.ones(_size_arg(size)), dtype, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.empty(_size_arg(size)), dtype, requires_grad)

    new_empty_strided = _creation.new_empty_strided

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return self._new(np.full(_size_arg((size,)), fill_value), dtype, requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A copy of `data` (no history), with this tensor's dtype unless `dtype` is given."""
        arr = np.array(data._data if isinstance(data, TensorBase) else data)
        return self._new(arr, dtype, requires_grad)

    def contiguous(self):
        """self when row-major already; else a row-major copy, recorded as torch records it
        (CloneBackward0): an in-place change of the result leaves self as it was."""
        return self if self._data.flags.c_contiguous else _conversion.clone(self)

    # ---- pointwise (ops/pointwise.py), in-place forms included -----------------------------
    bitwise_and = _pointwise.bitwise_and
    bitwise_or = _pointwise.bitwise_or
    bitwise_xor = _pointwise.bitwise_xor
    bitwise_not = _pointwise.bitwise_not
    bitwise_and_ = _pointwise.bitwise_and_
    bitwise_or_ = _pointwise.bitwise_or_
    bitwise_xor_ = _pointwise.bitwise_xor_
    add = _pointwise.add
    sub = subtract = _pointwise.sub
    mul = multiply = _pointwise.mul
    div = divide = _pointwise.div
    pow = _pointwise.pow
    neg = negative = _pointwise.neg
    exp = _pointwise.exp
    log = _pointwise.log
    sqrt = _pointwise.sqrt
    log2 = _pointwise.log2
    log10 = _pointwise.log10
    log1p = _pointwise.log1p
    expm1 = _pointwise.expm1
    floor = _pointwise.floor
    ceil = _pointwise.ceil
    trunc = fix = _pointwise.trunc
    rsqrt = _pointwise.rsqrt
    abs = absolute = _pointwise.abs
    sign = _pointwise.sign
    sin = _pointwise.sin
    cos = _pointwise.cos
    tanh = _pointwise.tanh
    sigmoid = _pointwise.sigmoid
    relu = _pointwise.relu
    clamp = clip = _pointwise.clamp
    clamp_min = _pointwise.clamp_min
    clamp_max = _pointwise.clamp_max
    remainder = _pointwise.remainder
    fmod = _pointwise.fmod
    floor_divide = _pointwise.floor_divide
    tan = _pointwise.tan
    asin = arcsin = _pointwise.asin
    acos = arccos = _pointwise.acos
    atan = arctan = _pointwise.atan
    atan2 = arctan2 = _pointwise.atan2
    sinh = _pointwise.sinh
    cosh = _pointwise.cosh
    asinh = arcsinh = _pointwise.asinh
    acosh = arccosh = _pointwise.acosh
    atanh = arctanh = _pointwise.atanh
    round = _pointwise.round
    nan_to_num = _pointwise.nan_to_num
    square = _pointwise.square
    lerp = _pointwise.lerp
    addcmul = _pointwise.addcmul
    addcdiv = _pointwise.addcdiv
    reciprocal = _pointwise.reciprocal
    logaddexp = _pointwise.logaddexp
    logaddexp2 = _pointwise.logaddexp2
    frac = _pointwise.frac
    xlogy = _pointwise.xlogy
    hypot = _pointwise.hypot
    copysign = _pointwise.copysign
    heaviside = _pointwise.heaviside
    deg2rad = _pointwise.deg2rad
    rad2deg = _pointwise.rad2deg
    sinc = _pointwise.sinc
    exp2 = _pointwise.exp2
    logit = _pointwise.logit
    signbit = _pointwise.signbit
    fmax = _pointwise.fmax
    fmin = _pointwise.fmin
    true_divide = _pointwise.true_divide
    xlogy_ = _pointwise.xlogy_
    hypot_ = _pointwise.hypot_
    copysign_ = _pointwise.copysign_
    heaviside_ = _pointwise.heaviside_
    deg2rad_ = _pointwise.deg2rad_
    rad2deg_ = _pointwise.rad2deg_
    sinc_ = _pointwise.sinc_
    exp2_ = _pointwise.exp2_
    logit_ = _pointwise.logit_
    logical_not = _pointwise.logical_not
    logical_and = _pointwise.logical_and
    logical_or = _pointwise.logical_or
    logical_xor = _pointwise.logical_xor
    add_ = _pointwise.add_
    sub_ = subtract_ = _pointwise.sub_
    mul_ = multiply_ = _pointwise.mul_
    div_ = divide_ = true_divide_ = _pointwise.div_
    floor_divide_ = _pointwise.floor_divide_
    remainder_ = _pointwise.remainder_
    fmod_ = _pointwise.fmod_
    pow_ = _pointwise.pow_
    exp_ = _pointwise.exp_
    log_ = _pointwise.log_
    sqrt_ = _pointwise.sqrt_
    rsqrt_ = _pointwise.rsqrt_
    abs_ = absolute_ = _pointwise.abs_
    sin_ = _pointwise.sin_
    cos_ = _pointwise.cos_
    tanh_ = _pointwise.tanh_
    sigmoid_ = _pointwise.sigmoid_
    relu_ = _pointwise.relu_
    neg_ = negative_ = _pointwise.neg_
    sign_ = _pointwise.sign_
    clamp_ = clip_ = _pointwise.clamp_
    clamp_min_ = _pointwise.clamp_min_
    clamp_max_ = _pointwise.clamp_max_
    addcmul_ = _pointwise.addcmul_
    addcdiv_ = _pointwise.addcdiv_
    lerp_ = _pointwise.lerp_
    fill_ = _pointwise.fill_
    zero_ = _pointwise.zero_
    copy_ = _pointwise.copy_
    tan_ = _pointwise.tan_
    asin_ = arcsin_ = _pointwise.asin_
    acos_ = arccos_ = _pointwise.acos_
    atan_ = arctan_ = _pointwise.atan_
    atan2_ = arctan2_ = _pointwise.atan2_
    sinh_ = _pointwise.sinh_
    cosh_ = _pointwise.cosh_
    asinh_ = arcsinh_ = _pointwise.asinh_
    acosh_ = arccosh_ = _pointwise.acosh_
    atanh_ = arctanh_ = _pointwise.atanh_
    round_ = _pointwise.round_
    nan_to_num_ = _pointwise.nan_to_num_
    square_ = _pointwise.square_
    reciprocal_ = _pointwise.reciprocal_
    floor_ = _pointwise.floor_
    ceil_ = _pointwise.ceil_
    trunc_ = fix_ = _pointwise.trunc_
    log1p_ = _pointwise.log1p_
    expm1_ = _pointwise.expm1_
    log2_ = _pointwise.log2_
    log10_ = _pointwise.log10_
    frac_ = _pointwise.frac_
    logical_and_ = _pointwise.logical_and_
    logical_or_ = _pointwise.logical_or_
    logical_xor_ = _pointwise.logical_xor_
    logical_not_ = _pointwise.logical_not_

    gcd = _pointwise.gcd
    gcd_ = _pointwise.gcd_
    lcm = _pointwise.lcm
    lcm_ = _pointwise.lcm_
    bitwise_left_shift = __lshift__ = _pointwise.bitwise_left_shift
    bitwise_right_shift = __rshift__ = _pointwise.bitwise_right_shift
    bitwise_left_shift_ = __ilshift__ = _pointwise.bitwise_left_shift_
    bitwise_right_shift_ = __irshift__ = _pointwise.bitwise_right_shift_

    def __rlshift__(self, other):
        return _pointwise.bitwise_left_shift(other, self)

    def __rrshift__(self, other):
        return _pointwise.bitwise_right_shift(other, self)

    float_power = _pointwise.float_power
    float_power_ = _pointwise.float_power_
    ldexp = _pointwise.ldexp
    ldexp_ = _pointwise.ldexp_
    frexp = _pointwise.frexp
    nextafter = _pointwise.nextafter
    nextafter_ = _pointwise.nextafter_
    positive = _pointwise.positive
    sgn = _pointwise.sgn
    sgn_ = _pointwise.sgn_

    # ---- special functions (ops/special.py) ---------------------------------------------
    erf = _special.erf
    erfc = _special.erfc
    erfinv = _special.erfinv
    erf_ = _special.erf_
    erfc_ = _special.erfc_
    erfinv_ = _special.erfinv_
    lgamma = _special.lgamma
    digamma = _special.digamma
    polygamma = _special.polygamma_method
    mvlgamma = _special.mvlgamma
    lgamma_ = _special.lgamma_
    digamma_ = _special.digamma_
    polygamma_ = _special.polygamma_
    mvlgamma_ = _special.mvlgamma_
    i0 = _special.i0
    i0_ = _special.i0_
    igamma = _special.igamma
    igammac = _special.igammac
    igamma_ = _special.igamma_
    igammac_ = _special.igammac_

    # ---- comparison (ops/comparison.py) -------------------------------------------------
    maximum = _comparison.maximum
    minimum = _comparison.minimum
    isclose = _comparison.isclose
    eq = _comparison.eq
    ne = _comparison.ne
    lt = _comparison.lt
    le = _comparison.le
    gt = _comparison.gt
    ge = _comparison.ge
    less = _comparison.lt
    less_equal = _comparison.le
    greater = _comparison.gt
    greater_equal = _comparison.ge
    not_equal = _comparison.ne
    isnan = _comparison.isnan
    isinf = _comparison.isinf
    isfinite = _comparison.isfinite
    isposinf = _comparison.isposinf
    isneginf = _comparison.isneginf
    isreal = _comparison.isreal
    allclose = _comparison.allclose
    equal = _comparison.equal

    # ---- conversion (ops/conversion.py) -------------------------------------------------
    clone = _conversion.clone
    data_ptr = _conversion.data_ptr
    element_size = _conversion.element_size
    ndimension = _conversion.ndimension
    byte = _conversion.byte
    short = _conversion.short
    char = _conversion.char
    new = _conversion.new

    # to_sparse is set by tapegrad/sparse.py (its result's class subclasses Tensor)
    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    # ---- reductions and cumulative ops (ops/reductions.py) ------------------------------
    all = _reductions.all
    cumsum = _reductions.cumsum
    any = _reductions.any
    count_nonzero = _reductions.count_nonzero
    histc = _reductions.histc
    bincount = _reductions.bincount
    histogram = _reductions.histogram
    cumprod = _reductions.cumprod
    median = _reductions.median
    nanmedian = _reductions.nanmedian
    diff = _reductions.diff
    quantile = _reductions.quantile
    nanquantile = _reductions.nanquantile
    nansum = _reductions.nansum
    nanmean = _reductions.nanmean
    cummax = _reductions.cummax
    cummin = _reductions.cummin
    aminmax = _reductions.aminmax
    sum = _reductions.sum
    mean = _reductions.mean
    prod = _reductions.prod
    max = _reductions.max
    min = _reductions.min
    amax = _reductions.amax
    amin = _reductions.amin
    var = _reductions.var
    std = _reductions.std
    logsumexp = _reductions.logsumexp
    argmax = _reductions.argmax
    argmin = _reductions.argmin
    softmax = _reductions.softmax
    log_softmax = _reductions.log_softmax
    logcumsumexp = _reductions.logcumsumexp
    cov = _reductions.cov
    corrcoef = _reductions.corrcoef
    mode = _reductions.mode
    sum_to_size = _reductions.sum_to_size
    cumsum_ = _reductions.cumsum_
    cumprod_ = _reductions.cumprod_

    # ---- sorting and searching (ops/sorting.py) -----------------------------------------
    unique_consecutive = _sorting.unique_consecutive
    sort = _sorting.sort
    argsort = _sorting.argsort
    topk = _sorting.topk
    kthvalue = _sorting.kthvalue
    unique = _sorting.unique
    msort = _sorting.msort

    # ---- shape: views, reshapes, joins, splits (ops/shape.py) ---------------------------
    ravel = _shape.ravel
    tile = _shape.tile
    diag = _shape.diag
    diagonal = _shape.diagonal
    diag_embed = _shape.diag_embed
    rot90 = _shape.rot90
    diagflat = _shape.diagflat
    split_with_sizes = _shape.split_with_sizes
    resize_ = _shape.resize_
    resize_as_ = _shape.resize_as_
    reshape = _shape.reshape
    view = _shape.view  # also view(dtype): the bytes read as another dtype
    expand = _shape.expand
    broadcast_to = _shape.broadcast_to
    permute = _shape.permute
    transpose = swapaxes = swapdims = _shape.transpose
    t = _shape.t
    flatten = _shape.flatten
    unflatten = _shape.unflatten
    squeeze = _shape.squeeze
    unsqueeze = _shape.unsqueeze
    repeat = _shape.repeat
    movedim = moveaxis = _shape.movedim
    tensor_split = _shape.tensor_split
    chunk = _shape.chunk
    unbind = _shape.unbind
    narrow = _shape.narrow
    narrow_copy = _shape.narrow_copy
    select = _shape.select
    flip = _shape.flip
    hsplit = _shape.hsplit
    vsplit = _shape.vsplit
    dsplit = _shape.dsplit
    fliplr = _shape.fliplr
    flipud = _shape.flipud
    roll = _shape.roll
    unsafe_split = _shape.unsafe_split
    unsafe_chunk = _shape.unsafe_chunk
    tril = _shape.tril
    triu = _shape.triu
    tril_ = _shape.tril_
    t_ = _shape.t_
    transpose_ = swapaxes_ = swapdims_ = _shape.transpose_
    squeeze_ = _shape.squeeze_
    unsqueeze_ = _shape.unsqueeze_
    triu_ = _shape.triu_

    # ---- indexing, scatter and gather (ops/indexing.py) ---------------------------------
    unfold = _indexing.unfold
    take = _indexing.take
    index_fill = _indexing.index_fill
    index_copy = _indexing.index_copy
    masked_scatter = _indexing.masked_scatter
    scatter_reduce = _indexing.scatter_reduce
    scatter_reduce_ = _indexing.scatter_reduce_
    fill_diagonal_ = _indexing.fill_diagonal_
    as_strided = _indexing.as_strided
    gather = _indexing.gather
    scatter = _indexing.scatter
    scatter_add = _indexing.scatter_add
    index_select = _indexing.index_select
    index_add = _indexing.index_add
    masked_fill = _indexing.masked_fill
    masked_select = _indexing.masked_select
    take_along_dim = _indexing.take_along_dim
    nonzero = _indexing.nonzero
    argwhere = _indexing.argwhere
    nonzero_static = _indexing.nonzero_static
    index_put = _indexing.index_put
    repeat_interleave = _indexing.repeat_interleave
    masked_fill_ = _indexing.masked_fill_
    index_put_ = _indexing.index_put_
    scatter_ = _indexing.scatter_
    scatter_add_ = _indexing.scatter_add_
    index_add_ = _indexing.index_add_
    index_fill_ = _indexing.index_fill_
    index_copy_ = _indexing.index_copy_
    masked_scatter_ = _indexing.masked_scatter_
    select_scatter = _indexing.select_scatter
    slice_scatter = _indexing.slice_scatter
    diagonal_scatter = _indexing.diagonal_scatter
    as_strided_scatter = _indexing.as_strided_scatter
    put = _indexing.put
    put_ = _indexing.put_
    index_reduce = _indexing.index_reduce
    index_reduce_ = _indexing.index_reduce_

    # ---- products (ops/products.py) -----------------------------------------------------
    outer = ger = _products.outer
    addmm = _products.addmm
    mv = _products.mv
    trace = _products.trace
    kron = _products.kron
    addmv = _products.addmv
    addr = _products.addr
    baddbmm = _products.baddbmm
    addbmm = _products.addbmm
    inner = _products.inner
    vdot = _products.vdot
    addmv_ = _products.addmv_
    addr_ = _products.addr_
    baddbmm_ = _products.baddbmm_
    addbmm_ = _products.addbmm_
    matmul = _products.matmul
    mm = _products.mm
    bmm = _products.bmm
    dot = _products.dot

    # ---- linear algebra (ops/linalg.py) -------------------------------------------------
    norm = _linalg.norm
    cross = _linalg.cross
    det = _linalg.det
    slogdet = _linalg.slogdet
    logdet = _linalg.logdet
    inverse = _linalg.inverse
    svd = _linalg.svd
    dist = _linalg.dist
    renorm = _linalg.renorm
    renorm_ = _linalg.renorm_
    matrix_power = _linalg.matrix_power
    matrix_exp = _linalg.matrix_exp
    pinverse = _linalg.pinverse
    triangular_solve = _linalg.triangular_solve
    cholesky = _linalg.torch_cholesky
    cholesky_solve = _linalg.cholesky_solve
    cholesky_inverse = _linalg.cholesky_inverse
    lu = _linalg.lu
    lu_solve = _linalg.lu_solve
    qr = _linalg.qr
    geqrf = _linalg.geqrf
    ormqr = _linalg.ormqr

    # ---- random fills (ops/random.py) ---------------------------------------------------
    bernoulli = _sampling.bernoulli
    bernoulli_ = _sampling.bernoulli_
    multinomial = _sampling.multinomial
    normal_ = _sampling.normal_
    uniform_ = _sampling.uniform_
    random_ = _sampling.random_
    exponential_ = _sampling.exponential_
    geometric_ = _sampling.geometric_
    cauchy_ = _sampling.cauchy_
    log_normal_ = _sampling.log_normal_

    # ---- operators ----------------------------------------------------------------------
    # The operators are the public binary functions (one place turns a broadcasting
    # failure into an error naming the op and both shapes, for x + y and y + x alike).
    __add__ = _pointwise._add
    __sub__ = _pointwise._sub
    __mul__ = _pointwise.mul
    __truediv__ = _pointwise.true_divide
    __pow__ = _pointwise.pow
    __matmul__ = _products.matmul

    # `2 * x` and `2 + x` are recorded as torch records them, mul(x, 2) / add(x, 2):
    # next_functions in torch's order, the same values (both ops commute bit for bit),
    # and the tensor-first fast path of the binary functions
    def __radd__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__radd__", self)
        return _pointwise._add(self, other)

    def __rsub__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rsub__", self)
        return _pointwise._sub(other, self)

    def __rmul__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rmul__", self)
        return _pointwise.mul(self, other)

    def __rtruediv__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rtruediv__", self)
        # torch's Tensor.__rdiv__: `s / x` is x.reciprocal() * s (two roundings: other bits
        # than s / x in about a quarter of the elements, and its gradient is that chain's)
        return _pointwise.mul(_pointwise.reciprocal(self), other)
    __rdiv__ = __rtruediv__  # torch's Python 2 name, still on its Tensor

    def __rpow__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rpow__", self)
        return _pointwise.pow(other, self)

    def __rmatmul__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rmatmul__", self)
        return _products.matmul(other, self)

    __neg__ = _pointwise.neg
    __abs__ = _pointwise.abs

    def __pos__(self):
        return self

    __eq__ = _comparison.eq_operator  # `t == None` is False (F._operator)
    __ne__ = _comparison.ne_operator
    __lt__ = _comparison.lt_operator
    __le__ = _comparison.le_operator
    __gt__ = _comparison.gt_operator
    __ge__ = _comparison.ge_operator
    __and__ = _pointwise.bitwise_and  # logical on bool tensors, bitwise on integers (torch)
    __or__ = _pointwise.bitwise_or
    __xor__ = _pointwise.bitwise_xor
    __iand__ = _pointwise.bitwise_and_
    __ior__ = _pointwise.bitwise_or_
    __ixor__ = _pointwise.bitwise_xor_

    def __rand__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rand__", self)
        return _pointwise.bitwise_and(other, self)

    def __ror__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__ror__", self)
        return _pointwise.bitwise_or(other, self)

    def __rxor__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rxor__", self)
        return _pointwise.bitwise_xor(other, self)

    def __invert__(self):
        if self._data.dtype.kind == "f":
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return _pointwise.bitwise_not(self)
    __getitem__ = _indexing.getitem
    __setitem__ = _indexing.setitem
    __iadd__ = _pointwise.add_
    __isub__ = _pointwise.sub_
    __imul__ = _pointwise.mul_
    __itruediv__ = _pointwise.div_
    __ifloordiv__ = _pointwise.floor_divide_
    __imod__ = _pointwise.remainder_
    __ipow__ = _pointwise.pow_

    __mod__ = _pointwise.remainder

    def __rmod__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rmod__", self)
        return _pointwise.remainder(other, self)

    __floordiv__ = _pointwise.floor_divide

    def __rfloordiv__(self, other):
        if not isinstance(self, TensorBase):
            raise _not_a_tensor("__rfloordiv__", self)
        return _pointwise.floor_divide(other, self)

    # ---- properties and the methods torch writes in Python ------------------------------
    nbytes = property(_conversion.nbytes)

    def split(self, split_size, dim=0):
        return _shape.split(self, split_size, dim)

    def expand_as(self, other):
        return _shape.expand(self, other.shape)

    def view_as(self, other):
        return _shape.reshape(self, other.shape)

    def reshape_as(self, other):
        return _shape.reshape(self, other.shape)

    @property
    def T(self):
        return _shape.permute(self, tuple(range(self._data.ndim))[::-1])

    @property
    def mT(self):
        return _shape.transpose(self, -2, -1)

    def where(self, condition, other):  # torch's x.where(cond, y) is torch.where(cond, x, y)
        return _pointwise.where(condition, self, other)



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


"""`tg.autocast` (torch.autocast / torch.amp.autocast): the mixed-precision region, with
PyTorch's API and state, computed in full precision.

    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):   # build-nanogpt
        logits, loss = model(x, y)

PyTorch runs matmuls and convolutions of an autocast region in bfloat16/float16 for speed
and keeps reductions, losses and softmax in float32. tapegrad computes with NumPy, which
has no bfloat16 (tg.bfloat16 tensors are refused by name) and whose float16 matmul is
many times slower than its float32 one: so inside a region every op runs as it would
outside, in the inputs' own dtype. Programs run unchanged; their numbers are the float32
ones (closer to the exact result than torch's, which differ from them by bfloat16's
rounding, ~3 significant digits), and tensors that torch would make bfloat16 are float32.
A one-time warning says so when the first enabled region is entered.

What is kept exactly as torch: the arguments and their checks, the warnings that disable
a region (CUDA asked for on this CPU-only machine, a dtype other than bfloat16/float16 on
the CPU), the per-thread state (`is_autocast_enabled(device)`, `get_autocast_dtype`,
nesting) that code reads back, use as a decorator, and `custom_fwd`/`custom_bwd`.
"""
import functools
import threading
import warnings

from .. import dtypes as _dt
from .._device import device as _device

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# device types torch 2.13 answers True for in is_autocast_available
_AVAILABLE = frozenset(("cpu", "cuda", "mps", "xpu", "hpu", "mtia", "maia", "xla", "ipu",
                        "privateuseone"))
_DEFAULT_DTYPE = {"cpu": "bfloat16", "mps": "float16", "xpu": "bfloat16", "hpu": "bfloat16",
                  "xla": "bfloat16", "ipu": "float16", "mtia": "bfloat16", "maia": "float16"}
_FULL_PRECISION = (
    "tapegrad.autocast: ops inside autocast run in full precision (NumPy has no bfloat16 "
    "and a slow float16 matmul), so results are float32 where torch's are {dtype}; the "
    "numbers agree with torch's to {dtype}'s precision")
_warned = []  # the full-precision warning is given once per process


class _State(threading.local):
    """Autocast's state per thread, as torch keeps it: per device type."""

    def __init__(self):
        self.enabled = {}            # device type -> bool (absent: False)
        self.dtype = {}              # device type -> dtype (absent: the device's default)
        self.cache_enabled = True
        self.nesting = 0


_state = _State()


def is_autocast_available(device_type):
    """Whether autocast can be asked for on `device_type` (torch's answer, by name)."""
    _device(device_type)  # an unknown name: torch's RuntimeError listing the device types
    return device_type in _AVAILABLE


def is_autocast_enabled(device_type=None):
    """Is an enabled autocast region active on this thread? (No argument: CUDA's, as torch.)"""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def set_autocast_enabled(device_type, enabled):
    _state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type):
    """The dtype autocast uses on `device_type` (bfloat16 on the CPU, float16 on CUDA)."""
    got = _state.dtype.get(device_type)
    if got is not None:
        return got
    return getattr(_dt, _DEFAULT_DTYPE.get(device_type, "float16"))


def set_autocast_dtype(device_type, dtype):
    _state.dtype[device_type] = dtype


def is_autocast_cpu_enabled():
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use "
                  "torch.is_autocast_enabled('cpu') instead.", DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """torch drops its cache of low-precision weight copies; tapegrad makes none."""


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


class autocast:
    """`with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):` or as a
    decorator. See the module: the state is torch's, the computation full precision."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if device_type == "cuda":  # (tapegrad has no CUDA: torch without one says this)
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (_dt.bfloat16, _dt.float16):
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              f"{_dt.bfloat16}, {_dt.float16} currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self._enabled and not _warned:
            _warned.append(True)
            warnings.warn(_FULL_PRECISION.format(dtype=self.fast_dtype), stacklevel=2)
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        autocast_decrement_nesting()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's `forward`: with `cast_inputs`, inside an enabled
    region the forward runs with autocast disabled (torch also casts the floating inputs
    to `cast_inputs`; here they already are in the precision ops run in)."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*args, **kwargs)
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's `backward`: it runs in the autocast state its
    forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd

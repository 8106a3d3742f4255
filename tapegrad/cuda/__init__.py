"""`tg.cuda`: torch.cuda's queries for a machine without CUDA (tapegrad is CPU-only).

Availability answers False and there are no devices; seeding, synchronising and
cache-emptying are harmless no-ops (programs call them unconditionally); asking for a
device's properties raises one error naming CUDA. `tg.cuda.amp.GradScaler` is the
float16 loss scaler of `tg.amp`.
"""
from . import amp  # noqa: F401  torch.cuda.amp.GradScaler(enabled=...)

_NO_CUDA = "CUDA is not available: tapegrad runs on the CPU only"


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """Seeding CUDA generators: there are none, so nothing to do (as torch without CUDA)."""


def manual_seed_all(seed):
    """See manual_seed."""


def seed():
    """No CUDA generator to seed."""


def seed_all():
    """No CUDA generator to seed."""


def synchronize(device=None):
    """Nothing runs asynchronously on the CPU."""


def empty_cache():
    """No CUDA cache to empty."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def reset_peak_memory_stats(device=None):
    """No CUDA memory statistics."""


def _unavailable(name):
    def f(*args, **kwargs):
        raise RuntimeError(f"torch.cuda.{name}(): {_NO_CUDA} (cuda.is_available() is False)")
    f.__name__ = name
    return f


current_device = _unavailable("current_device")
set_device = _unavailable("set_device")
get_device_name = _unavailable("get_device_name")
get_device_properties = _unavailable("get_device_properties")
get_device_capability = _unavailable("get_device_capability")

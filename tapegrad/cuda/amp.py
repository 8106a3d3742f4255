"""`tg.cuda.amp.GradScaler` and `autocast`: torch.cuda.amp on a machine without CUDA.

nanoGPT builds `torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))` on every
device. torch, finding no CUDA, warns and disables that scaler (scale() returns the
loss unchanged), and so does this one; the working float16 scaler is `tg.amp.GradScaler`.
"""
import warnings

from .. import dtypes as _dt
from ..amp import GradScaler as _GradScaler
from ..amp.autocast_mode import autocast as _autocast


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                          "available.  Disabling.", stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled=False)


class autocast(_autocast):
    """torch.cuda.amp.autocast: deprecated in torch, and disabled with a warning on a
    machine without CUDA, as here."""

    def __init__(self, enabled=True, dtype=_dt.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

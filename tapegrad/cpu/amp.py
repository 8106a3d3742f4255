"""`tg.cpu.amp.autocast`: torch's deprecated spelling of `tg.autocast("cpu", ...)`."""
import warnings

from .. import dtypes as _dt
from ..amp.autocast_mode import autocast as _autocast

__all__ = ["autocast"]


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=_dt.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

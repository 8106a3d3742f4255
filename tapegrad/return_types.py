"""tapegrad.return_types (torch.return_types): the classes of the named tuples that
max/min with a dim, sort, topk, kthvalue, median, nanmedian, histogram and the linalg
decompositions (svd, qr, eigh, slogdet) return, and their `_out` twins (what those
functions return when given `out=`)."""
from .ops import functions as _F  # noqa: F401  (defines max, min)
from .ops import functions_extra as _FX  # noqa: F401  (median, nanmedian, histogram)
from .ops import index_functions as _I  # noqa: F401  (sort, topk, kthvalue)
from .ops import linalg_decomp_functions as _LD  # noqa: F401  (linalg_svd, svd, qr, eigh)
from .ops import linalg_solve_functions as _LS  # noqa: F401  (linalg_slogdet, slogdet)
from .ops.return_types import all_types as _all_types, out_type as _out_type

for _cls in list(_all_types().values()):
    _out_type(_cls)
globals().update(_all_types())
__all__ = sorted(_all_types())

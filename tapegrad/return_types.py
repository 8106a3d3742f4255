"""tapegrad.return_types (torch.return_types): the classes of the named tuples that
max/min with a dim, sort, topk, kthvalue, median, nanmedian, histogram and the linalg
decompositions (svd, qr, eigh, slogdet) return, and their `_out` twins (what those
functions return when given `out=`)."""
from .ops.return_types import all_types as _all_types, out_type as _out_type

for _cls in list(_all_types().values()):
    _out_type(_cls)
globals().update(_all_types())
__all__ = sorted(_all_types())

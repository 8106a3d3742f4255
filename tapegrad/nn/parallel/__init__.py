"""`tapegrad.nn.parallel` (torch.nn.parallel): `DataParallel` on one CPU process.

`DistributedDataParallel` comes with the distributed work (another engineer adds
`parallel/distributed.py` and the import below picks it up)."""
from .data_parallel import DataParallel

try:  # DistributedDataParallel: provided by parallel/distributed.py (distributed issue)
    from .distributed import DistributedDataParallel  # noqa: F401
except ImportError:
    pass

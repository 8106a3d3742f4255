"""`tapegrad.nn.parallel` (torch.nn.parallel): `DataParallel` on one CPU process (a
pass-through) and `DistributedDataParallel` over MPI (tapegrad.distributed)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]

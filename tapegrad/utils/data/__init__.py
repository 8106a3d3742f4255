"""`tg.utils.data`: datasets and the DataLoader (PyTorch's `torch.utils.data` names)."""
from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
from .dataloader import default_convert
from .dataset import ChainDataset, IterableDataset
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)
from ._worker import WorkerInfo, get_worker_info

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "DataLoader", "default_collate",
           "default_convert", "IterableDataset", "ChainDataset", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "get_worker_info", "WorkerInfo",
           "DistributedSampler"]
from . import distributed  # noqa: E402  tg.utils.data.distributed.DistributedSampler
from .distributed import DistributedSampler  # noqa: E402

"""`tg.utils.data`: datasets and the DataLoader (PyTorch's `torch.utils.data` names)."""
from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "DataLoader", "default_collate"]
from . import distributed  # noqa: E402  tg.utils.data.distributed.DistributedSampler
from .distributed import DistributedSampler  # noqa: E402

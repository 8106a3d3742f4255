"""DistributedSampler: each rank iterates over its own disjoint shard of the dataset
(torch.utils.data.distributed.DistributedSampler's algorithm and arguments).

The indices (shuffled with seed + epoch, so `set_epoch` must be called each epoch for a
new order) are padded by repeating the first ones until they divide evenly, or cut
with drop_last; rank r takes every num_replicas-th index starting at r. Together the
shards cover the dataset; without padding they are disjoint.
"""
import math

import numpy as np

from ...ops.random import randperm
from ...random import Generator

__all__ = ["DistributedSampler"]


def _from_group(what):
    from tapegrad import distributed as dist
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available "
                           "(pip install 'tapegrad[distributed]')")
    if not dist.is_initialized():
        raise RuntimeError(f"DistributedSampler: {what} was not given and the default process "
                           "group has not been initialized (call init_process_group first)")
    return dist.get_world_size() if what == "num_replicas" else dist.get_rank()


class DistributedSampler:
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = _from_group("num_replicas")
        if rank is None:
            rank = _from_group("rank")
        if not isinstance(num_replicas, (int, np.integer)) or num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be a positive integer, "
                             f"got {num_replicas!r}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g)._data.tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """A different shuffle each epoch (the same on every rank: seed + epoch)."""
        self.epoch = epoch

"""``DistributedSampler``: one replica's share of a dataset (torch.utils.data.distributed).

Note [Distributed sampling without torch.distributed]
torch's sampler asks torch.distributed for the number of replicas and this process's rank when they are not
given; strided has no torch.distributed, so they must be given (``num_replicas=2, rank=0``), else the
error is torch's for a build without the package. The indices are torch's exactly: the same shuffle (a
``randperm`` from a generator seeded with ``seed + epoch``, which strided's CPU generator draws as torch's),
the same padding by wrapping around, the same stride over ranks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from ... import randperm
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    """The indices of ``dataset`` that replica ``rank`` of ``num_replicas`` reads, reshuffled per
    :meth:`set_epoch` (Note [Distributed sampling without torch.distributed])."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            raise RuntimeError("Requires distributed package to be available")
        for name, v in (("num_replicas", num_replicas), ("rank", rank)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"DistributedSampler: {name} must be an int, not {type(v).__name__}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:  # every replica gets as many: drop the tail
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:  # pad by wrapping around, so the total divides evenly
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next shuffle is seeded with (``seed + epoch``): call it before each epoch."""
        self.epoch = epoch

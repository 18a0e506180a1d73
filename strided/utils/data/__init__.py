"""``strided.utils.data``: torch.utils.data -- datasets, samplers (``DistributedSampler`` included), collation and
the ``DataLoader`` (in the main process or in worker processes: ``dataloader.py``)."""

from __future__ import annotations

from .collate import default_collate, default_convert
from .dataloader import DataLoader, _DatasetKind, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "_DatasetKind",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]

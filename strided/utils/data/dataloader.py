"""``DataLoader``: batches from a dataset, in the main process (``num_workers=0``) or in worker
processes (``multiprocess_iter``, Note [Multi-process iterator]).

The single-process iterator here follows torch's ``_SingleProcessDataLoaderIter``: samplers,
automatic batching, collation, ``drop_last``, ``batch_size=None``, IterableDataset streams,
``len()`` and pinning; the worker processes reuse its fetchers (Note [Worker loop]).
"""

from __future__ import annotations

import math
import multiprocessing
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from ... import empty, int64
from ...random import Generator
from . import pin_memory as _pin
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .fetch import IterableDatasetFetcher, MapDatasetFetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import get_worker_info

__all__ = ["DataLoader", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        fetcher = MapDatasetFetcher if kind == _DatasetKind.Map else IterableDatasetFetcher
        return fetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: ``None`` forever (the dataset's iterator decides the end)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches.

    Parameters are torch's. A map-style dataset is read in the order of ``sampler`` (by default
    ``SequentialSampler``, or ``RandomSampler(dataset, generator=generator)`` with ``shuffle=True``),
    grouped by a ``BatchSampler(sampler, batch_size, drop_last)`` unless ``batch_sampler`` is given;
    each batch's samples go through ``collate_fn`` (``default_collate``). With ``batch_size=None``
    samples come one at a time through ``default_convert``. An ``IterableDataset`` is read in its
    own order and takes no shuffle, sampler or batch_sampler.

    With ``num_workers > 0`` batches are made in that many worker processes (Note [Multi-process
    iterator]), ``prefetch_factor`` (default 2) batches per worker ahead, seeded
    ``base_seed + worker_id``, each running ``worker_init_fn(worker_id)`` first (``get_worker_info()``
    tells a worker its id, to shard an IterableDataset); ``in_order=False`` returns batches as they
    are ready; ``persistent_workers`` keeps the workers across epochs; ``timeout > 0`` bounds each
    wait for a batch; ``multiprocessing_context`` picks the start method (the platform's default
    otherwise). Workers build samples on the CPU (Note [Tensors between processes]). Without workers
    ``timeout`` must be 0 (torch's single-process iterator asserts it) and the worker options raise
    torch's errors. ``pin_memory=True`` copies the batch's tensors into pinned memory when CUDA is
    available, and otherwise warns and skips pinning, as torch does without an accelerator.
    """

    dataset: Dataset[T_co]
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler | Iterable
    pin_memory_device: str
    prefetch_factor: int | None
    __initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if not isinstance(num_workers, int) or isinstance(num_workers, bool):
            raise TypeError(f"DataLoader: num_workers must be an int, got {num_workers!r}")
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int) or isinstance(prefetch_factor, bool)):
            raise TypeError(f"DataLoader: prefetch_factor must be an int or None, got {prefetch_factor!r}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            if num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={num_workers}"
                )
            if isinstance(multiprocessing_context, str):
                valid = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method in "
                        f"{valid!r}, but got multiprocessing_context={multiprocessing_context!r}"
                    )

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # Custom samplers are refused for an IterableDataset before the sampler checks below, as torch
        # does, so users learn about the incompatible combination first.
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None  # the persistent workers' iterator, made on the first epoch
        self.__initialized = True
        self._IterableDataset_len_called = None  # see __len__

    def __setattr__(self, attr: str, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from .multiprocess_iter import MultiProcessingDataLoaderIter

        if not self.persistent_workers:
            return MultiProcessingDataLoaderIter(self)
        if self._iterator is None:
            self._iterator = MultiProcessingDataLoaderIter(self)
        else:
            self._iterator._reset()
        return self._iterator

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What yields the fetcher's keys: the batch sampler with automatic batching, else the sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            # An IterableDataset's __len__ is trusted; the iterator warns if it yields more than this.
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


# Note [Base seed]
# torch draws one int64 per epoch from the loader's generator (the default one when None) to seed
# its workers (``base_seed + worker_id``). Without workers the draw is kept too: a generator shared
# with the sampler, or the global stream, advances exactly as it does under torch.
def draw_base_seed(generator) -> int:
    """One epoch's worker base seed (Note [Base seed])."""
    return int(empty((), dtype=int64).random_(0, None, generator=generator).item())


class _SingleProcessDataLoaderIter:
    """One epoch of a DataLoader: indices from the index sampler, samples from the fetcher."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        available = _pin.will_pin(loader)
        self._pin_memory = available
        self._pin_memory_device = "cuda" if available else None
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = draw_base_seed(loader.generator)
        self._num_yielded = 0
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __next__(self) -> Any:
        index = next(self._sampler_iter)  # may raise StopIteration
        data = self._dataset_fetcher.fetch(index)  # may raise StopIteration
        if self._pin_memory:
            data = _pin.pin_memory(data, self._pin_memory_device)
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warnings.warn(
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. ",
                stacklevel=2,
            )
        return data

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")

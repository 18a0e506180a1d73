"""Fetchers: turn what the DataLoader's index sampler yields (an index, a list of indices, or for
an ``IterableDataset`` a placeholder) into samples, and hand them to ``collate_fn``."""

from __future__ import annotations

__all__ = ["IterableDatasetFetcher", "MapDatasetFetcher"]


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class IterableDatasetFetcher(_BaseDatasetFetcher):
    """Reads ``len(batch_index)`` samples from the dataset's iterator per batch (the indices are
    placeholders); raises StopIteration when the stream ends, or on a short batch with ``drop_last``."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class MapDatasetFetcher(_BaseDatasetFetcher):
    """``dataset[i]`` per index (or one ``dataset.__getitems__(indices)`` call when defined)."""

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)

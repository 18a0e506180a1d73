"""The DataLoader worker process: its loop, ``get_worker_info()`` and how its errors travel.

Note [Worker loop]
torch's ``_worker_loop`` (torch/utils/data/_utils/worker.py), in its parts strided needs: a worker
seeds ``random`` and strided's default generator with ``base_seed + worker_id``, publishes its
``WorkerInfo``, runs ``worker_init_fn`` and builds the same fetcher the single-process iterator
uses; then it takes ``(task index, sampler output)`` from its own index queue and puts
``(task index, batch)`` on the shared result queue. An exception becomes an ``ExceptionWrapper``
(the traceback as text) that the main process raises again; an IterableDataset worker whose stream
ended sends ``IterableDatasetStopIteration`` once and then idles. ``None`` on the index queue
ends the loop; ``ResumeIteration`` (persistent workers, next epoch) rebuilds the fetcher. The worker
also ends when the main process is gone, so a killed trainer leaves no orphans.
"""

from __future__ import annotations

import multiprocessing.queues
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper", "DataQueue"]

STATUS_CHECK_INTERVAL = 5.0  # seconds between checks that the other side is alive (torch's value)

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its id, the number of workers, its seed
    and its copy of the dataset (shard an IterableDataset with ``id`` and ``num_workers``)."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo`` inside a DataLoader worker process; None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its type and traceback text."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the worker's exception type with the original traceback in the message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError would repr() the message, escaping its newlines
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError shows the traceback readably."""

    def __repr__(self):
        return self


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """Sent once by a worker whose IterableDataset replica is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers at the start of an epoch; echoed back once the worker has reset."""

    seed: int | None = None


class DataQueue(multiprocessing.queues.Queue):
    """The workers' result queue. ``Queue.put`` pickles in a background thread, where an error (a
    CUDA tensor in the batch, an unpicklable object) would only be printed and the batch lost; here
    it is sent in the batch's place, so the main process raises it."""

    worker_id = -1

    def __init__(self, ctx) -> None:
        super().__init__(ctx=ctx)

    def _on_queue_feeder_error(self, e, obj):
        where = f"in DataLoader worker process {self.worker_id} (sending its batch)"
        if isinstance(obj, tuple) and len(obj) == 2 and not isinstance(obj[1], ExceptionWrapper):
            self.put((obj[0], ExceptionWrapper((type(e), e, e.__traceback__), where)))
        else:
            super()._on_queue_feeder_error(e, obj)


def _parent_alive(parent_pid: int) -> bool:
    return os.getppid() == parent_pid


def worker_loop(kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers, parent_pid) -> None:
    """The body of one worker process (Note [Worker loop])."""
    global _worker_info
    from ... import manual_seed
    from .dataloader import _DatasetKind
    from .tensor_transport import register_tensor_reduction

    data_queue.worker_id = worker_id
    try:
        register_tensor_reduction()
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - reported on the first task
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while _parent_alive(parent_pid):
            try:
                r = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if kind == _DatasetKind.Iterable:  # a fresh pass over the replica
                    fetcher = _DatasetKind.create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue  # shutting down, or the stream ended: drain the queue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001 - sent to the main process
                    if isinstance(e, StopIteration) and kind == _DatasetKind.Iterable:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))  # a batch that cannot be pickled comes back as its error (DataQueue)
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()

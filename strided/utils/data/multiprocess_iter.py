"""The DataLoader iterator with worker processes (``num_workers > 0``): torch's
``_MultiProcessingDataLoaderIter``.

Note [Multi-process iterator]
The main process keeps the sampler: it sends ``(task index, sampler output)`` to the workers' index
queues in turn, keeping ``prefetch_factor`` tasks per worker in flight, and reads
``(task index, batch)`` from one result queue (Note [Worker loop] in worker.py). Batches are
returned in task order (``in_order=True``: early ones wait in a reorder buffer) or as they arrive.
An IterableDataset runs one replica per worker; a worker whose replica ended gets no more tasks,
and the epoch ends when all have. Waiting for a batch polls every few seconds whether every busy
worker is alive, so a worker that died (killed, out of memory) is an error naming its pid instead
of a hang; ``timeout > 0`` bounds each wait. Workers are daemons and are shut down (``None`` on
their queues, then joined, then terminated) when the epoch ends, the iterator is collected or the
interpreter exits; with ``persistent_workers`` they serve every epoch of their loader.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
from typing import Any

from . import pin_memory as _pin
from .dataloader import draw_base_seed
from .tensor_transport import register_tensor_reduction
from .worker import (
    STATUS_CHECK_INTERVAL,
    DataQueue,
    ExceptionWrapper,
    IterableDatasetStopIteration,
    ResumeIteration,
    worker_loop,
)

__all__ = ["MultiProcessingDataLoaderIter"]

JOIN_TIMEOUT = 5.0  # seconds to wait for a worker to exit before terminating it


class MultiProcessingDataLoaderIter:
    """One epoch (or, with persistent workers, every epoch) of a DataLoader with worker processes."""

    def __init__(self, loader) -> None:
        register_tensor_reduction()
        self._loader = loader
        self._dataset_kind = loader._dataset_kind
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._pin_memory = _pin.will_pin(loader)
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._done_event = ctx.Event()
        self._data_queue = DataQueue(ctx)
        self._index_queues, self._workers = [], []
        self._shutdown = False
        self._owner_pid = os.getpid()
        self._base_seed = draw_base_seed(self._loader.generator)
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # its items are indices: never block the exit on them
            w = ctx.Process(
                target=worker_loop,
                args=(self._dataset_kind, loader.dataset, index_queue, self._data_queue, self._done_event,
                      loader._auto_collation, loader.collate_fn, loader.drop_last, self._base_seed,
                      loader.worker_init_fn, worker_id, self._num_workers, os.getpid()),
                daemon=True,
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(first=True)

    def _reset(self, first: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._send_idx = 0  # next task index to send
        self._rcvd_idx = 0  # next task index to return (in order)
        self._task_info: dict[int, tuple] = {}  # task index -> (worker id,) or (worker id, batch)
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers  # False: its IterableDataset replica ended
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:  # persistent workers: a new epoch; each worker acknowledges its reset
            self._base_seed = draw_base_seed(self._loader.generator)
            for q in self._index_queues:
                q.put(ResumeIteration(self._base_seed))
            pending = self._num_workers
            while pending:
                _, data = self._get_data()
                if isinstance(_, ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _try_put_index(self) -> None:
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker whose replica has not ended
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every IterableDataset replica has ended
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """One ``(task index, data)`` from the result queue (Note [Multi-process iterator])."""
        while True:
            try:
                return self._data_queue.get(timeout=self._timeout if self._timeout > 0 else STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if self._timeout > 0:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                dead = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    codes = ", ".join(str(w.exitcode) for w in dead)
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly "
                                       f"(exit code(s) {codes})") from None

    def __next__(self) -> Any:
        while True:
            # skip tasks already returned (out of order) or dropped (their IterableDataset worker ended)
            while self._rcvd_idx < self._send_idx and self._rcvd_idx not in self._task_info:
                self._rcvd_idx += 1
            if self._rcvd_idx == self._send_idx and self._tasks_outstanding == 0:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info.get(self._rcvd_idx)
            if self._in_order and info is not None and len(info) == 2:  # already here, out of order
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterableDatasetStopIteration):
                # the worker answers none of its later tasks: drop them, and send it no more
                w = data.worker_id
                self._workers_status[w] = False
                self._task_info.pop(idx, None)
                for k in [k for k, v in self._task_info.items() if len(v) == 1 and v[0] == w]:
                    del self._task_info[k]
                    self._tasks_outstanding -= 1
                self._try_put_index()
                continue
            if not self._in_order or idx == self._rcvd_idx:
                self._task_info.pop(idx, None)
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process(data)
            self._task_info[idx] += (data,)  # early: keep it until its turn

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = _pin.pin_memory(data, "cuda")
        self._num_yielded += 1
        return data

    def _shutdown_workers(self, join: bool = True) -> None:
        """Tell every worker to exit; with ``join``, wait for them (terminating stragglers)."""
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        if join:
            for w in self._workers:
                w.join(timeout=JOIN_TIMEOUT)
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=JOIN_TIMEOUT)
        for q in self._index_queues:
            q.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    # Note [Collected iterators]
    # An iterator abandoned mid-epoch, or one held by an exception's traceback (a reference cycle),
    # is finalized whenever the garbage collector runs, in whichever thread allocated at the time:
    # possibly the feeder thread of one of its own index queues, which would then block in join()
    # waiting for a worker that waits for the None that same thread has yet to send. So __del__
    # only signals the workers (they exit on their own; multiprocessing reaps them), and does
    # nothing in a forked child, where the objects are copies of the parent's.
    def __del__(self):
        try:
            if os.getpid() == self._owner_pid:
                self._shutdown_workers(join=False)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")

"""CUDA graphs: capture the work a stream is given once, then replay all of it with one launch.

:class:`CUDAGraph` and the :class:`graph` context manager follow ``torch.cuda.graphs``. Capture
records every kernel, copy and cuBLASLt call queued on the capturing stream into a ``CUgraph``
instead of running it; :meth:`CUDAGraph.replay` launches the whole graph with one
``cuGraphLaunch``, so a step of hundreds of kernels costs one host call instead of hundreds of
Python dispatches (Note [Why graphs]).

Note [Why graphs]
strided's eager path spends tens of microseconds of Python per op (dispatch, Meta, allocator,
launch); a training step of a few thousand small ops is then bound by the host, not the GPU.
A captured step replays with the GPU's own timing. The price is torch's: the captured work is
fixed — same shapes, same addresses, same Python decisions, same scalar arguments (a learning
rate passed as a float is frozen at its capture-time value) — so inputs are copied into static
tensors before each replay and outputs are read from the tensors the capture produced.

Note [Graph capture and the allocator]
As c10's CUDAGraph does, capture first routes this device's allocations made on the capturing
stream (or on any stream joined to the same capture) to a *private pool* of the caching
allocator, then begins the stream capture. Memory freed during capture goes back to that pool,
so blocks are reused only within the graph's own order; the pool keeps the graph's memory
alive until :meth:`CUDAGraph.reset` releases it (then ``empty_cache`` can return it). New
segments are allocated with the thread's capture mode relaxed (``cuMemAlloc`` is otherwise an
unsafe call that invalidates a global-mode capture), and cached blocks are never released to
the driver while a capture is underway.

Note [Other threads and global capture]
In the default ``capture_error_mode="global"`` the driver refuses an unsafe call (a synchronization, a
blocking copy, ``cuMemAlloc``) made by *any* thread of the process while the capture is underway, and
the capture is then invalidated. Another library's runtime threads count: once JAX's GPU backend has
started, its threads (py_xla_execute, ...) make such calls at random moments: on an H200, 2 of 120
short captures (each spanning a garbage collection or a 50 ms sleep) failed with
``CUDA_ERROR_STREAM_CAPTURE_INVALIDATED``, and none of 120 with ``capture_error_mode="thread_local"``
(only the capturing thread is checked) or ``"relaxed"``. As in torch, pick ``"thread_local"`` when such
a library shares the process.

Note [Random ops under capture]
An eager Philox kernel takes its (seed, offset) as launch arguments and the generator's offset
advances by one per draw; captured like that, every replay would repeat the same numbers. As
torch's graph-safe generator state does, a draw under capture instead reads {seed, base offset}
from a small device buffer the graph owns per generator, plus its own place among the graph's
draws of that generator (0, 1, ...). Before each launch, :meth:`CUDAGraph.replay` writes the
generator's current seed and offset into that buffer (a stream-ordered copy) and advances the
generator's offset by the graph's number of draws. Replays therefore draw fresh numbers, the
same ones the same ops would draw eagerly from that generator state.
"""

from __future__ import annotations

import warnings

from ...memory.pools import new_pool_id
from . import capture as _capture
from . import driver
from .capture import CAPTURE_ACTIVE, capture_mode, capture_status, run_deferred, run_or_defer, underway
from .driver import CudaError, check, cu

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "capture_philox"]

_capturing: dict[int, CUDAGraph] = {}  # capturing stream handle -> its graph


def capture_philox(gen, stream: int, device) -> tuple[int, int]:
    """(device pointer of ``gen``'s {seed, base offset} in the graph capturing ``stream``, this draw's
    offset from the base): Note [Random ops under capture]."""
    g = _capturing.get(stream)
    if g is None:  # a stream joined to a capture: find the graph by capture id
        _, cid = capture_status(stream)
        g = next((x for x in _capturing.values() if x._capture_id == cid), None)
        if g is None:
            raise RuntimeError("random op on a stream captured by something other than a strided CUDAGraph")
    return g._philox(gen, device)


def _int64():
    from ... import dtypes

    return dtypes.int64


def graph_pool_handle() -> tuple[int, int]:
    """A fresh memory-pool id that several graphs can share (``capture_begin(pool=...)``)."""
    return new_pool_id()


class CUDAGraph:
    """A captured CUDA graph (``torch.cuda.CUDAGraph``): capture once, :meth:`replay` many times.

    Parameters
    ----------
    keep_graph : bool
        Keep the un-instantiated ``CUgraph`` after capture (for :meth:`debug_dump`); the graph is
        then instantiated by :meth:`instantiate` or by the first :meth:`replay`.
    """

    def __init__(self, keep_graph: bool = False):
        self._keep = keep_graph
        self._graph = None  # CUgraph
        self._exec = None  # CUgraphExec
        self._pool = None  # the private pool id this graph holds a use of
        self._device = None
        self._stream = None  # capturing stream handle while capturing
        self._alloc = None
        self._capturing = False
        self._nodes = 0
        self._capture_id = None
        self._rng: dict[int, list] = {}  # id(generator) -> [generator, state tensor, host buffer, draws]

    # ------------------------------------------------------------------ capture
    def capture_begin(self, pool=None, capture_error_mode: str = "global") -> None:
        """Begin capturing the current stream's work (it must not be the default stream)."""
        from .allocator import get_allocator
        from .device import current_device
        from .streams import current_stream_handle

        if self._exec is not None or self._graph is not None or self._capturing:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To capture a new graph, "
                               "create a new instance.")
        mode = capture_mode(capture_error_mode)
        dev = current_device()
        driver.ensure_context(dev)
        stream = current_stream_handle(dev)
        if stream == 0:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. (However, after capture, "
                               "it's ok to replay them on the default stream.)")
        if pool is None:
            pool_id = new_pool_id(graph=True)
        else:
            if not (isinstance(pool, tuple) and len(pool) == 2 and all(isinstance(x, int) for x in pool)):
                raise TypeError(f"capture_begin: pool must be a pool handle from graph_pool_handle() or "
                                f"CUDAGraph.pool(), got {pool!r}")
            pool_id = pool
        alloc = get_allocator(dev)
        ids = {}  # Note [Graph capture and the allocator]: this capture's stream, or a stream joined to it

        def in_this_capture(s: int) -> bool:
            if s == stream:
                return True
            if s == 0 or "id" not in ids:
                return False
            status, cid = capture_status(s)
            return status == CAPTURE_ACTIVE and cid == ids["id"]

        alloc.begin_allocate_to_pool(pool_id, in_this_capture)
        underway.n += 1
        try:
            check(cu().cuStreamBeginCapture(stream, mode))
            ids["id"] = capture_status(stream)[1]
        except BaseException:
            underway.n -= 1
            alloc.end_allocate_to_pool(pool_id)
            alloc.release_pool(pool_id)
            raise
        self._pool, self._device, self._stream, self._alloc = pool_id, dev, stream, alloc
        self._capture_id = ids["id"]
        self._capturing = True
        _capturing[stream] = self

    def capture_end(self) -> None:
        """End the capture and instantiate the graph (unless ``keep_graph``)."""
        from .streams import current_stream_handle

        if not self._capturing:
            raise RuntimeError("capture_end: no capture is underway on this CUDAGraph (call capture_begin first)")
        driver.ensure_context(self._device)
        if current_stream_handle(self._device) != self._stream:
            raise RuntimeError("Capture must end on the same stream it began on.")
        g = self._end_capture()
        if g is None:
            raise CudaError("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: the capture was invalidated by an operation not "
                            "permitted while a stream is capturing (a synchronization, a blocking copy or a "
                            "query of the capturing stream)", 901)
        self._graph = g
        self._nodes = int(check(cu().cuGraphGetNodes(g))[1])
        if self._nodes == 0:
            warnings.warn("The CUDA Graph is empty. This usually means that the graph was attempted to be "
                          "captured on wrong device or stream.", stacklevel=2)
        if not self._keep:
            self.instantiate()
            check(cu().cuGraphDestroy(g))
            self._graph = None

    def _end_capture(self):
        """End the stream capture and the pool routing; the CUgraph, or None if it was invalidated."""
        self._capturing = False
        _capturing.pop(self._stream, None)
        underway.n -= 1
        self._alloc.end_allocate_to_pool(self._pool)
        err, g = cu().cuStreamEndCapture(self._stream)
        if _capture._deferred and not underway.n:
            run_deferred()  # Note [Finalizers during capture]
        if err != 0:
            self._release_pool()
            code = int(err)
            if code != 901:  # CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                check((err,))
            return None
        return g

    def _abort(self) -> None:
        """End a capture that failed in Python (an exception in the captured code)."""
        if self._capturing:
            g = self._end_capture()
            if g is not None:
                cu().cuGraphDestroy(g)
                self._release_pool()

    def instantiate(self) -> None:
        """Make the executable graph (done by ``capture_end`` unless ``keep_graph=True``)."""
        if self._graph is None:
            raise RuntimeError("instantiate: this CUDAGraph has no captured graph")
        if self._exec is not None:
            return
        driver.ensure_context(self._device)
        flag = int(cu().CUgraphInstantiate_flags.CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        self._exec = check(cu().cuGraphInstantiate(self._graph, flag))

    def _philox(self, gen, device) -> tuple[int, int]:
        entry = self._rng.get(id(gen))
        if entry is None:
            import numpy as np

            from ...factories import empty

            state = empty(2, dtype=_int64(), device=device)  # from this graph's pool, kept by the graph
            entry = self._rng[id(gen)] = [gen, state, np.zeros(2, dtype=np.uint64), 0]
        offset = entry[3]
        entry[3] += 1
        return entry[1].data_ptr(), offset

    # ------------------------------------------------------------------ use
    def replay(self) -> None:
        """Launch the captured work on the current stream."""
        if self._exec is None:
            if self._graph is None:
                raise RuntimeError("Called CUDAGraph::replay without a preceding successful capture.")
            self.instantiate()
        from .streams import current_stream_handle

        driver.ensure_context(self._device)
        stream = current_stream_handle(self._device)
        for gen, state, host, draws in self._rng.values():  # Note [Random ops under capture]
            host[0] = gen.initial_seed() & ((1 << 64) - 1)
            host[1] = gen.philox_offset
            gen.philox_offset += draws
            check(cu().cuMemcpyHtoDAsync(state.data_ptr(), host.ctypes.data, 16, stream))  # pageable: staged now
        check(cu().cuGraphLaunch(self._exec, stream))

    def pool(self) -> tuple[int, int]:
        """The id of this graph's memory pool; pass it to another capture to share the memory."""
        if self._pool is None:
            raise RuntimeError("Called CUDAGraph::pool() without a preceding successful capture.")
        return self._pool

    def num_nodes(self) -> int:
        """Nodes (kernels, copies, ...) in the captured graph."""
        return self._nodes

    def debug_dump(self, path: str) -> None:
        """Write the captured graph as Graphviz DOT (needs ``keep_graph=True``)."""
        if self._graph is None:
            raise RuntimeError("debug_dump: the CUgraph was not kept; create the CUDAGraph with keep_graph=True "
                               "and dump before it is reset")
        flags = int(cu().CUgraphDebugDot_flags.CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE)
        check(cu().cuGraphDebugDotPrint(self._graph, str(path).encode(), flags))

    def reset(self) -> None:
        """Free the graph and release its memory pool (its memory returns on ``empty_cache``)."""
        if self._capturing:
            self._abort()
        if self._exec is not None or self._graph is not None:
            driver.ensure_context(self._device)
            if self._exec is not None:
                check(cu().cuGraphExecDestroy(self._exec))
            if self._graph is not None:
                check(cu().cuGraphDestroy(self._graph))
        self._exec = self._graph = None
        self._rng.clear()
        self._release_pool()

    def _release_pool(self) -> None:
        if self._pool is not None:
            self._alloc.release_pool(self._pool)
        self._pool = None

    def __del__(self):
        try:
            run_or_defer(self.reset)  # Note [Finalizers during capture]
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class graph:  # noqa: N801 - torch.cuda.graph
    """``with strided.cuda.graph(g):`` captures the block's CUDA work into ``g``.

    Synchronizes the device and empties the cache first, captures on ``stream`` (a side stream
    made once per device when not given), and restores the current stream afterwards. An
    exception in the block ends the capture, drops the graph and is re-raised.
    """

    _side_streams: dict[int, object] = {}

    def __init__(self, cuda_graph: CUDAGraph, pool=None, stream=None, capture_error_mode: str = "global"):
        if not isinstance(cuda_graph, CUDAGraph):
            raise TypeError(f"graph: expected a strided.cuda.CUDAGraph, got {type(cuda_graph).__name__}")
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode
        self._stream_ctx = None

    def __enter__(self):
        from .allocator import get_allocator
        from .device import current_device, synchronize
        from .streams import Stream, stream

        capture_mode(self.capture_error_mode)
        dev = current_device()
        synchronize()
        get_allocator(dev).empty_cache()
        s = self.capture_stream
        if s is None:
            s = graph._side_streams.get(dev)
            if s is None:
                s = graph._side_streams[dev] = Stream(dev)
        self._stream_ctx = stream(s)
        self._stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._stream_ctx.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph._abort()
        finally:
            self._stream_ctx.__exit__(None, None, None)
        return False

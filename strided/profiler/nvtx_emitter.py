"""``emit_nvtx``: one NVTX range per operator call and per backward node, for Nsight Systems' timeline
(torch.autograd.profiler.emit_nvtx).

Note [NVTX op ranges]
It hooks the dispatcher as the profiler does (Note [Profiler hooks]): while the block runs, each resolved
kernel is wrapped to push a range named after its op (``aten::addmm``; with ``record_shapes=True``
``aten::addmm, sizes = [[768], [512, 768], [768, 768], [], []]``, torch's format) and pop it on return.
An op's Autograd kernel and the backend kernel below it give one range, as in torch. Backward nodes get
``autograd::engine::evaluate_function: MmBackward0`` around ``MmBackward0``. torch appends ``seq = N``
(the autograd sequence number that pairs a forward op with its backward node); strided's nodes carry no
sequence numbers, so its names stop before it. The ranges go to the NVTX library (Note [NVTX library]);
without a tool attached they cost a C call each and record nothing.
"""

from __future__ import annotations

import threading

from ..backends.cuda.nvtx_library import library
from ..dispatch import dispatcher
from .recorder import _shapes, active, wrap_resolved

__all__ = ["emit_nvtx"]


class emit_nvtx:
    """``with strided.autograd.profiler.emit_nvtx(): train_step()`` under ``nsys profile``: every operator
    call and backward node becomes an NVTX range (Note [NVTX op ranges])."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = bool(enabled)
        self.record_shapes = bool(record_shapes)
        self.entered = False
        self._tls = threading.local()

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is already entered")
        if active.recorder is not None or dispatcher._tracing.wrapper is not None:
            raise RuntimeError("Profiler is already enabled on this thread (a strided profiler, count_ops() or "
                               "emit_nvtx() is recording, or a forward AD level is open)")
        lib = library()  # refused here, before anything is hooked, when no NVTX library is installed
        self._push, self._pop = lib.nvtxRangePushA, lib.nvtxRangePop
        _synchronize()
        self.entered = True
        dispatcher._tracing.node_scope = self._node_scope
        dispatcher._tracing.wrapper = self._wrap
        wrap_resolved(self._wrap)
        return self

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        _synchronize()
        dispatcher._tracing.wrapper = None
        dispatcher._tracing.node_scope = None
        wrap_resolved(None)
        self.entered = False

    def _stack(self) -> list:
        st = getattr(self._tls, "stack", None)
        if st is None:
            st = self._tls.stack = []
        return st

    def _wrap(self, op, keyset, fn):
        name = op.name
        encoded = name.encode()
        shapes = self.record_shapes
        push, pop, stack = self._push, self._pop, self._stack

        def annotated(*args, **kwargs):
            st = stack()
            if st and st[-1] == name:
                return fn(*args, **kwargs)  # the backend kernel below this op's Autograd kernel
            push(f"{name}, sizes = {_shapes(args, kwargs)}".encode() if shapes else encoded)
            st.append(name)
            try:
                return fn(*args, **kwargs)
            finally:
                st.pop()
                pop()

        annotated.unprofiled = fn
        return annotated

    def _node_scope(self, name: str):
        return _NodeRanges(self, name)


class _NodeRanges:
    __slots__ = ("emitter", "name")

    def __init__(self, emitter, name):
        self.emitter, self.name = emitter, name

    def __enter__(self):
        e = self.emitter
        e._push(f"autograd::engine::evaluate_function: {self.name}".encode())
        e._push(self.name.encode())
        e._stack().append(self.name)

    def __exit__(self, *exc):
        e = self.emitter
        e._stack().pop()
        e._pop()
        e._pop()


def _synchronize() -> None:
    """Every device strided has used finishes its queued work (torch synchronizes on entry and exit)."""
    from ..backends.cuda import driver

    if driver.is_initialized():
        from ..backends.cuda.device import synchronize

        for i in sorted(driver._contexts):
            synchronize(i)

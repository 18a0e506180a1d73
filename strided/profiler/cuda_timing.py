"""GPU time of each kernel, cuBLASLt GEMM and memcpy launched while a profile records (Note [Profiler hooks]).

Note [Kernel timing with events]
torch reads kernel times from CUPTI; strided brackets each launch with two CUDA events on the launch's
stream (``cuEventRecord`` costs about a microsecond of host time each, so a profiled step runs slower than
an unprofiled one, as with torch). To place kernels on the host's timeline, the first launch on a device
synchronizes it and records a reference event at a known host time; every kernel's start is that time
plus ``cuEventElapsedTime(reference, start)``. The events are recorded right around the driver (or
cuBLASLt) call, not the Python that prepares it: where the GPU idles waiting for the host, a kernel's time
still includes that call's own host cost (a few microseconds), so short kernels in host-bound stretches
read long. Launches made while a CUDA graph is being captured are listed without times (an event recorded
then would belong to the graph); a replay of a captured graph is timed as one range, "CUDA graph replay"
(torch's CUPTI shows the graph's kernels one by one).
"""

from __future__ import annotations

from ..backends.cuda import capture, driver, launch
from ..backends.cuda.driver import check, cu

__all__ = ["CudaTiming"]

_TIMED_CALLS = {"cuMemcpyAsync": "Memcpy DtoD", "cuMemcpyHtoDAsync": "Memcpy HtoD", "cuMemcpyDtoHAsync": "Memcpy DtoH",
           "cuMemcpyPeerAsync": "Memcpy PtoP", "cuGraphLaunch": "CUDA graph replay"}


class CudaTiming:
    """Installs the timed launch points for one recorder and turns its events into times at the end."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.pending: list = []  # (KernelRecord, device, start event, end event)
        self.free: list[int] = []
        self.refs: dict[int, tuple[int, float]] = {}  # device -> (reference event, host µs)
        self.saved: list = []  # (owner, attribute, original) of every swapped launch point
        self.names: dict[int, str] = {}  # CUfunction -> kernel name
        self.gemm_name = None  # the GEMM being run (cuBLASLt's call does not say)
        self.launch_pair = (None, None)

    # -- events ------------------------------------------------------------------------------
    def _event(self) -> int:
        if self.free:
            return self.free.pop()
        return int(check(cu().cuEventCreate(0)))

    def _reference(self, device: int, stream: int) -> None:
        driver.ensure_context(device)
        check(cu().cuCtxSynchronize())
        ev = self._event()
        check(cu().cuEventRecord(ev, stream))
        check(cu().cuEventSynchronize(ev))
        self.refs[device] = (ev, self.recorder.now())

    def timed(self, name, device, stream, fn, args, host_name, grid=None, block=None):
        """``fn(*args)`` -- one driver or cuBLASLt call that enqueues GPU work on ``stream`` -- between two events,
        recorded as a kernel named ``name`` under the innermost open range and a host range ``host_name``."""
        rec = self.recorder
        parent = rec.current()
        if capture.underway.n:
            rec.add_kernel(name, device, stream, rec.now(), parent, grid, block)
            return fn(*args)
        if device not in self.refs:
            self._reference(device, stream)
        start, end = self._event(), self._event()
        host = rec.push(host_name, "cuda_runtime")
        try:
            check(cu().cuEventRecord(start, stream))
            result = fn(*args)
            check(cu().cuEventRecord(end, stream))
        finally:
            rec.pop(host)
        self.pending.append((rec.add_kernel(name, device, stream, host.start_us, parent, grid, block), device, start,
                             end))
        return result

    def _kernel_name(self, func) -> str:
        name = self.names.get(int(func))
        if name is None:
            self.names = {k.func: k.name for k in launch._kernels.values()}
            name = self.names.get(int(func), "kernel")
        return name

    # -- install / uninstall -------------------------------------------------------------------
    def install(self) -> None:
        timing = self
        d = cu()
        real_launch = d.cuLaunchKernel

        def timed_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
            return timing.timed(timing._kernel_name(f), max(driver._tls.ctx_device, 0), int(stream), real_launch,
                                (f, gx, gy, gz, bx, by, bz, smem, stream, params, extra), "cuLaunchKernel",
                                (gx, gy, gz), (bx, by, bz))

        # the driver's function, for kernels loaded from now on, and each loaded Kernel's cached one
        self.saved = [(d, "cuLaunchKernel", real_launch)]
        d.cuLaunchKernel = timed_launch
        for k in launch._kernels.values():
            k._launch = timed_launch
        self.launch_pair = (timed_launch, real_launch)
        try:
            from ..backends.cuda import blas
        except ImportError:  # no nvmath-python: no GEMMs to time
            blas = None
        if blas is not None:
            gemm, real_matmul = blas.gemm, blas.lt.matmul

            def named_gemm(name, out, a, b, **kw):
                timing.gemm_name = f"cublasLtMatmul [{name} {out.dtype.name}]"
                try:
                    return gemm(name, out, a, b, **kw)
                finally:
                    timing.gemm_name = None

            def timed_matmul(*args):
                return timing.timed(timing.gemm_name or "cublasLtMatmul", max(driver._tls.ctx_device, 0),
                                    int(args[-1]), real_matmul, args, "cublasLtMatmul")

            self.saved += [(blas, "gemm", gemm), (blas.lt, "matmul", real_matmul)]
            blas.gemm, blas.lt.matmul = named_gemm, timed_matmul
        for fn_name, label in _TIMED_CALLS.items():
            original = getattr(d, fn_name)

            def timed_copy(*args, _original=original, _label=label, _name=fn_name):
                return timing.timed(_label, max(driver._tls.ctx_device, 0), int(args[-1]), _original, args, _name)

            self.saved.append((d, fn_name, original))
            setattr(d, fn_name, timed_copy)

    def uninstall(self) -> None:
        for owner, attr, original in reversed(self.saved):
            setattr(owner, attr, original)
        self.saved = []
        timed_launch, real_launch = self.launch_pair
        for k in launch._kernels.values():
            if k._launch is timed_launch:
                k._launch = real_launch

    # -- results -----------------------------------------------------------------------------
    def resolve(self) -> None:
        """Read every kernel's start and end (after the devices finish) and free the events."""
        d = cu()
        for device in self.refs:
            driver.ensure_context(device)
            check(d.cuCtxSynchronize())
        for k, device, start, end in self.pending:
            ref, host = self.refs[device]
            k.start_us = host + check(d.cuEventElapsedTime(ref, start)) * 1e3
            k.end_us = k.start_us + check(d.cuEventElapsedTime(start, end)) * 1e3
            self.free += (start, end)
        self.free += [ref for ref, _ in self.refs.values()]
        for ev in self.free:
            d.cuEventDestroy(ev)
        self.pending, self.free, self.refs = [], [], {}

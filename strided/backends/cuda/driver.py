"""The CUDA driver layer: the only module of strided that imports ``cuda.bindings``.

Note [Lazy driver]
``cuda.bindings`` is imported on first use, not at import time, so ``import strided`` (and
``import strided.backends.cuda``) works on machines with no NVIDIA package and no driver.
:func:`is_available` and :func:`device_count` only call ``cuInit`` and ``cuDeviceGetCount``:
they never create a context and never raise.  A device's *primary* context is retained the
first time work is issued to it (:func:`ensure_context`) and made current in each thread that
issues work (the driver's current context is per thread).
"""

from __future__ import annotations

import os
import threading

__all__ = ["CudaError", "check", "cu", "nvml", "device_uuid", "is_available", "device_count", "ensure_context",
           "driver_version", "LAUNCH_BLOCKING"]

LAUNCH_BLOCKING = os.environ.get("CUDA_LAUNCH_BLOCKING", "0") == "1"


class CudaError(RuntimeError):
    """A CUDA driver call failed: ``CudaError("CUDA_ERROR_X: description")``."""

    def __init__(self, message: str, code: int = -1):
        super().__init__(message)
        self.code = code


_cu = None
_init_lock = threading.Lock()
_init_result: int | None = None  # CUresult of cuInit, cached
_count: int | None = None
_contexts: dict[int, object] = {}  # device index -> primary CUcontext


class _ContextTLS(threading.local):
    ctx_device = -1  # device whose primary context is current here (Note [Thread-local defaults], streams.py)


_tls = _ContextTLS()


def cu():
    """The ``cuda.bindings.driver`` module (imported on first call)."""
    global _cu
    if _cu is None:
        from cuda.bindings import driver

        _cu = driver
    return _cu


_nvml = None


def nvml():
    """The ``cuda.bindings.nvml`` module (imported on first call; raises ImportError when absent)."""
    global _nvml
    if _nvml is None:
        from cuda.bindings import nvml as module

        _nvml = module
    return _nvml


def device_uuid(index: int) -> bytes:
    """The 16 bytes of ``cuDeviceGetUuid`` for device ``index`` (a MIG instance's own UUID under MIG)."""
    require()
    d = cu()
    raw = check(d.cuDeviceGetUuid(check(d.cuDeviceGet(index)))).bytes
    return raw.encode("latin-1") if isinstance(raw, str) else bytes(raw)


def _describe(err) -> str:
    d = cu()
    try:
        name = d.cuGetErrorName(err)[1]
        desc = d.cuGetErrorString(err)[1]
        name = name.decode() if name else str(err)
        desc = desc.decode() if desc else "unknown error"
    except Exception:  # noqa: BLE001 - formatting an error must not raise another
        name, desc = getattr(err, "name", str(err)), "unknown error"
    return f"{name}: {desc}"


def check(result):
    """Unpack a cuda-bindings result tuple ``(CUresult, *outputs)``.

    Returns None, the single output, or the tuple of outputs; raises :class:`CudaError`
    ``"CUDA_ERROR_X: description"`` when the call failed.
    """
    err = result[0]
    if err != 0:
        raise CudaError(_describe(err), int(err))
    n = len(result)
    if n == 1:
        return None
    if n == 2:
        return result[1]
    return result[1:]


def _init() -> bool:
    """``cuInit`` once; True when the driver works.  Never raises."""
    global _init_result, _count
    if _init_result is not None:
        return _init_result == 0
    with _init_lock:
        if _init_result is None:
            try:
                d = cu()
                r = int(d.cuInit(0)[0])
                n = 0
                if r == 0:
                    err, n = d.cuDeviceGetCount()
                    n = int(n) if int(err) == 0 else 0
            except Exception:  # noqa: BLE001 - no package, no libcuda.so: CUDA is unavailable
                r, n = -1, 0
            _count = n
            _init_result = r
    return _init_result == 0


def is_available() -> bool:
    """True when the driver loads and sees at least one device (no context is created)."""
    return _init() and bool(_count)


def device_count() -> int:
    """Number of CUDA devices (0 without a driver); never raises."""
    return _count if _init() else 0


def require() -> None:
    """Raise a clear error when CUDA cannot be used."""
    if not is_available():
        raise RuntimeError("Found no NVIDIA driver on your system / no CUDA device is available: "
                           "strided.cuda.is_available() is False")


def ensure_context(index: int) -> None:
    """Make device ``index``'s primary context current in this thread (retaining it first)."""
    if _tls.ctx_device == index:
        return
    ctx = _contexts.get(index)
    if ctx is None:
        require()
        if not 0 <= index < _count:
            raise RuntimeError(f"CUDA error: invalid device ordinal {index} (device_count() = {_count})")
        with _init_lock:
            ctx = _contexts.get(index)
            if ctx is None:
                dev = check(cu().cuDeviceGet(index))
                ctx = check(cu().cuDevicePrimaryCtxRetain(dev))
                _contexts[index] = ctx
    check(cu().cuCtxSetCurrent(ctx))
    _tls.ctx_device = index


def is_initialized() -> bool:
    """True once some device's context has been created by strided."""
    return bool(_contexts)


def driver_version() -> int:
    """The driver's CUDA version as an int (13000 = 13.0); 0 without a driver."""
    if not _init():
        return 0
    return int(check(cu().cuDriverGetVersion()))


def attribute(name: str, index: int) -> int:
    """``cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_<name>, device)``."""
    require()
    d = cu()
    attr = getattr(d.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name)
    return int(check(d.cuDeviceGetAttribute(attr, check(d.cuDeviceGet(index)))))

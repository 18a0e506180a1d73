"""GPU monitoring through NVML: torch.cuda's ``utilization``, ``memory_usage``, ``temperature``,
``power_draw``, ``clock_rate``, ``device_memory_used`` and ``list_gpu_processes``.

NVML is read with ``cuda.bindings.nvml`` (through ``driver.nvml()``), where torch uses pynvml.

Note [NVML device]
NVML numbers every GPU of the machine; CUDA numbers only the visible ones, in its own order. torch
maps one to the other by parsing ``CUDA_VISIBLE_DEVICES``. strided asks the driver for the device's
UUID (``cuDeviceGetUuid``) and NVML for the device with that UUID, so the answer is about the same
GPU whatever ``CUDA_VISIBLE_DEVICES`` or ``CUDA_DEVICE_ORDER`` say; a MIG instance is found by its
own UUID. Handles are cached per CUDA index.
"""

from __future__ import annotations

import threading

from . import driver
from .device import _index

__all__ = ["utilization", "memory_usage", "temperature", "power_draw", "clock_rate", "device_memory_used",
           "list_gpu_processes"]

DRIVER_NOT_LOADED = "cuda driver can't be loaded, is cuda enabled?"  # torch's words
NOT_INSTALLED = ("cuda-bindings does not seem to be installed or it can't be imported "
                 "(strided reads NVML through cuda.bindings.nvml).")
_NOT_AVAILABLE = (1 << 64) - 1  # NVML_VALUE_NOT_AVAILABLE (unsigned long long)

_lock = threading.Lock()
_initialized = False
_handles: dict[int, int] = {}  # CUDA device index -> NVML device handle


def _library():
    """``cuda.bindings.nvml``, initialized once; torch's errors when the module or the driver is missing."""
    global _initialized
    try:
        nvml = driver.nvml()
    except ImportError as e:
        raise ModuleNotFoundError(NOT_INSTALLED) from e
    if not _initialized:
        with _lock:
            if not _initialized:
                try:
                    nvml.init_v2()
                except (nvml.DriverNotLoadedError, nvml.LibraryNotFoundError, RuntimeError, OSError) as e:
                    # RuntimeError: cuda.pathfinder found no libnvidia-ml.so.1; other NVML errors pass through
                    raise RuntimeError(DRIVER_NOT_LOADED) from e
                _initialized = True
    return nvml


def _handle(device):
    """The NVML handle of CUDA device ``device`` (None: the current one), found by UUID (Note [NVML device])."""
    nvml = _library()
    i = _index(device)
    h = _handles.get(i)
    if h is not None:
        return nvml, h
    n = driver.device_count()
    if not 0 <= i < n:
        raise RuntimeError(f"device {i} is not visible (strided.cuda.device_count() = {n})")
    x = driver.device_uuid(i).hex()
    uuid = f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"
    try:
        h = nvml.device_get_handle_by_uuid("GPU-" + uuid)
    except nvml.NotFoundError:
        h = nvml.device_get_handle_by_uuid("MIG-" + uuid)
    _handles[i] = h
    return nvml, h


def utilization(device=None) -> int:
    """Percent of the last sample period (1/6 s to 1 s) in which a kernel was running on the GPU, as
    ``nvidia-smi`` reports it."""
    nvml, h = _handle(device)
    return int(nvml.device_get_utilization_rates(h).gpu)


def memory_usage(device=None) -> int:
    """Percent of the last sample period in which device memory was being read or written (``nvidia-smi``)."""
    nvml, h = _handle(device)
    return int(nvml.device_get_utilization_rates(h).memory)


def temperature(device=None) -> int:
    """The GPU die's temperature in degrees C."""
    nvml, h = _handle(device)
    return int(nvml.device_get_temperature_v(h, nvml.TemperatureSensors.TEMPERATURE_GPU))


def power_draw(device=None) -> int:
    """The GPU's power draw in milliwatts (averaged over about a second on Ampere and newer)."""
    nvml, h = _handle(device)
    return int(nvml.device_get_power_usage(h))


def clock_rate(device=None) -> int:
    """The current SM clock in MHz."""
    nvml, h = _handle(device)
    return int(nvml.device_get_clock_info(h, nvml.ClockType.CLOCK_SM))


def device_memory_used(device=None) -> int:
    """Bytes of device memory in use by all processes, as ``nvidia-smi`` reports it (not only strided's)."""
    nvml, h = _handle(device)
    return int(nvml.device_get_memory_info_v2(h).used)


def list_gpu_processes(device=None) -> str:
    """A printout of the processes with a CUDA context on the device and the memory each uses, in torch's
    format (the header names NVML's index of the GPU); as torch, a message instead of an error when NVML
    cannot be loaded. In a container NVML may list the host's process ids, or none."""
    try:
        nvml, h = _handle(device)
    except ModuleNotFoundError:
        return "cuda-bindings module not found, please install cuda-bindings (strided reads NVML through it)"
    except RuntimeError as e:
        if str(e) == DRIVER_NOT_LOADED:
            return DRIVER_NOT_LOADED
        raise
    procs = nvml.device_get_compute_running_processes_v3(h)
    lines = [f"GPU:{int(nvml.device_get_index(h))}"]  # NVML's index, as torch prints
    if len(procs) == 0:
        lines.append("no processes are running")
    for p in procs:
        used = int(p.used_gpu_memory)
        mem = f"{used / (1024 * 1024):>12.3f}" if used != _NOT_AVAILABLE else f"{'N/A':>12}"
        lines.append(f"process {int(p.pid):>10d} uses {mem} MB GPU memory")
    return "\n".join(lines)

"""Loading CUBINs and launching kernels on the current stream.

Note [Kernel parameters]
Every strided kernel takes one parameter, a POD ``struct`` passed by value.  The host packs it
with a precompiled :class:`struct.Struct` into a ctypes buffer and hands ``cuLaunchKernel`` the
raw address of a one-entry ``void*`` array: no per-argument Python objects, and function
handles are cached as ints per (source, kernel, device).
"""

from __future__ import annotations

import ctypes
import struct
import threading

from . import driver
from .compiler import arch_for, compile_cubin
from .driver import check, cu

__all__ = ["Kernel", "get_kernel", "check_launch"]

_kernels: dict[tuple[str, str, int], Kernel] = {}
_get_ident = threading.get_ident
_context_tls = driver._tls  # this thread's current context (ensure_context's record)
_modules: list[object] = []  # loaded CUmodules stay alive for the process


class Kernel:
    """A loaded kernel: ``k(grid, block, stream, *values)`` packs ``values`` with ``fmt``.

    The parameter buffer is allocated once and reused (Note [Reused parameter buffer]).
    """

    __slots__ = ("name", "func", "packer", "device_index", "_buf", "_params", "_params_addr", "_owner",
                 "_pack_into", "_smem_limit", "_launch")

    def __init__(self, name: str, func: int, fmt: str, device_index: int):
        self.name = name
        self.func = func
        self.packer = struct.Struct(fmt)
        self.device_index = device_index
        self._buf = ctypes.create_string_buffer(max(self.packer.size, 1))
        self._params = (ctypes.c_void_p * 1)(ctypes.addressof(self._buf))
        self._params_addr = ctypes.addressof(self._params)
        self._owner = threading.get_ident()
        self._pack_into = self.packer.pack_into
        self._smem_limit = -1  # dynamic shared bytes allowed so far (set on the first launch_smem)
        self._launch = cu().cuLaunchKernel

    def __call__(self, grid: int, block: int, stream: int, *values) -> None:
        # Note [Reused parameter buffer]: cuLaunchKernel copies the parameters when it is called, so
        # the host buffer may be refilled as soon as it returns. Only the thread that loaded the
        # kernel reuses it (another thread could refill it while the GIL is released in the launch).
        if _get_ident() == self._owner:
            self._pack_into(self._buf, 0, *values)
            addr = self._params_addr
        else:
            buf = ctypes.create_string_buffer(self.packer.pack(*values), max(self.packer.size, 1))
            params = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
            addr = ctypes.addressof(params)
        if _context_tls.ctx_device != self.device_index:
            driver.ensure_context(self.device_index)
        err = self._launch(self.func, grid, 1, 1, block, 1, 1, 0, stream, addr, 0)[0]
        if err != 0 or driver.LAUNCH_BLOCKING:
            check_launch(self.name, err, stream)

    def launch_smem(self, grid: int, block: int, smem: int, stream: int, *values) -> None:
        """Launch with ``smem`` bytes of dynamic shared memory (opting in, once, when the kernel's static and
        dynamic shared memory together exceed the 48 KiB a block gets without it)."""
        if smem > self._smem_limit:
            driver.ensure_context(self.device_index)
            static = self._static_smem()
            if self._smem_limit < 0:
                self._smem_limit = max(0, (48 << 10) - static)
        if smem > self._smem_limit:
            optin = driver.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", self.device_index)
            if smem + static > optin:
                raise ValueError(f"kernel '{self.name}': {smem} bytes of dynamic and {static} of static shared "
                                 f"memory exceed the device's {optin} per block")
            attr = cu().CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            check(cu().cuFuncSetAttribute(self.func, attr, smem))
            self._smem_limit = smem
        buf = ctypes.create_string_buffer(self.packer.pack(*values), max(self.packer.size, 1))
        params = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
        driver.ensure_context(self.device_index)
        err = cu().cuLaunchKernel(self.func, grid, 1, 1, block, 1, 1, smem, stream, ctypes.addressof(params), 0)[0]
        if err != 0 or driver.LAUNCH_BLOCKING:
            check_launch(self.name, err, stream)

    def _static_smem(self) -> int:
        """The kernel's static shared memory in bytes."""
        attr = cu().CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
        return check(cu().cuFuncGetAttribute(attr, self.func))


def check_launch(name: str, err, stream: int) -> None:
    """Raise for a failed launch of kernel ``name``; under CUDA_LAUNCH_BLOCKING=1 also wait for the
    kernel and raise its fault, naming it (the driver reports earlier faults at the launch)."""
    blocking = ", CUDA_LAUNCH_BLOCKING=1" if driver.LAUNCH_BLOCKING else ""
    if err != 0:
        raise driver.CudaError(f"{driver._describe(err)} (launching kernel '{name}'{blocking})", int(err))
    if driver.LAUNCH_BLOCKING:
        err = cu().cuStreamSynchronize(stream)[0]
        if err != 0:
            raise driver.CudaError(f"{driver._describe(err)} (in kernel '{name}'{blocking})", int(err))


def get_kernel(source: str, name: str, fmt: str, device_index: int, options: tuple[str, ...] = ()) -> Kernel:
    """The kernel ``name`` of ``source`` on device ``device_index`` (compiled with NVRTC ``options`` and loaded
    once)."""
    key = (source, name, device_index, options)
    k = _kernels.get(key)
    if k is not None:
        return k
    from .device import get_device_capability

    cubin = compile_cubin(source, name, arch_for(*get_device_capability(device_index)), options)
    driver.ensure_context(device_index)
    mod = check(cu().cuModuleLoadData(cubin))
    _modules.append(mod)
    func = int(check(cu().cuModuleGetFunction(mod, name.encode())))
    k = _kernels[key] = Kernel(name, func, fmt, device_index)
    return k

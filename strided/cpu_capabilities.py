"""``strided.cpu.get_capabilities()``: torch.cpu's read-only map of the host CPU's instruction sets, caches and cores.

Note [CPU capabilities]
torch fills it from the cpuinfo library; Linux exposes the same facts, so here they are read from there: the ISA
flags from ``/proc/cpuinfo``'s ``flags`` line (the kernel's names, mapped to torch's keys -- ``pni`` is SSE3,
``abm`` LZCNT, ``sha_ni`` SHA, ``fma`` FMA3), the L1 data and L2 cache sizes of CPU 0 from
``/sys/devices/system/cpu/cpu0/cache``, the sockets and physical cores from the distinct ``physical id`` and
``(physical id, core id)`` pairs, the logical cores from ``os.cpu_count()``, the name from ``model name``
with the trademark marks dropped (cpuinfo also shortens some vendors' names, so the name may read longer than
torch's). The x86 keys are torch's x86 set; other machines (and other systems) get the keys that do not depend
on the instruction set -- architecture, name, cores, caches (0 where the system does not say) -- and no ISA keys.
Read once per process.
"""

from __future__ import annotations

import functools
import os
import platform
import re
from types import MappingProxyType

__all__ = ["get_capabilities"]

# torch's x86 key -> the Linux kernel's /proc/cpuinfo flag names that set it
_X86_FLAGS = {
    "sse": ("sse",), "sse2": ("sse2",), "sse3": ("pni",), "ssse3": ("ssse3",), "sse4_1": ("sse4_1",),
    "sse4_2": ("sse4_2",), "sse4a": ("sse4a",), "avx": ("avx",), "avx2": ("avx2",), "fma3": ("fma",),
    "fma4": ("fma4",), "f16c": ("f16c",), "popcnt": ("popcnt",), "lzcnt": ("abm", "lzcnt"), "bmi": ("bmi1",),
    "bmi2": ("bmi2",), "aes": ("aes",), "sha": ("sha_ni",), "clflush": ("clflush",), "clflushopt": ("clflushopt",),
    "clwb": ("clwb",), "avx_vnni": ("avx_vnni",), "avx_vnni_int8": ("avx_vnni_int8",),
    "avx_vnni_int16": ("avx_vnni_int16",), "avx_ne_convert": ("avx_ne_convert",), "avx512_f": ("avx512f",),
    "avx512_cd": ("avx512cd",), "avx512_bw": ("avx512bw",), "avx512_dq": ("avx512dq",), "avx512_vl": ("avx512vl",),
    "avx512_ifma": ("avx512ifma",), "avx512_vbmi": ("avx512vbmi",), "avx512_vbmi2": ("avx512_vbmi2",),
    "avx512_bitalg": ("avx512_bitalg",), "avx512_vpopcntdq": ("avx512_vpopcntdq",),
    "avx512_vnni": ("avx512_vnni",), "avx512_bf16": ("avx512_bf16",), "avx512_fp16": ("avx512_fp16",),
    "avx512_4vnniw": ("avx512_4vnniw",), "avx512_4fmaps": ("avx512_4fmaps",),
    "avx512_vp2intersect": ("avx512_vp2intersect",), "avx10_1": ("avx10_1",), "avx10_2": ("avx10_2",),
    "amx_tile": ("amx_tile",), "amx_int8": ("amx_int8",), "amx_bf16": ("amx_bf16",), "amx_fp16": ("amx_fp16",),
}


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _cache_size(level: int, kind: str) -> int:
    """Bytes of CPU 0's cache of ``level`` and ``kind`` ("Data" / "Unified"), 0 when the system does not say."""
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return 0
    for entry in entries:
        if not entry.startswith("index"):
            continue
        base = os.path.join(root, entry)
        if _read(os.path.join(base, "level")).strip() == str(level) and \
                _read(os.path.join(base, "type")).strip() == kind:
            size = _read(os.path.join(base, "size")).strip()
            match = re.fullmatch(r"(\d+)([KMG]?)", size)
            if match:
                return int(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)]
    return 0


@functools.cache
def _capabilities() -> MappingProxyType:
    info = _read("/proc/cpuinfo")
    flags, name = set(), ""
    sockets, cores = set(), set()
    physical = None
    for line in info.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "flags" and not flags:
            flags = set(value.split())
        elif key == "model name" and not name:
            name = value
        elif key == "physical id":
            physical = value
            sockets.add(value)
        elif key == "core id":
            cores.add((physical, value))
    name = re.sub(r"\s+", " ", re.sub(r"\((R|TM|r|tm)\)", "", name)).strip() or platform.processor()
    logical = os.cpu_count() or 1
    caps: dict = {
        "architecture": platform.machine(),
        "cpu_name": name,
        "num_sockets": max(len(sockets), 1),
        "num_physical_cores": len(cores) or logical,
        "num_logical_cores": logical,
        "l1d_cache_size": _cache_size(1, "Data"),
        "l2_cache_size": _cache_size(2, "Unified"),
    }
    if platform.machine() in ("x86_64", "AMD64", "i686", "i386"):
        for key, names in _X86_FLAGS.items():
            caps[key] = any(n in flags for n in names)
    return MappingProxyType(caps)


def get_capabilities() -> MappingProxyType:
    """The host CPU's instruction sets, cache sizes and core counts, read-only (Note [CPU capabilities])."""
    return _capabilities()

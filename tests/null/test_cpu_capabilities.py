"""``strided.cpu.get_capabilities()`` (Note [CPU capabilities] in ``strided/cpu_capabilities.py``): a read-only map
of the host CPU read from Linux's /proc and /sys, with torch's keys -- equal to torch's own where it is installed."""

from __future__ import annotations

import os
import platform

import pytest

import strided as st
from strided import cpu_capabilities

X86 = platform.machine() in ("x86_64", "AMD64")


def test_read_only_map_with_the_portable_keys():
    caps = st.cpu.get_capabilities()
    with pytest.raises(TypeError):
        caps["avx2"] = False  # type: ignore[index]
    assert caps["architecture"] == platform.machine() and caps["num_logical_cores"] == os.cpu_count()
    assert 1 <= caps["num_sockets"] <= caps["num_physical_cores"] <= caps["num_logical_cores"]
    assert isinstance(caps["cpu_name"], str) and caps["cpu_name"]
    if os.path.isdir("/sys/devices/system/cpu/cpu0/cache"):
        assert caps["l1d_cache_size"] >= 4096 and caps["l2_cache_size"] >= caps["l1d_cache_size"]


@pytest.mark.skipif(not X86, reason="torch's x86 keys")
def test_x86_flags_follow_proc_cpuinfo():
    caps = st.cpu.get_capabilities()
    assert len(caps) == 7 + len(cpu_capabilities._X86_FLAGS) == 54
    assert caps["sse2"] is True  # every x86-64 CPU has it
    with open("/proc/cpuinfo") as f:
        flags = next(line for line in f if line.startswith("flags")).split(":", 1)[1].split()
    assert caps["avx2"] == ("avx2" in flags) and caps["sse3"] == ("pni" in flags)
    assert caps["fma3"] == ("fma" in flags) and caps["sha"] == ("sha_ni" in flags)


def test_cache_sizes_parse_the_sysfs_units(monkeypatch):
    files = {"/sys/devices/system/cpu/cpu0/cache/index0/level": "1\n", "/sys/devices/system/cpu/cpu0/cache/index0/type":
             "Data\n", "/sys/devices/system/cpu/cpu0/cache/index0/size": "48K\n",
             "/sys/devices/system/cpu/cpu0/cache/index2/level": "2\n", "/sys/devices/system/cpu/cpu0/cache/index2/type":
             "Unified\n", "/sys/devices/system/cpu/cpu0/cache/index2/size": "2M\n"}
    monkeypatch.setattr(cpu_capabilities.os, "listdir", lambda root: ["index0", "index2", "uevent"])
    monkeypatch.setattr(cpu_capabilities, "_read", lambda path: files.get(path, ""))
    assert cpu_capabilities._cache_size(1, "Data") == 48 << 10
    assert cpu_capabilities._cache_size(2, "Unified") == 2 << 20
    assert cpu_capabilities._cache_size(3, "Unified") == 0


def test_against_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch.cpu, "get_capabilities"):
        pytest.skip("torch.cpu.get_capabilities needs torch >= 2.14")
    mine, theirs = dict(st.cpu.get_capabilities()), dict(torch.cpu.get_capabilities())
    assert set(mine) == set(theirs) if X86 else set(mine) <= set(theirs)
    mine.pop("cpu_name"), theirs.pop("cpu_name")  # cpuinfo shortens some vendors' names (Note [CPU capabilities])
    assert {k: v for k, v in mine.items() if k in theirs} == {k: theirs[k] for k in mine if k in theirs}

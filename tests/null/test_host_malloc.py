"""Note [Host malloc thresholds]: glibc's thresholds are set at import unless the user opted out, and the
opt-outs are honoured."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from strided.backends.cpu import host_malloc

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.parametrize("env, expected", [
    ({}, GLIBC),
    ({"STRIDED_CPU_MALLOC_TUNING": "0"}, False),
    ({"MALLOC_TRIM_THRESHOLD_": "1000000"}, False),  # the user's own glibc tunable wins
])
def test_tuning_follows_the_environment(monkeypatch, env, expected):
    for k in ("STRIDED_CPU_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert host_malloc.tune_host_malloc() is expected


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt only")
def test_freed_large_arrays_come_back_without_page_faults():
    """With the thresholds set, a loop of 4 MiB temporaries faults (almost) no new pages after the first round;
    glibc's defaults fault each one in again (the minor-fault counter of ``getrusage`` tells)."""
    code = """
import os, resource, sys
import numpy as np
from strided.backends.cpu.host_malloc import tune_host_malloc  # the import itself is left untuned (env)
if sys.argv[1] == "tuned":
    del os.environ["STRIDED_CPU_MALLOC_TUNING"]
    assert tune_host_malloc()
a = np.ones(1 << 20, np.float32)
for _ in range(3):
    (a * 2 + 1).sum()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    (a * 2 + 1).sum()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
    env = {"STRIDED_CPU_MALLOC_TUNING": "0"}  # the child decides by its argument
    faults = {}
    for mode in ("tuned", "default"):
        out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True,
                             env={**os.environ, **env})
        faults[mode] = int(out.stdout.strip())
    assert faults["tuned"] < 100 <= faults["default"], faults

"""Runs a program under a test NVTX tool (nvtx_log_injection.c, built with the system C compiler) and returns
the tool's log: one line per NVTX call the program made."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_SOURCE = Path(__file__).with_name("nvtx_log_injection.c")
_REPO = Path(__file__).resolve().parents[2]


def build_tool(out_dir: Path) -> Path:
    """The injection library (skips the test without a C compiler)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the test NVTX tool")
    lib = out_dir / "libnvtx_log.so"
    built = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(_SOURCE)], capture_output=True,
                           text=True)
    assert built.returncode == 0, built.stderr
    return lib


def run_under_tool(out_dir: Path, code: str) -> list[str]:
    """``code`` run in a fresh interpreter with the tool attached; the tool's log lines."""
    lib = build_tool(out_dir)
    log = out_dir / "nvtx.log"
    env = dict(os.environ, NVTX_INJECTION64_PATH=str(lib), NVTX_TEST_LOG=str(log),
               PYTHONPATH=os.pathsep.join([str(_REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()

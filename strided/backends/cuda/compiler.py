"""CUDA C++ -> NVRTC -> CUBIN for the device's ``sm_XY``, cached in memory and on disk.

Note [Kernel cache]
The on-disk cache lives in ``$STRIDED_CACHE_DIR`` (default ``~/.cache/strided``), created with
mode 0700.  The key hashes the source, the options, the NVRTC version and the arch.  An entry
is ``MAGIC + sha256(cubin) + cubin``; one whose digest does not match (truncated, corrupt,
tampered) is rebuilt and rewritten, never loaded.  Writes go to a temporary file that is renamed
into place, so concurrent processes never see half an entry.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path

__all__ = ["CompileError", "compile_cubin", "nvrtc_version", "cache_dir", "include_dirs", "arch_for"]

_MAGIC = b"STRIDED-CUBIN-1\n"
_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}
_memory: dict[str, bytes] = {}


class CompileError(RuntimeError):
    """NVRTC rejected a kernel; the message carries the kernel's name and the compile log."""


def _nvrtc():
    from cuda.bindings import nvrtc

    return nvrtc


_version: tuple[int, int] | None = None


def nvrtc_version() -> tuple[int, int]:
    global _version
    if _version is None:
        err, major, minor = _nvrtc().nvrtcVersion()
        _version = (int(major), int(minor))
    return _version


def supported_archs() -> list[int]:
    """The compute capabilities NVRTC can compile for (``nvrtcGetSupportedArchs``: 75, 80, ...)."""
    err, archs = _nvrtc().nvrtcGetSupportedArchs()
    _check((err,))
    return [int(a) for a in archs]


_includes: list[str] | None = None


def include_dirs() -> list[str]:
    """Header directories for NVRTC (cuda_fp16.h, cuda_bf16.h), found with cuda-pathfinder."""
    global _includes
    if _includes is None:
        from cuda.pathfinder import find_nvidia_header_directory

        dirs = []
        for key in ("cudart", "cccl"):
            try:
                d = find_nvidia_header_directory(key)
            except Exception:  # noqa: BLE001 - a missing optional header set
                d = None
            if d:
                dirs.append(str(d))
        _includes = dirs
    return _includes


def cache_dir() -> Path:
    d = Path(os.environ.get("STRIDED_CACHE_DIR") or Path.home() / ".cache" / "strided")
    return d


def arch_for(major: int, minor: int) -> str:
    return f"sm_{major}{minor}"


def _check(res, prog=None, name=""):
    err = res[0]
    if int(err) == 0:
        return res[1] if len(res) == 2 else None
    nv = _nvrtc()
    msg = nv.nvrtcGetErrorString(err)[1].decode()
    log = _log(prog) if prog is not None else ""
    raise CompileError(f"NVRTC failed to compile kernel '{name}': {msg}\n{log}")


def _log(prog) -> str:
    nv = _nvrtc()
    _, n = nv.nvrtcGetProgramLogSize(prog)
    buf = b" " * n
    nv.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\0 ").decode(errors="replace")


def _compile(source: str, name: str, arch: str, options: tuple[str, ...]) -> bytes:
    nv = _nvrtc()
    prog = _check(nv.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], []), name=name)
    try:
        opts = [f"--gpu-architecture={arch}", "-std=c++17", "--fmad=true", *options]
        opts += [f"-I{d}" for d in include_dirs()]
        enc = [o.encode() for o in opts]
        _check(nv.nvrtcCompileProgram(prog, len(enc), enc), prog, name)
        n = _check(nv.nvrtcGetCUBINSize(prog), prog, name)
        buf = b" " * n
        _check(nv.nvrtcGetCUBIN(prog, buf), prog, name)
        return buf
    finally:
        nv.nvrtcDestroyProgram(prog)


def _key(source: str, arch: str, options: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in (source, "\0".join(options), repr(nvrtc_version()), arch, repr(include_dirs())):
        h.update(part.encode())
        h.update(b"\x1f")
    return h.hexdigest()


def _read_disk(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 32:
        return None
    digest = data[len(_MAGIC):len(_MAGIC) + 32]
    cubin = data[len(_MAGIC) + 32:]
    if hashlib.sha256(cubin).digest() != digest:
        return None
    return cubin


def _write_disk(path: Path, cubin: bytes) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + hashlib.sha256(cubin).digest() + cubin)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the in-memory cache still works


def compile_cubin(source: str, name: str, arch: str, options: tuple[str, ...] = ()) -> bytes:
    """CUBIN for ``source`` (kernel ``name`` for error messages) on ``arch`` (e.g. ``"sm_90"``)."""
    key = _key(source, arch, options)
    cubin = _memory.get(key)
    if cubin is not None:
        return cubin
    # Note [Per-key compile lock]: one compile per key, but different kernels compile in parallel
    # (NVRTC releases the GIL), which is what precompile() relies on.
    with _lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:
        cubin = _memory.get(key)
        if cubin is not None:
            return cubin
        path = cache_dir() / "kernels" / f"{key}.cubin"
        cubin = _read_disk(path)
        if cubin is None:
            cubin = _compile(source, name, arch, options)
            _write_disk(path, cubin)
        _memory[key] = cubin
        return cubin

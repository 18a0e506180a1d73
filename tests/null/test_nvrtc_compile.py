"""Every CUDA kernel template compiles with NVRTC to sm_90 CUBIN (no GPU needed)."""

from __future__ import annotations

import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import CTYPES, source  # noqa: E402


def _cases():
    names = list(CTYPES)
    for d in names:
        yield "fill.cu", d, None
        yield "random.cu", d, None
        yield "copy.cu", d, "float32"  # every destination type
        yield "copy.cu", "float32", d  # every source type
    yield "copy.cu", "bfloat16", "float16"
    yield "copy.cu", "bool", "bfloat16"


@pytest.mark.parametrize("file,dst,src", list(_cases()))
def test_kernel_template_compiles(file, dst, src):
    cubin = compiler._compile(source(file, dst, src), file, "sm_90", ())
    assert cubin[:4] == b"\x7fELF"


def test_compile_error_names_kernel_and_shows_log():
    with pytest.raises(compiler.CompileError, match=r"kernel 'broken'(.|\n)*undefined"):
        compiler._compile('extern "C" __global__ void broken() { undefined_thing(); }', "broken", "sm_90", ())


def test_disk_cache_rebuilds_corrupt_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("STRIDED_CACHE_DIR", str(tmp_path))
    src = 'extern "C" __global__ void k(int* x) { x[0] = 1; }'
    a = compiler.compile_cubin(src, "k", "sm_90")
    files = list((tmp_path / "kernels").glob("*.cubin"))
    assert len(files) == 1 and oct(tmp_path.joinpath("kernels").stat().st_mode & 0o777) == "0o700"
    files[0].write_bytes(files[0].read_bytes()[:-10])  # corrupt it
    compiler._memory.clear()
    assert compiler.compile_cubin(src, "k", "sm_90") == a
    assert compiler._read_disk(files[0]) == a

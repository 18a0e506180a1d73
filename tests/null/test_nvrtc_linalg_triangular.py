"""linalg_triangular.cu (Note [Fused triangular kernels]) compiles with NVRTC to sm_90 CUBIN for float32 and
float64 (no GPU needed), every kernel the glue launches is in it, and the C parameter structs have the size of
the host's packing formats."""

from __future__ import annotations

import struct

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import linalg_triangular_ops as glue  # noqa: E402

CASES = list(glue.linalg_triangular_sources())


@pytest.mark.parametrize("file,names,text", CASES, ids=["float32", "float64"])
def test_linalg_triangular_kernels_compile(file, names, text):
    # the structs are passed by value and packed on the host: the sizes must agree (all fields 8 bytes)
    checks = (f"\nstatic_assert(sizeof(TrsmArgs) == {struct.calcsize(glue.TRSM_FMT)}, \"TrsmArgs\");"
              f"\nstatic_assert(sizeof(CholArgs) == {struct.calcsize(glue.CHOL_FMT)}, \"CholArgs\");\n")
    cubin = compiler._compile(text + checks, names[0], "sm_90", ())
    assert cubin[:4] == b"\x7fELF"
    for name in names:
        assert name.encode() + b"\0" in cubin, f"kernel {name} missing from the CUBIN"


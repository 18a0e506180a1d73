"""The orthogonal factorization kernels (linalg_jacobi.cu, linalg_householder.cu: the fused QR and the blocked QR's
scale and panel kernels) compile with NVRTC to sm_90 CUBIN for float32 and float64 (no GPU needed)."""

from __future__ import annotations

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from strided.backends.cuda import compiler  # noqa: E402


def _cases():
    from strided.backends.cuda.kernels.linalg_orthogonal_ops import orthogonal_sources

    for file, names, text in orthogonal_sources():
        dtype = "float64" if "#define SCALAR_T double" in text else "float32"
        for name in names:
            yield pytest.param(text, name, id=f"{file}-{name}-{dtype}")


@pytest.mark.parametrize("text,name", list(_cases()))
def test_orthogonal_kernels_compile(text, name):
    cubin = compiler._compile(text, name, "sm_90", ())
    assert cubin[:4] == b"\x7fELF"
    assert name.encode() in cubin


def test_every_dtype_and_kernel_is_instantiated():
    from strided.backends.cuda.kernels.linalg_orthogonal_ops import orthogonal_sources

    found = {(file, name, "double" in text.split("#define SCALAR_T ")[1].split("\n")[0])
             for file, names, text in orthogonal_sources() for name in names}
    assert found == {(f, k, wide) for f, k in [("linalg_jacobi.cu", "symmetric_jacobi"),
                                               ("linalg_jacobi.cu", "onesided_jacobi"),
                                               ("linalg_householder.cu", "householder_qr"),
                                               ("linalg_householder.cu", "householder_scale"),
                                               ("linalg_householder.cu", "householder_panel")]
                     for wide in (False, True)}

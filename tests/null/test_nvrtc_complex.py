"""complex64 / complex128 on the CUDA backend without a GPU: every complex kernel instantiation compiles with
NVRTC (complex.cuh, Note [Device complex type]), real-dtype kernel sources are untouched, and the host-side
pieces (scalar packing, the real view of complex sum / mean) are right."""

from __future__ import annotations

import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

import strided  # noqa: E402
from strided import dtypes as dt  # noqa: E402
from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.elementwise import _complex_fields, _Launcher, source_for  # noqa: E402
from strided.backends.cuda.kernels import COMPLEX_CTYPES, CTYPES, complex_ops, complex_sources, source  # noqa: E402

ELEMENTWISE = complex_ops.instantiations()
OTHERS = list(complex_sources())


def _compile_all(cases):
    def build(case):
        text, name = case
        return compiler._compile(text, name, "sm_90", ())[:4]

    with ThreadPoolExecutor(4) as ex:
        return list(ex.map(build, cases))


def test_instantiations_cover_every_op_and_dtype():
    by_expr: dict = {}
    for expr, out, _ in ELEMENTWISE:
        by_expr.setdefault(expr.split("(")[0], set()).add(out.name)
    both = {"complex64", "complex128"}
    for expr in ("x0 + x1", "x0 - x1", "x0 * x1", "x0 / x1", "x0 + x2 * x1", "x0 - x2 * x1", "-x0", "ew_exp",
                 "ew_conj", "ew_polar", "ew_complex", "x0"):
        assert by_expr[expr] == both, expr
    assert by_expr["ew_cabs"] == by_expr["ew_carg"] == {"float32", "float64"}
    assert by_expr["x0 == x1"] == by_expr["x0 != x1"] == {"bool"}
    # mixed operands: a real tensor, a complex Python scalar, a 0-dim CPU complex tensor
    slots = {s for _, out, sl in ELEMENTWISE if out.is_complex for s in sl}
    assert (1, dt.float32, dt.complex64) in slots and (1, dt.float64, dt.complex128) in slots
    assert (2, None, dt.complex64) in slots and (2, None, dt.complex128) in slots
    angle_real = {out.name for expr, out, _ in ELEMENTWISE if expr.startswith("(x0 != x0")}
    assert angle_real == {"float16", "bfloat16", "float32", "float64"}


def _group(case) -> str:
    _, out, slots = case
    names = [out.name] + [s[2].name for s in slots]
    return next((n for n in names if n in COMPLEX_CTYPES), "real")


@pytest.mark.parametrize("group", ["complex64", "complex128", "real"])
def test_elementwise_instantiations_compile(group):
    """elementwise.cu (ew_vec, ew_strided32, ew_strided64) for every complex op instantiation (and real angle)."""
    cases = [c for c in ELEMENTWISE if _group(c) == group]
    assert cases
    for cubin in _compile_all([(source_for(*c), "elementwise") for c in cases]):
        assert cubin == b"\x7fELF"


@pytest.mark.parametrize("file,name,text", [pytest.param(f, n[0], t, id=f"{f}-{zlib.crc32(t.encode()):08x}")
                                            for f, n, t in OTHERS])
def test_copy_transpose_cat_compile(file, name, text):
    assert compiler._compile(text, name, "sm_90", ())[:4] == b"\x7fELF"


def test_casts_cover_every_pair():
    pairs = {tuple(line.split(" ", 2)[2] for line in t.splitlines()[:3:2]) for f, _, t in OTHERS if f == "copy.cu"}
    ctypes = {**CTYPES, **COMPLEX_CTYPES}
    for c in COMPLEX_CTYPES.values():
        for other in ctypes.values():
            assert (c, other) in pairs
            assert (other, c) in pairs


def test_real_sources_do_not_include_complex_header():
    """Real-dtype kernels keep their exact source (and NVRTC cache key): complex.cuh is added only for complex."""
    from strided.backends.cuda.kernels import pointwise_ops

    for inst in pointwise_ops.instantiations()[:50]:
        assert "Complex<" not in source_for(*inst)
    for d in CTYPES:
        assert "Complex<" not in source("copy.cu", d, "float32") and "Complex<" not in source("fill.cu", d)
    assert "Complex<" in source("copy.cu", "complex64", "float32")


def test_complex_scalar_fields():
    """Note [Complex scalar arguments]: the real part as a double, the imaginary part's bits as an int64."""
    re, bits = _complex_fields(1.5 - 2.25j)
    assert re == 1.5 and struct.unpack("<d", struct.pack("<q", bits))[0] == -2.25
    assert _complex_fields(3) == (3.0, 0)
    ln = _Launcher("x0 + x1", dt.complex64, ((1, dt.complex64, dt.complex64), (2, None, dt.complex64)))
    assert ln.scalar_slots == ((1, 3),) and ln.vec == 2
    assert "C1(f.sd[1], __longlong_as_double(f.si[1]))" in ln.source
    assert _Launcher("x0 * x1", dt.complex128, ((1, dt.complex128, dt.complex128),) * 2).vec == 1


def test_complex_reduction_real_view():
    """Note [Complex sum and mean]: the (..., 2) view of a non-contiguous complex tensor is its pairs."""
    from strided.backends.cuda.kernels.reduction_ops import _as_real

    a = (np.arange(24) + 1j * np.arange(24, 48)).reshape(4, 6).astype(np.complex64)
    t = strided.from_numpy(a)[1:, ::2]
    r = _as_real(t)
    assert r.dtype is dt.float32 and r.shape == (3, 3, 2)
    np.testing.assert_array_equal(r.numpy(), np.stack([a[1:, ::2].real, a[1:, ::2].imag], -1))


def test_cuda_complex_math_ops_exist():
    from strided.ops import registry
    from strided.ops.complex_support import _LAYOUT, CUDA_COMPLEX_OPS

    for name in CUDA_COMPLEX_OPS - _LAYOUT:
        assert registry.namespace("aten")._get(name) is not None, name


def test_instantiations_cover_complex_math():
    """The math of Note [Complex math] (complex.cuh) is instantiated for both complex dtypes; the predicates
    give bool; where and masked_fill take complex tensors, Python scalars and real tensors."""
    by_expr: dict = {}
    for expr, out, _ in ELEMENTWISE:
        by_expr.setdefault(expr, set()).add(out.name)
    both = {"complex64", "complex128"}
    for name in ("sqrt", "log", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid"):
        assert by_expr[f"ew_{name}(x0)"] == both, name
    assert by_expr["C0(1) / ew_sqrt(x0)"] == by_expr["C0(1) / x0"] == by_expr["ew_pow(x0, x1)"] == both
    for name in ("isnan", "isinf", "isfinite"):
        assert by_expr[f"ew_{name}(x0)"] == {"bool"}, name
    assert by_expr["ew_logaddexp(x0, x1)"] == by_expr["x0 / (C0(1) + ew_exp(-x0))"] == both  # logaddexp, silu
    assert by_expr["x0 ? x1 : x2"] == by_expr["x1 ? x2 : x0"] == both
    pow_slots = {sl for expr, _, sl in ELEMENTWISE if expr == "ew_pow(x0, x1)"}
    assert ((1, dt.float64, dt.complex128), (1, dt.complex128, dt.complex128)) in pow_slots  # real ** complex
    assert ((1, dt.complex64, dt.complex64), (2, None, dt.complex64)) in pow_slots  # complex ** scalar

"""Every CUDA kernel template compiles with NVRTC to sm_90 CUBIN (no GPU needed)."""

from __future__ import annotations

import zlib

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


def _indexing_sources():
    from strided.backends.cuda.kernels import all_sources

    for file, names, text in all_sources():
        if file in ("transpose.cu", "index.cu", "sort.cu", "misc.cu", "cat.cu", "multi_tensor.cu", "search.cu"):
            yield pytest.param(file, names[0], text, id=f"{file}-{zlib.crc32(text.encode()):08x}")


def _fft_sources():
    from strided.backends.cuda.kernels.fft_ops import fft_sources

    for file, names, text in fft_sources():  # fft.cu after fft_butterflies.cuh
        yield pytest.param(file, names[0], text, id=f"{file}-{zlib.crc32(text.encode()):08x}")


@pytest.mark.parametrize("file,name,text", [*_indexing_sources(), *_fft_sources()])
def test_indexing_kernels_compile(file, name, text):
    assert compiler._compile(text, name, "sm_90", ())[:4] == b"\x7fELF"


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


def _elementwise_cases():
    """Every pointwise expression once (its first dtype combination), and add for each element type."""
    from strided.backends.cuda.kernels import pointwise_ops

    seen, cases = set(), []
    for inst in pointwise_ops.instantiations():
        expr, out, slots = inst
        key = (expr, out) if expr == "x0 + x1" and all(s[0] == 1 for s in slots) else expr
        if key not in seen:
            seen.add(key)
            cases.append(inst)
    return cases


def test_elementwise_templates_compile():
    """elementwise.cu for every pointwise op's expression (three kernels each), compiled in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    from strided.backends.cuda.elementwise import source_for

    cases = _elementwise_cases()
    assert len({c[0] for c in cases}) >= 60

    def build(case):
        return case, compiler._compile(source_for(*case), "elementwise", "sm_90", ())

    with ThreadPoolExecutor(4) as ex:
        for case, cubin in ex.map(build, cases):
            assert cubin[:4] == b"\x7fELF", case


def _reduction_sources():
    from strided.backends.cuda.kernels.batch_norm_ops import batch_norm_sources
    from strided.backends.cuda.kernels.im2col_ops import im2col_sources
    from strided.backends.cuda.kernels.pooling_ops import pool_sources
    from strided.backends.cuda.kernels.recurrent_ops import rnn_sources
    from strided.backends.cuda.kernels.scan_index_ops import scan_index_sources
    from strided.backends.cuda.normalization import normalization_sources
    from strided.backends.cuda.reduction import reduce_sources

    return [*reduce_sources(), *normalization_sources(), *rnn_sources(), *scan_index_sources(), *pool_sources(),
            *im2col_sources(), *batch_norm_sources()]


def test_reduction_templates_compile():
    """reduce.cu (every reducer), scan.cu, softmax.cu, norm.cu, loss.cu, rnn.cu and scan_index.cu instantiations."""
    from concurrent.futures import ThreadPoolExecutor

    def build(case):
        file, names, text = case
        return case, compiler._compile(text, names[0], "sm_90", ())

    with ThreadPoolExecutor(4) as ex:
        for case, cubin in ex.map(build, _reduction_sources()):
            assert cubin[:4] == b"\x7fELF", case[:2]


def _gamma_cases():
    """lgamma, digamma, trigamma, polygamma and mvlgamma's instantiations (and in place) with every
    output dtype and an integer input: the float and double device functions, half types via float."""
    from strided import dtypes as dt
    from strided import factories as f
    from strided.backends.cuda.elementwise import is_tensor_operand
    from strided.backends.cuda.kernels import gamma_ops as gm
    from strided.backends.cuda.kernels import pointwise_ops as pw

    found = {}

    def record(expr, out, args, computes, dense=True):
        slots = tuple((1, a.dtype, c) if is_tensor_operand(a) else (2, None, c) for a, c in zip(args, computes))
        found.setdefault((expr, out.dtype, slots), None)
        return out

    saved, pw.run, gm.run = pw.run, record, record
    try:
        for d in (dt.float32, dt.float64, dt.float16, dt.bfloat16, dt.int64):
            x = f.ones(3, dtype=d)
            pw.lgamma(x)
            pw.digamma(x)
            gm.mvlgamma(x, 3)
            for n in (0, 1, 2):
                gm.polygamma(n, x)
                if d.is_floating_point:
                    gm.polygamma_(x, n)
    finally:
        pw.run = gm.run = saved
    return list(found)


GAMMA_CASES = _gamma_cases()


def test_gamma_cases_cover_every_expression():
    assert {c[0] for c in GAMMA_CASES} == {"ew_lgamma(x0)", "ew_digamma(x0)", "ew_trigamma(x0)", "ew_polygamma(x0, x1)",
                                           "ew_mvlgamma(x0, x1)"}
    assert {c[1].name for c in GAMMA_CASES} == {"float32", "float64", "float16", "bfloat16"}


@pytest.mark.parametrize("case", GAMMA_CASES, ids=lambda c: f"{c[0].split('(')[0]}-{c[1].name}-{c[2][0][1].name}")
def test_gamma_function_templates_compile(case):
    from strided.backends.cuda.elementwise import source_for

    assert compiler._compile(source_for(*case), "elementwise", "sm_90", ())[:4] == b"\x7fELF"


def _math_more_cases():
    """igamma / igammac / gcd / lcm / nextafter / frexp (kernels/math_more_ops.py): one instantiation per
    (expression, output dtype, compute types), so every overload of their device functions is compiled."""
    from strided.backends.cuda.kernels import pointwise_ops

    names = ("ew_igamma(", "ew_igammac(", "ew_gcd(", "ew_lcm(", "ew_nextafter(", "ew_frexp_mantissa(",
             "ew_frexp_exponent(")
    seen, cases = set(), []
    for expr, out, slots in pointwise_ops.instantiations():
        key = (expr, out, tuple(c for _, _, c in slots))
        if expr.startswith(names) and key not in seen:
            seen.add(key)
            cases.append((expr, out, slots))
    return cases


API_MATH_CASES = _math_more_cases()


def test_math_more_cases_cover_every_dtype():
    by_expr: dict = {}
    for expr, out, _ in API_MATH_CASES:
        by_expr.setdefault(expr.split("(")[0], set()).add(out.name)
    floats, ints = {"float32", "float64", "float16", "bfloat16"}, {"uint8", "int8", "int16", "int32", "int64"}
    assert by_expr == {"ew_igamma": floats, "ew_igammac": floats, "ew_nextafter": floats, "ew_frexp_mantissa": floats,
                       "ew_frexp_exponent": {"int32"}, "ew_gcd": ints, "ew_lcm": ints}


def test_math_more_templates_compile():
    from concurrent.futures import ThreadPoolExecutor

    from strided.backends.cuda.elementwise import source_for

    def build(case):
        return case, compiler._compile(source_for(*case), "elementwise", "sm_90", ())

    with ThreadPoolExecutor(4) as ex:
        for case, cubin in ex.map(build, API_MATH_CASES):
            assert cubin[:4] == b"\x7fELF", case[:2]

"""strided.cuda.jiterator without a GPU: torch's parsing and refusals, every instantiation compiles with NVRTC, and
the kernels with the real host code (flat and strided paths, broadcasting, casts, several outputs, extra arguments)
run on the CPU block emulator (Note [CPU block emulator]) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import dtypes as dt
from strided.backends.cuda import jiterator as J
from strided.backends.cuda.kernels import _text

jit = st.cuda.jiterator
AXPY = "template <typename T> T axpy(T x, T y, T alpha) { return -x + alpha * y; }"
SPLIT = ("template <typename T> void split(T x, T y, T scale, bool flip, int64_t shift, T& lo, T& hi) {"
         " T a = x * scale + T(shift); T b = y - x; lo = flip ? b : a; hi = flip ? a : b; }")


def test_the_entry_is_the_last_function_of_the_string():
    code = ("template <typename T> T helper(T x) { return x * x; }\n"
            "template <typename T> T entry(T x) { return helper(x); }")
    assert jit._create_jit_fn(code).kernel_name == "entry"
    assert jit._create_jit_fn(AXPY, alpha=1.0).kernel_name == "axpy"


def test_refusals_are_torchs():
    with pytest.raises(Exception, match="Couldn't parse code, please check correctness"):
        jit._create_jit_fn("float f(float x) { return x; }")
    with pytest.raises(AssertionError, match="Return by value only works for single output"):
        jit._JittedFunction(AXPY, return_by_ref=False, num_outputs=2, alpha=1.0)
    with pytest.raises(ValueError, match="num_outputs must be an int from 1 to 8, got 9"):
        jit._create_multi_output_jit_fn(SPLIT, 9, scale=1.0, flip=False, shift=0)
    with pytest.raises(TypeError, match="extra argument 'alpha' must be a number .* got str"):
        jit._create_jit_fn(AXPY, alpha="1")
    with pytest.raises(TypeError, match="code_string must be a str, got bytes"):
        jit._create_jit_fn(AXPY.encode())


def test_extra_argument_types_follow_the_python_type():
    assert [J.extra_kind("a", v) for v in (True, np.bool_(False), 3, np.int32(3), 1.5, np.float32(1), 2j)] == \
        ["bool", "bool", "int", "int", "float", "float", "complex"]
    with pytest.raises(TypeError, match="extra argument 't' must be a number"):
        J.extra_kind("t", st.ones(()))


@pytest.mark.skipif(st.cuda.is_available(), reason="a GPU is present: this checks the no-CUDA message")
def test_calls_without_a_gpu_say_so():
    fn = jit._create_jit_fn(AXPY, alpha=1.0)
    with pytest.raises(AssertionError, match="Jiterator is only supported on CUDA and ROCm GPUs, none are available"):
        fn(st.ones(3), st.ones(3))


nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")
from strided.backends.cuda import compiler  # noqa: E402

CASES = [  # (common dtype, input dtypes)
    (dt.float32, (dt.float32, dt.float32)), (dt.float16, (dt.float16, dt.int32)), (dt.bfloat16, (dt.bfloat16,) * 2),
    (dt.float64, (dt.float64, dt.uint8)), (dt.int64, (dt.int64, dt.bool)), (dt.int32, (dt.int32, dt.int8)),
    (dt.uint8, (dt.uint8, dt.uint8)), (dt.bool, (dt.bool, dt.bool)), (dt.complex64, (dt.complex64, dt.float32)),
    (dt.complex128, (dt.complex128, dt.complex128)),
]


@pytest.mark.parametrize("common,ins", CASES, ids=[c[0].name for c in CASES])
def test_every_dtype_compiles(common, ins):
    src = J.source_for(AXPY, "axpy", 1, False, ins, common, ["float"])
    for entry in ("jit_flat", "jit_strided32", "jit_strided64"):
        assert compiler._compile(src, entry, "sm_90", J.OPTIONS)[:4] == b"\x7fELF"


def test_several_outputs_and_every_extra_type_compile():
    src = J.source_for(SPLIT, "split", 2, True, (dt.float16, dt.float32), dt.float32, ["float", "bool", "int"])
    assert compiler._compile(src, "jit_strided32", "sm_90", J.OPTIONS)[:4] == b"\x7fELF"
    code = "template <typename T> T rot(T x, T z) { return x * z; }"
    src = J.source_for(code, "rot", 1, False, (dt.complex128,), dt.complex128, ["complex"])
    assert compiler._compile(src, "jit_flat", "sm_90", J.OPTIONS)[:4] == b"\x7fELF"


def test_a_compile_error_names_the_function_and_shows_the_log(monkeypatch):
    monkeypatch.setattr(J, "get_kernel", lambda src, entry, fmt, dev, opts: compiler._compile(src, entry, "sm_90",
                                                                                             opts))
    ln = J.Launcher(J.source_for("template <typename T> T bad(T x) { return undefined_thing(x); }", "bad", 1,
                                 False, (dt.float32,), dt.float32, []), "bad")
    with pytest.raises(compiler.CompileError, match=r"jiterator function 'bad'(.|\n)*undefined_thing"):
        ln.kernel("jit_flat", 0)


# ---------------------------------------------------------------------------------------------- the emulator
from block_emulator import EmuKernel, build, emulator_source  # noqa: E402

_EMU_HEAD = ("#define STRIDED_MAX_DIMS 8\ntypedef unsigned long long u64;\n"
             "template <class D, class S> D convert(S v) { return static_cast<D>(v); }\n")


@pytest.fixture(scope="module")
def emulate(tmp_path_factory):
    """``emulate(code, name, nout, by_ref, ins, common, kinds)``: a Launcher whose kernels run on the emulator."""
    out = tmp_path_factory.mktemp("jiterator_emulator")
    built = {}

    def make(code, name, nout, by_ref, ins, common, kinds):
        src = J.source_for(code, name, nout, by_ref, ins, common, kinds)
        body = src[len(_text("common.cuh")):].replace(J._STDINT, "")  # g++ has <cstdint>
        text, counts = emulator_source(_EMU_HEAD + body, {},
                                       {"jit_vec": "JitFlat", "jit_flat": "JitFlat", "jit_strided32": "JitStrided",
                                        "jit_strided64": "JitStrided"})
        assert counts == (0, 0, 4), "jiterator.cu changed: update the emulator's rewrites"
        key = (name, nout, tuple(d.name for d in ins), common.name, tuple(kinds))
        if key not in built:
            built[key] = build(out, f"jit_{len(built)}", text)
        lib = built[key]
        ln = J.make_launcher(code, name, nout, by_ref, ins, common, kinds)  # not the cached one
        for entry in ("jit_vec", "jit_flat", "jit_strided32", "jit_strided64"):  # device 0's: the emulator's
            fmt = J.STRIDED_FMT if entry.startswith("jit_strided") else J.FLAT_FMT
            ln.kernels[(entry, 0)] = EmuKernel(lib, entry, fmt, order=2, log=log, threads=(128, 128))
        return ln

    log = []
    make.log = log
    return make


def _operand(a: np.ndarray):
    """(address, sizes, strides in elements) of a NumPy array, as ``launch`` takes tensors."""
    return a.ctypes.data, a.shape, tuple(s // a.itemsize for s in a.strides)


def _aligned(n, dtype, offset=0):
    """A NaN-filled (or zero) array of ``n`` elements whose data starts ``offset`` elements past a 64-byte boundary."""
    raw = np.zeros(n + offset + 64, dtype)
    skip = (-raw.ctypes.data % 64) // raw.itemsize + offset
    a = raw[skip:skip + n]
    if a.dtype.kind == "f":
        a[:] = np.nan
    return a


@pytest.mark.parametrize("offset,entry", [(0, "jit_vec"), (1, "jit_flat")])
def test_dense_paths_match_numpy(emulate, offset, entry):
    ln = emulate(AXPY, "axpy", 1, False, (dt.float32, dt.float32), dt.float32, ["float"])
    assert ln.vec == 4 and ln.aligns == (16, 16, 16)
    rng = np.random.default_rng(0)
    x, y = _aligned(1001, np.float32, offset), _aligned(1001, np.float32, offset)
    x[:], y[:] = rng.standard_normal(1001), rng.standard_normal(1001)
    out = _aligned(1001, np.float32)
    ed, ei = J._extra_fields(["float"], [2.5])
    emulate.log.clear()
    J.launch(ln, [_operand(out)], [_operand(x), _operand(y)], ed, ei, 0, 0)
    # 2 blocks either way: 1001 / (128 threads x 4 elements), a vector of 4 or four steps of one per thread
    assert [e[0] for e in emulate.log] == [entry] and emulate.log[0][1] == 2
    np.testing.assert_array_equal(out, -x + np.float32(2.5) * y)  # the 1001st element is the vector kernel's tail


def test_vectors_of_mixed_widths(emulate):
    ln = emulate(AXPY, "axpy", 1, False, (dt.float64, dt.uint8), dt.float64, ["float"])
    assert ln.vec == 2 and ln.aligns == (16, 16, 2)
    x, y = _aligned(77, np.float64), _aligned(77, np.uint8)
    x[:], y[:] = np.arange(77) / 7, np.arange(77) % 250
    out = _aligned(77, np.float64)
    ed, ei = J._extra_fields(["float"], [-1.5])
    emulate.log.clear()
    J.launch(ln, [_operand(out)], [_operand(x), _operand(y)], ed, ei, 0, 0)
    assert [e[0] for e in emulate.log] == ["jit_vec"]
    np.testing.assert_array_equal(out, -x - 1.5 * y)


def test_broadcast_transposed_and_cast_inputs_take_the_strided_kernel(emulate):
    ln = emulate(AXPY, "axpy", 1, False, (dt.float64, dt.int32), dt.float64, ["int"])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 5)).T  # (5, 7), transposed
    y = rng.integers(-9, 9, (1, 7)).astype(np.int32)  # broadcast over the rows
    out = np.full((5, 7), np.nan)
    ed, ei = J._extra_fields(["int"], [3])
    emulate.log.clear()
    J.launch(ln, [_operand(out)], [_operand(x), _operand(y)], ed, ei, 0, 0)
    assert [e[0] for e in emulate.log] == ["jit_strided32"]
    np.testing.assert_array_equal(out, -x + 3.0 * y)


def test_several_outputs_by_reference(emulate):
    ln = emulate(SPLIT, "split", 2, True, (dt.float32, dt.int64), dt.float32, ["float", "bool", "int"])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.arange(4, dtype=np.int64) * 10
    for flip in (False, True):
        lo, hi = np.full((3, 4), np.nan, np.float32), np.full((3, 4), np.nan, np.float32)
        ed, ei = J._extra_fields(["float", "bool", "int"], [0.5, flip, -2])
        J.launch(ln, [_operand(lo), _operand(hi)], [_operand(x), _operand(y[None, :].repeat(3, 0)[:, :])], ed, ei,
                 0, 0)
        a, b = x * np.float32(0.5) - 2, y.astype(np.float32) - x
        np.testing.assert_array_equal(lo, b if flip else a)
        np.testing.assert_array_equal(hi, a if flip else b)


def test_spans_past_31_bits_take_the_64_bit_kernel(emulate):
    ln = emulate(AXPY, "axpy", 1, False, (dt.float32, dt.float32), dt.float32, ["float"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros((2, 3), np.float32)
    emulate.log.clear()
    big = (x.ctypes.data, (2, 3), (1 << 31, 1))  # never read: the launch is checked, not run
    captured = []
    for entry in ("jit_vec", "jit_flat", "jit_strided32", "jit_strided64"):
        ln.kernels[(entry, 0)] = lambda *a, entry=entry: captured.append(entry)
    J.launch(ln, [_operand(out)], [big, _operand(x)], [0.0] * J.MAX_EXTRAS, [0] * J.MAX_EXTRAS, 0, 0)
    assert captured == ["jit_strided64"]


def test_no_elements_launch_nothing(emulate):
    ln = emulate(AXPY, "axpy", 1, False, (dt.float32, dt.float32), dt.float32, ["float"])
    e = np.zeros((0, 3), np.float32)
    emulate.log.clear()
    J.launch(ln, [_operand(e)], [_operand(e), _operand(e)], [0.0] * J.MAX_EXTRAS, [0] * J.MAX_EXTRAS, 0, 0)
    assert emulate.log == []

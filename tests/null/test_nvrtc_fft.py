"""The CUDA FFT (``fft.cu``, Note [CUDA FFT] in kernels/fft_ops.py) without a GPU: every kernel compiles with NVRTC
to sm_90 CUBIN without spills, the parameter structs match their formats, and the real kernel source runs on the
CPU under the block emulator (Note [CPU block emulator] in block_emulator.py), driven by the real CUDA op kernels
(``fft_ops._fft_c2c`` / ``_fft_r2c`` / ``_fft_c2r`` on CPU tensors) and checked against numpy.fft: every radix,
the any-radix pass, Bluestein's algorithm, several dims, strided inputs, every normalization."""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest
from block_emulator import EmuKernel, build, emulator_source, ptxas_log

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

import strided as st  # noqa: E402
from strided.backends.cuda.kernels import HERE, fft_ops  # noqa: E402
from strided.ops import bound  # noqa: E402

KERNELS = {**{f"fft_radix{r}_{i}": "FftStage" for r in (*fft_ops.RADICES, "_any") for i in ("i32", "i64")},
           "fft_bluestein": "FftBluestein", "fft_hermitian": "FftHermitian", "fft_smem": "FftSmem", "fft_big": "FftBig"}
FORMATS = {"FftStage": fft_ops.STAGE_FMT, "FftBluestein": fft_ops.BLUESTEIN_FMT, "FftHermitian": fft_ops.HERMITIAN_FMT,
           "FftSmem": fft_ops.SMEM_FMT, "FftBig": fft_ops.BIG_FMT}
_FORWARD_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM = {0: "forward", 1: "ortho", 2: "backward"}


def test_radices_factor_every_length():
    for n in range(1, 400):
        passes = fft_ops.radices(n)
        big = max((p for p in range(2, n + 1) if n % p == 0 and all(p % q for q in range(2, p))), default=1)
        if big > fft_ops.BLUESTEIN_ABOVE:
            assert passes is None, n
        else:
            assert math.prod(passes) == n, n
    assert fft_ops.radices(1024) == (8, 8, 8, 2) and fft_ops.radices(1000) == (8, 5, 5, 5)
    assert fft_ops.radices(2 * 61) == (2, 61) and fft_ops.radices(67) is None


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_fft_kernels_compile_without_spills(name):
    text = fft_ops._source(name)
    checks = "".join(f'\nstatic_assert(sizeof({s}) == {struct.calcsize(f)}, "{s}");' for s, f in FORMATS.items())
    log = ptxas_log(text + checks + "\n", "fft.cu")
    for kernel in KERNELS:
        report = log.split(f"Compiling entry function '{kernel}'")[1].split("Compile time")[0]
        assert "0 bytes spill stores, 0 bytes spill loads" in report, (kernel, report)
        used = int(re.search(r"Used (\d+) registers", report).group(1))
        # launch_config's 256; _smem_plan's at most smem_max_threads
        smem = kernel in ("fft_smem", "fft_big")
        threads = fft_ops.smem_max_threads(16 if name == "complex128" else 8) if smem else 256
        assert used * threads * (2 if smem else 1) <= 65536, (kernel, report)  # fft_smem / fft_big: 2 blocks


# -- the emulator ------------------------------------------------------------------------------------------------
SHIMS = r"""
#define __host__
template <class T> struct Conv {};
static inline void sincospi(double x, double* s, double* c) { *s = std::sin(M_PI * x); *c = std::cos(M_PI * x); }
"""


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    complex_cuh = (HERE / "complex.cuh").read_text()
    types = complex_cuh[:complex_cuh.index("// ---------------------------------------------------------------------"
                                           "------- pointwise")]
    out = tmp_path_factory.mktemp("fft_emulator")
    built = {}
    for name, ctype in (("complex64", "complex64_t"), ("complex128", "complex128_t")):
        text = SHIMS + types + (HERE / "fft_butterflies.cuh").read_text() + (HERE / "fft.cu").read_text()
        source, counts = emulator_source(text, {"DST_T": ctype}, KERNELS)
        # 8 entry points in the text: FFT_PASS's two (one macro for six radices), the any-radix two, four more
        assert counts == (2, 0, 8), "fft.cu changed: update the emulator's kernel list"
        built[name] = build(out, f"fft_{name}", source)
    return built


@pytest.fixture(params=["shared", "big", "passes"])
def emulated(libs, monkeypatch, request):
    """The CUDA op kernels of fft_ops on CPU tensors, every launch on the emulator (threads in shuffled order
    between barriers); every buffer the kernels allocate sits between NaN canaries, checked after the call. Each
    test runs three times: with the shared-memory kernel where it applies; with the big passes instead (radices of
    at most 16, 32-byte loads, so that short rows take several); and with a pass per launch only. Yields the log
    of launches."""
    guarded, log = [], []

    def clear():
        fft_ops._smem_plan.cache_clear()
        fft_ops._big_plan.cache_clear()

    clear()
    request.addfinalizer(clear)
    if request.param == "big":
        monkeypatch.setattr(fft_ops, "WHOLE_ROWS", False)
        monkeypatch.setattr(fft_ops, "BIG_RADIX_MAX", 16)
        monkeypatch.setattr(fft_ops, "BIG_LOAD_BYTES", 32)
    if request.param == "passes":
        monkeypatch.setattr(fft_ops, "SMEM_MAX_BYTES", 0)

    def new_output(sizes, dt, dev, strides=None):
        numel = math.prod(sizes)
        full = bound.full((numel + 128,), math.nan, dtype=dt)
        guarded.append(full)
        return full[64:64 + numel].view(*sizes)

    monkeypatch.setattr(fft_ops, "get_kernel", lambda src, name, fmt, dev: EmuKernel(
        libs["complex128" if "complex128_t" in src.splitlines()[0] else "complex64"], name, fmt, 2, log,
        threads=(64, 512), max_grid=1 << 20))
    monkeypatch.setattr(fft_ops, "current_stream_handle", lambda dev: 0)
    monkeypatch.setattr(fft_ops, "new_output", new_output)
    yield log
    for full in guarded:
        edges = np.concatenate([full.numpy()[:64], full.numpy()[-64:]])
        assert np.isnan(edges).all(), "a kernel wrote out of bounds"


def _complex(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _tol(dtype, n):
    return (2e-5 if dtype == np.complex64 else 1e-12) * max(1.0, math.log2(max(n, 2)))


def _check(got, want, dtype, n):
    want = np.asarray(want)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=_tol(dtype, n) * scale)


# lengths: every special radix, mixed radices, the any-radix pass (11, 13, 61), Bluestein (67, 97, 2 * 67), 1
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 16, 12, 30, 49, 64, 105, 11, 26, 61, 67, 97, 134, 512]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["complex64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
def test_emulated_c2c_rows_match_numpy(emulated, dtype, n):
    a = _complex((3, n), dtype, n)
    x = st.tensor(a)
    for forward, norm in ((True, 0), (False, 2), (True, 1)):
        got = fft_ops._fft_c2c(x, [1], norm, forward).numpy()
        want = (np.fft.fft if forward else np.fft.ifft)(a.astype(np.complex128), axis=1,
                                                        norm=(_FORWARD_NORM if forward else _INVERSE_NORM)[norm])
        _check(got, want, dtype, n)
    names = {name for name, *_ in emulated}
    passes = fft_ops.radices(n)
    if passes is None:
        assert "fft_bluestein" in names
    elif any(r not in fft_ops.RADICES for r in passes):
        assert "fft_radix_any_i32" in names
    elif n > 1:
        if not fft_ops.WHOLE_ROWS:
            assert names == ({"fft_big"} if fft_ops._big_plan(n, a.itemsize) else {f"fft_radix{r}_i32" for r in passes})
        else:
            assert names == ({"fft_smem"} if fft_ops.SMEM_MAX_BYTES else {f"fft_radix{r}_i32" for r in passes})


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["complex64", "complex128"])
def test_emulated_c2c_several_strided_dims(emulated, dtype):
    a = _complex((4, 6, 5), dtype, 1)
    x = st.tensor(a).transpose(0, 2)  # (5, 6, 4), strided
    got = fft_ops._fft_c2c(x, [0, 2], 1, True)
    _check(got.numpy(), np.fft.fftn(a.transpose(2, 1, 0), axes=(0, 2), norm="ortho"), dtype, 20)
    assert got.is_contiguous()
    got = fft_ops._fft_c2c(x[::2], [-3, -2, -1], 2, False)
    _check(got.numpy(), np.fft.ifftn(a.transpose(2, 1, 0)[::2], norm="backward"), dtype, 72)
    assert np.array_equal(fft_ops._fft_c2c(x, [], 1, True).numpy(), a.transpose(2, 1, 0))  # no dims: a copy


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 4, 6, 7, 16, 30, 67, 134])
def test_emulated_r2c_and_c2r_match_numpy(emulated, dtype, n):
    cdtype = np.complex64 if dtype == np.float32 else np.complex128
    a = np.random.default_rng(n).standard_normal((3, 4, n)).astype(dtype)
    x = st.tensor(a)
    _check(fft_ops._fft_r2c(x, [2], 0, True).numpy(), np.fft.rfft(a, axis=2), cdtype, n)
    _check(fft_ops._fft_r2c(x, [0, 2], 1, False).numpy(), np.fft.fftn(a, axes=(0, 2), norm="ortho"), cdtype, n)
    _check(fft_ops._fft_r2c(x.transpose(1, 2), [1, 2], 2, True).numpy(),
           np.fft.rfftn(a.transpose(0, 2, 1), axes=(1, 2), norm="forward"), cdtype, n)
    spec = _complex((3, 4, n // 2 + 1), cdtype, n + 1)  # not Hermitian: the zero frequency has an imaginary part
    for norm in (0, 1, 2):
        got = fft_ops._fft_c2r(st.tensor(spec), [0, 2], norm, n).numpy()
        want = np.fft.irfftn(spec, s=(3, n), axes=(0, 2), norm=_INVERSE_NORM[norm])
        assert got.dtype == dtype
        _check(got, want, cdtype, n)
    full = _complex((2, n), cdtype, 3)  # the full-length input: only the first n // 2 + 1 entries count
    want = np.fft.irfft(full[:, :n // 2 + 1], n=n, axis=1, norm="forward")
    _check(fft_ops._fft_c2r(st.tensor(full), [1], 0, n).numpy(), want, cdtype, n)
    # Note [Packed real transforms]: even lengths whose half fits the shared-memory kernel run packed
    forms = {values[7:9] for name, _g, _b, _s, values in emulated if name == "fft_smem"}
    packed = fft_ops.SMEM_MAX_BYTES and n % 2 == 0 and fft_ops._smem_plan(n // 2, 8) is not None
    assert ((3, 2) in forms and (4, 3) in forms) == bool(packed), forms


def test_emulated_zero_size_batches_launch_nothing(emulated):
    assert fft_ops._fft_c2c(st.zeros((0, 8), dtype=st.complex64), [1], 0, True).shape == (0, 8)
    assert fft_ops._fft_r2c(st.zeros((0, 8)), [1], 0, True).shape == (0, 5)
    assert fft_ops._fft_c2r(st.zeros((0, 5), dtype=st.complex128), [1], 0, 8).shape == (0, 8)
    assert emulated == []

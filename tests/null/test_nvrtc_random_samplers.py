"""The gamma-family sampler kernels (``random_samplers.cu``) and their gradients (``sampler_grads.cu``): every
instantiation compiles with NVRTC to sm_90 CUBIN, and the CUDA source itself runs on the CPU, compiled by g++
against a small prelude, with the launch parameters packed by the glue's struct formats.

Note [Samplers on the CPU]
The sampler kernels are one loop per thread over a grid-stride range, with no shared memory, barriers or warp
operations; with ``gridDim = blockDim = 1`` the loop covers every element in order, so the device code is plain
C++ once CUDA's few names (``uint4``, ``__umulhi``, ``cospi``, ``__longlong_as_double``, ``convert``) are defined.
That checks what a GPU run would, short of the hardware: the distributions of the draws (moments, CDFs), the edge
cases (zero, tiny, huge, NaN parameters; loops that end), reproducibility of the per-element Philox streams, and
the gradient device functions against the CPU backend's NumPy code. What it cannot show: float rounding of the
GPU's math library and fused multiply-adds (last bits), and the launch itself (tests/backend runs that on a GPU).
"""

from __future__ import annotations

import ctypes
import math
import re
import shutil
import struct
import subprocess

import numpy as np
import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from strided.backends.cpu.sampler_grads import dirichlet_grad, standard_gamma_grad  # noqa: E402
from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import HERE  # noqa: E402
from strided.backends.cuda.kernels import random_samplers_ops as ops  # noqa: E402


def _sources():
    for file, names, text in ops.sampler_sources():
        head = " ".join(line.split()[-1] for line in text.splitlines()[:2] if line.startswith("#define"))
        yield pytest.param(names, text, id=f"{file}-{head.replace(' ', '-')}")


@pytest.mark.parametrize("names,text", list(_sources()))
def test_kernels_compile(names, text):
    for name in names:
        assert compiler._compile(text, name, "sm_90", ())[:4] == b"\x7fELF"


# -- the kernels on the CPU (Note [Samplers on the CPU]) ---------------------------------------------------------
PRELUDE = r"""
#include <cmath>
#include <cstdint>
#include <cstring>
using std::isinf;
using std::isnan;
typedef long long i64;
typedef unsigned long long u64;
#define __global__
#define __device__
#define __forceinline__ inline
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
static uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
static uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
static unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((u64)a * b) >> 32); }
static double cospi(double x) { return std::cos(M_PI * x); }
static double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, 8); return d; }
static float __int_as_float(int v) { float f; std::memcpy(&f, &v, 4); return f; }
struct EmuDim { unsigned x; };
static EmuDim threadIdx{0}, blockIdx{0}, blockDim{1}, gridDim{1};
template <class T> struct ToWide { static T get(T v) { return v; } };
template <class D, class S> D convert(S v) { return static_cast<D>(v); }
static double ew_log(double x) { return std::log(x); }
static double ew_trunc(double x) { return std::trunc(x); }
static double ew_inf(double) { return INFINITY; }
static double ew_qnan(double) { return NAN; }
"""


def _digamma_text() -> str:
    """``ew_digamma_t`` and its double overload, cut from elementwise.cuh."""
    text = (HERE / "elementwise.cuh").read_text()
    body = re.search(r"template <class T> __device__ T ew_digamma_t\(T x\) \{.*?\n\}\n", text, re.S)
    overload = re.search(r"__device__ __forceinline__ double ew_digamma\(double x\) \{[^\n]*\}\n", text)
    assert body and overload, "elementwise.cuh changed: update the digamma cut"
    return body.group(0) + overload.group(0)


def _emulator_source(ctype: str) -> str:
    wrappers = "".join(
        f'extern "C" void run_{name}(const void* raw) {{ {params} p; std::memcpy(&p, raw, sizeof p); {name}(p); }}\n'
        for names, params in ((ops.SAMPLERS, "SamplerParams"), (ops.GRADS, "GradParams")) for name in names)
    sizes = ('extern "C" u64 sampler_params_size() { return sizeof(SamplerParams); }\n'
             'extern "C" u64 grad_params_size() { return sizeof(GradParams); }\n')
    head = f"#define IN_T {ctype}\n#define OUT_T {ctype}\n#define DST_T OUT_T\n"
    parts = [head, PRELUDE, _digamma_text(), (HERE / "random.cu").read_text(),
             (HERE / "random_samplers.cu").read_text(), (HERE / "sampler_grads.cu").read_text(), wrappers, sizes]
    return "\n".join(parts)


class _Emulator:
    """The kernels of one dtype, called with NumPy buffers and parameters packed by the glue's formats."""

    def __init__(self, lib, np_dtype):
        self.lib, self.np_dtype = lib, np.dtype(np_dtype)
        self.sampler = struct.Struct(ops.SAMPLER_FMT)
        self.grad = struct.Struct(ops.GRAD_FMT)

    def _call(self, name, packed):
        getattr(self.lib, f"run_{name}")(ctypes.c_char_p(packed))

    def sample(self, name, a, b=None, seed=1234, offset=0, tiny=0.0):
        a = np.ascontiguousarray(a, dtype=self.np_dtype)
        b = None if b is None else np.ascontiguousarray(np.broadcast_to(b, a.shape), dtype=self.np_dtype)
        out = np.full(a.shape, -7.0, dtype=self.np_dtype)
        packed = self.sampler.pack(out.ctypes.data, a.ctypes.data, 0 if b is None else b.ctypes.data, a.size, seed,
                                   offset, 0, tiny)
        self._call(name, packed)
        return out

    def gradient(self, name, *operands):
        arrays = [np.ascontiguousarray(x, dtype=self.np_dtype) for x in operands]
        out = np.full(arrays[0].shape, -7.0, dtype=self.np_dtype)
        ptrs = [x.ctypes.data for x in arrays] + [0] * (3 - len(arrays))
        self._call(name, self.grad.pack(out.ctypes.data, *ptrs, out.size))
        return out


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to run the kernels on the CPU")
    out = tmp_path_factory.mktemp("samplers")
    libs = {}
    for name, ctype in (("float64", "double"), ("float32", "float")):
        src, lib = out / f"samplers_{name}.cpp", out / f"samplers_{name}.so"
        src.write_text(_emulator_source(ctype))
        built = subprocess.run([cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        handle = ctypes.CDLL(str(lib))
        for fn in ("sampler_params_size", "grad_params_size"):
            getattr(handle, fn).restype = ctypes.c_ulonglong
        libs[name] = _Emulator(handle, name)
    return libs


def test_parameter_structs_match_the_glue_formats(emu):
    for e in emu.values():
        assert e.lib.sampler_params_size() == struct.calcsize(ops.SAMPLER_FMT)
        assert e.lib.grad_params_size() == struct.calcsize(ops.GRAD_FMT)


N = 20000


def _moments_ok(x, mean, var, what):
    """Sample mean and variance within 5 standard errors (the variance's from the sample's fourth moment)."""
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / x.size) + 1e-12, (what, x.mean(), mean)
    dev = x - x.mean()
    se_var = math.sqrt(max(float((dev**4).mean() - (dev**2).mean() ** 2), 1e-300) / x.size)
    assert abs(x.var() - var) < 5 * se_var + 1e-12, (what, x.var(), var)


@pytest.mark.parametrize("alpha", [0.01, 0.3, 1.0, 2.5, 30.0, 1e4])
def test_gamma_moments_and_cdf(emu, alpha):
    special = pytest.importorskip("scipy.special")
    x = emu["float64"].sample("standard_gamma_kernel", np.full(N, alpha))
    assert np.all(x >= 0) and np.all(np.isfinite(x))
    _moments_ok(x, alpha, alpha, f"gamma({alpha})")
    # the CDF at the draws is uniform: Kolmogorov-Smirnov distance within its 0.1% critical value
    u = np.sort(special.gammainc(alpha, x))
    ks = max(np.max(np.arange(1, N + 1) / N - u), np.max(u - np.arange(N) / N))
    assert ks < 1.95 / math.sqrt(N), ks


def test_gamma_edges(emu):
    e = emu["float64"]
    tiny = np.finfo(np.float64).tiny
    x = e.sample("standard_gamma_kernel", np.array([0.0, 1e-30, 1e-300, np.inf, np.nan, -1.0, -np.inf, 1e300]),
                 tiny=tiny)
    assert x[0] == tiny and x[1] == tiny and x[2] == tiny  # zero and draws that underflow: torch's clamp
    assert x[3] == np.inf and np.isnan(x[4]) and np.isnan(x[5]) and np.isnan(x[6])
    assert x[7] == pytest.approx(1e300, rel=1e-9)
    f = emu["float32"].sample("standard_gamma_kernel", np.array([0.0, 1e-20, 2.0]),
                              tiny=float(np.finfo(np.float32).tiny))
    assert f.dtype == np.float32 and f[0] == np.finfo(np.float32).tiny and f[1] == np.finfo(np.float32).tiny


@pytest.mark.parametrize("rate", [1e-3, 0.5, 3.0, 9.99, 10.0, 57.3, 1e6, 1e12])
def test_poisson_moments(emu, rate):
    x = emu["float64"].sample("poisson_kernel", np.full(N, rate))
    assert np.all(x == np.round(x)) and np.all(x >= 0)
    _moments_ok(x, rate, rate, f"poisson({rate})")


@pytest.mark.parametrize("rate", [0.7, 4.0, 12.5, 40.0])
def test_poisson_pmf(emu, rate):
    """Frequencies of each count against the pmf: a chi-square statistic over the cells with >= 5 expected."""
    x = emu["float64"].sample("poisson_kernel", np.full(4 * N, rate), seed=99).astype(np.int64)
    ks = np.arange(int(rate + 12 * math.sqrt(rate) + 10))
    pmf = np.exp(ks * math.log(rate) - rate - np.array([math.lgamma(k + 1) for k in ks]))
    expected = pmf * x.size
    cells = expected >= 5
    observed = np.bincount(x, minlength=ks.size)[: ks.size]
    chi2 = float((((observed - expected) ** 2 / expected)[cells]).sum())
    dof = int(cells.sum()) - 1
    assert chi2 < dof + 6 * math.sqrt(2 * dof), (chi2, dof)


def test_poisson_edges(emu):
    x = emu["float64"].sample("poisson_kernel", np.array([0.0, np.inf, np.nan, -1.0, 1e-300]))
    assert x[0] == 0 and x[1] == np.inf and np.isnan(x[2]) and np.isnan(x[3]) and x[4] == 0


@pytest.mark.parametrize("count,prob", [(10, 0.3), (5, 0.97), (1000, 0.2), (1000, 0.85), (37, 0.5), (3e8, 0.4),
                                        (1, 0.5), (25, 0.3999)])
def test_binomial_moments(emu, count, prob):
    x = emu["float64"].sample("binomial_kernel", np.full(N, float(count)), np.full(N, prob))
    assert np.all(x == np.round(x)) and np.all((x >= 0) & (x <= count))
    _moments_ok(x, count * prob, count * prob * (1 - prob), f"binomial({count}, {prob})")


def test_binomial_edges(emu):
    count = np.array([0.0, -3.0, 7.0, 7.0, 7.0, np.nan, 7.0, 0.0, np.inf, np.inf, 7.9, 0.5])
    prob = np.array([0.5, 0.5, 0.0, 1.0, 1.5, 0.5, np.nan, np.nan, 0.5, 0.0, 1.0, 0.5])
    x = emu["float64"].sample("binomial_kernel", count, prob)
    want = [0, 0, 0, 7, 7, np.nan, np.nan, 0, np.inf, 0, 7, 0]
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("name,params", [("standard_gamma_kernel", (2.5,)), ("poisson_kernel", (30.0,)),
                                         ("binomial_kernel", (40.0, 0.3))])
def test_streams_are_per_element_and_reproducible(emu, name, params):
    e = emu["float64"]
    args = [np.full(5000, params[0])] + ([params[1]] if len(params) > 1 else [])
    a = e.sample(name, *args, seed=7, offset=3)
    np.testing.assert_array_equal(a, e.sample(name, *args, seed=7, offset=3))
    # element i's draws depend on (seed, offset, i) only: a prefix of the tensor gives a prefix of the values
    head = [np.full(100, params[0])] + args[1:]
    np.testing.assert_array_equal(a[:100], e.sample(name, *head, seed=7, offset=3))
    for other in (e.sample(name, *args, seed=7, offset=4), e.sample(name, *args, seed=8, offset=3)):
        assert np.mean(a == other) < 0.2  # (binomial / poisson values repeat by chance)
    # consecutive elements are not correlated
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 5 / math.sqrt(a.size)


def test_float32_matches_float64_draws(emu):
    """One stream, two result types: the float32 kernel's draws are the float64 draws rounded once."""
    alpha = np.linspace(0.2, 20.0, 1000)
    d = emu["float64"].sample("standard_gamma_kernel", alpha, seed=5)
    f = emu["float32"].sample("standard_gamma_kernel", alpha.astype(np.float32).astype(np.float64), seed=5)
    d32 = emu["float64"].sample("standard_gamma_kernel", alpha.astype(np.float32).astype(np.float64), seed=5)
    np.testing.assert_array_equal(f, d32.astype(np.float32))
    assert np.all(np.isfinite(d))


def test_gradient_kernels_match_the_cpu_backend(emu):
    rng = np.random.default_rng(3)
    alpha = np.exp(rng.uniform(-5, 8, 4000))
    x = np.maximum(rng.gamma(alpha), 1e-300)
    got = emu["float64"].gradient("standard_gamma_grad_kernel", alpha, x)
    np.testing.assert_allclose(got, standard_gamma_grad(alpha, x), rtol=1e-12, atol=1e-300)
    a, b = np.exp(rng.uniform(-3, 5, 4000)), np.exp(rng.uniform(-3, 5, 4000))
    v = np.clip(rng.beta(a, b), 1e-300, 1 - 1e-16)
    got = emu["float64"].gradient("dirichlet_grad_kernel", v, a, a + b)
    np.testing.assert_allclose(got, dirichlet_grad(v, a, a + b), rtol=1e-11, atol=1e-300)
    f = emu["float32"].gradient("standard_gamma_grad_kernel", alpha[:100].astype(np.float32),
                                x[:100].astype(np.float32))
    want = standard_gamma_grad(alpha[:100].astype(np.float32).astype(np.float64),
                               x[:100].astype(np.float32).astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(f, want, rtol=1e-6)

"""scatter_reduce.cu (kernels/scatter_reduce_ops.py): every dtype's instantiation compiles with NVRTC to sm_90
CUBIN with its three kernels, the parameter structs match the glue's formats, and no kernel spills registers."""

from __future__ import annotations

import re
import struct

import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from block_emulator import ptxas_log  # noqa: E402

from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import CTYPES  # noqa: E402
from strided.backends.cuda.kernels import scatter_reduce_ops as ops  # noqa: E402

SOURCES = list(ops.scatter_reduce_sources())


def test_every_dtype_is_instantiated():
    assert len(SOURCES) == len(CTYPES)
    assert {text.splitlines()[2] for _, _, text in SOURCES} == {f"#define SRC_T {c}" for c in CTYPES.values()}


@pytest.mark.parametrize("names,text", [pytest.param(n, t, id=t.splitlines()[2].split()[-1].replace(" ", "_"))
                                        for _, n, t in SOURCES])
def test_kernels_compile(names, text):
    for name in names:
        assert compiler._compile(text, name, "sm_90", ())[:4] == b"\x7fELF"


def test_parameter_formats_match_the_structs():
    """ScatterReduceParams: 4 pointers, n, ndim, 3 x 8 dims, dim stride, dim size, reduce, err, tag; MeanParams:
    3 pointers, n, self count (all 8-byte fields: the format's size is the struct's)."""
    assert struct.calcsize(ops.SR_FMT) == 8 * (4 + 2 + 24 + 3 + 2)
    assert struct.calcsize(ops.MEAN_FMT) == 8 * 5


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int8", "int64", "bool"])
def test_no_register_spills(name):
    log = ptxas_log(ops.scatter_reduce_source(name), "scatter_reduce.cu")
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills and all(s == ("0", "0") for s in spills), log


# -- the kernels on the CPU: scatter_reduce.cu compiled by g++ with one thread (as Note [Samplers on the CPU] in
# test_nvrtc_random_samplers.py), its atomics the plain read-modify-writes they are with a single thread, the
# parameters packed with the glue's formats, against the CPU backend bit for bit (one thread combines in index
# order, as np.ufunc.at does; on a GPU floating sums and products may differ in the last bits).
PRELUDE = r"""
#include <cmath>
#include <cstring>
#include <cstddef>
typedef long long i64;
typedef unsigned long long u64;
#define STRIDED_MAX_DIMS 8
#define __global__
#define __device__
#define __forceinline__ inline
struct EmuDim { unsigned x; };
static EmuDim threadIdx{0}, blockIdx{0}, blockDim{1}, gridDim{1};
static void __threadfence_system() {}
template <class D, class S> D convert(S v) { return static_cast<D>(v); }
template <class T> T atomicCAS(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
template <class T> T atomicAdd(T* p, T v) { T old = *p; *p = (T)(old + v); return old; }
template <class T> T atomicMax(T* p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <class T> T atomicMin(T* p, T v) { T old = *p; if (v < old) *p = v; return old; }
static double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, 8); return d; }
"""
WRAP = r"""
extern "C" void run_sr(const char* raw, int init) {
  ScatterReduceParams p; std::memcpy(&p, raw, sizeof p); if (init) scatter_reduce_init(p); else scatter_reduce(p);
}
extern "C" void run_mean(const char* raw) { MeanParams p; std::memcpy(&p, raw, sizeof p); scatter_reduce_mean(p); }
extern "C" u64 param_sizes() { return sizeof(ScatterReduceParams) * 1000 + sizeof(MeanParams); }
"""
EMU_TYPES = {"float32": 1, "float64": 1, "int8": 0, "int16": 0, "int32": 0, "int64": 0, "uint8": 0, "bool": 0}


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    import ctypes
    import shutil
    import subprocess

    from strided.backends.cuda.kernels import HERE

    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to run the kernels on the CPU")
    out, libs = tmp_path_factory.mktemp("scatter_reduce"), {}
    kernel = (HERE / "scatter_reduce.cu").read_text().replace('extern "C" __global__', 'extern "C"')
    for name, flt in EMU_TYPES.items():
        c = CTYPES[name]
        src, lib = out / f"{name}.cpp", out / f"{name}.so"
        src.write_text(f"#define DST_T {c}\n#define SRC_T {c}\n#define IS_FLOAT {flt}\n" + PRELUDE + kernel + WRAP)
        built = subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        libs[name] = ctypes.CDLL(str(lib))
        libs[name].param_sizes.restype = ctypes.c_ulonglong
    return libs


def _emulated(lib, x, dim, idx, src, reduce, include_self):
    """The glue's launches (Note [CUDA scatter_reduce]) over NumPy buffers; raises on a reported bad index."""
    import numpy as np

    out = np.array(x, ndmin=1, copy=True)
    count, err = np.zeros(out.shape, np.int64), np.zeros(2, np.int64)
    idx, src = np.ascontiguousarray(idx, np.int64), np.asarray(src)

    def pad(v):
        return list(v) + [0] * (8 - len(v))

    bstr = [s // out.itemsize for s in out.strides]
    ast = [s // src.itemsize for s in src.strides]
    bst = [0 if k == dim else s for k, s in enumerate(bstr)]
    code = ("sum", "prod", "mean", "amax", "amin").index(reduce)
    raw = struct.pack(ops.SR_FMT, out.ctypes.data, src.ctypes.data, idx.ctypes.data,
                      count.ctypes.data if reduce == "mean" else 0, idx.size, idx.ndim, *pad(idx.shape), *pad(ast),
                      *pad(bst), bstr[dim], out.shape[dim], code, err.ctypes.data, 7)
    if not include_self:
        lib.run_sr(raw, 1)
    lib.run_sr(raw, 0)
    if reduce == "mean":
        lib.run_mean(struct.pack(ops.MEAN_FMT, out.ctypes.data, out.ctypes.data, count.ctypes.data, out.size,
                                 int(include_self)))
    if err[0]:
        assert err[0] == 7
        raise RuntimeError(f"index {err[1]} is out of bounds")
    return out


@pytest.mark.parametrize("name", list(EMU_TYPES))
def test_kernels_match_the_cpu_backend(emu, name):
    import numpy as np

    import strided as st

    lib = emu[name]
    assert lib.param_sizes() == struct.calcsize(ops.SR_FMT) * 1000 + struct.calcsize(ops.MEAN_FMT)
    rng = np.random.default_rng(1)

    def values(shape):
        if name == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        if name.startswith("float"):
            a = rng.integers(-4, 5, shape).astype(name) * 0.75
            a[rng.random(shape) < 0.1], a[rng.random(shape) < 0.05] = np.nan, np.inf
            return a
        info = np.iinfo(name)  # wide enough to overflow int8 / uint8 sums and products
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, dtype=name, endpoint=True)

    for _ in range(25):
        shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(1, 4)))
        dim = int(rng.integers(0, len(shape)))
        ishape = tuple(int(rng.integers(1, 7)) if k == dim else int(rng.integers(1, s + 1))
                       for k, s in enumerate(shape))
        x, s, i = values(shape), values(ishape), rng.integers(0, shape[dim], ishape)
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            if name == "bool" and reduce == "mean":  # the CPU refuses it, as torch's CPU kernel
                continue
            for include_self in (True, False):
                with np.errstate(all="ignore"):
                    want = st.scatter_reduce(st.tensor(x), dim, st.tensor(i), st.tensor(s), reduce,
                                             include_self=include_self).numpy()
                got = _emulated(lib, x, dim, i, s, reduce, include_self)
                np.testing.assert_array_equal(got, want, err_msg=f"{reduce} include_self={include_self}")
    with pytest.raises(RuntimeError, match="index 5 is out of bounds"):
        _emulated(lib, values((3, 2)), 0, np.array([[0, 5]]), values((1, 2)), "amax", False)

"""The LU kernels (``linalg_lu.cu``): every instantiation compiles with NVRTC to sm_90 CUBIN without spilling, and
the CUDA source itself runs on the CPU under a small block emulator, driven by the real host loop of
``linalg_lu_ops`` and checked against a NumPy getrf.

Note [CPU block emulator]
No GPU here, so the kernel source is compiled with g++ against a prelude that maps CUDA's few constructs the
kernels use onto the CPU: every CUDA thread of a block is a ucontext fiber, ``__syncthreads`` and the warp
shuffles are barriers of a scheduler that runs one block at a time. The scheduler insists that a barrier is
reached by every thread of its block (or warp), at one source line, and fails on a deadlock instead of hanging.
Between barriers the fibers run one after another in a chosen order -- forward, reverse or shuffled -- so a race
(a thread reading what another writes in the same phase) shows up as results that depend on the order; the
tests require bitwise-equal results across orders. Dynamic shared memory starts as NaN bytes and is followed by
a guard; the output buffers sit between canaries. What this cannot show: timing, the memory model across
blocks, register limits (checked from ptxas's report instead) and anything specific to the hardware.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import struct
import subprocess
import types

import numpy as np
import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

import strided as st  # noqa: E402
from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import linalg_lu_ops as lu_ops  # noqa: E402


def _sources():
    for _file, names, text in lu_ops.lu_sources():
        dtype = "float64" if "#define SCALAR_T double" in text else "float32"
        yield pytest.param(names, text, id=dtype)


@pytest.mark.parametrize("names,text", list(_sources()))
def test_lu_kernels_compile_without_spills(names, text):
    assert compiler._compile(text, names[0], "sm_90", ())[:4] == b"\x7fELF"
    nv = compiler._nvrtc()
    err, prog = nv.nvrtcCreateProgram(text.encode(), b"linalg_lu.cu", 0, [], [])
    try:  # the same options, and ptxas's resource report
        opts = ["--gpu-architecture=sm_90", "-std=c++17", "--fmad=true", "--ptxas-options=-v"]
        opts += [f"-I{d}" for d in compiler.include_dirs()]
        assert nv.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS
        size = nv.nvrtcGetProgramLogSize(prog)[1]
        log = b" " * size
        nv.nvrtcGetProgramLog(prog, log)
    finally:
        nv.nvrtcDestroyProgram(prog)
    for name, threads in zip(names, (lu_ops.MAX_PANEL_THREADS, lu_ops.UPDATE_THREADS)):
        report = log.decode(errors="replace").split(f"Compiling entry function '{name}'")[1].split("Compile time")[0]
        assert "0 bytes spill stores, 0 bytes spill loads" in report, report
        used = int(re.search(r"Used (\d+) registers", report).group(1))
        assert used * threads <= 65536, report  # the largest block fits the register file


# -- the CPU block emulator (Note [CPU block emulator]) --------------------------------------------------------
PRELUDE = r"""
#include <ucontext.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>
typedef long long i64;
struct EmuDim { unsigned x = 0, y = 1, z = 1; };
static EmuDim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
#define __syncthreads() emu_wait(1, __LINE__)

enum { EMU_READY = 0, EMU_BLOCK = 1, EMU_WARP = 2, EMU_DONE = 3 };
struct EmuFiber { ucontext_t ctx; std::vector<char> stack; int state = EMU_READY; int site = 0; };
static std::vector<EmuFiber> emu_fibers;
static ucontext_t emu_main;
static int emu_current = 0;
static unsigned char* emu_dynamic = nullptr;
static unsigned long long emu_slots[32][32];
static void (*emu_entry)(const void*) = nullptr;
static const void* emu_params = nullptr;

static void emu_wait(int kind, int site) {
  EmuFiber& f = emu_fibers[emu_current];
  f.state = kind;
  f.site = site;
  swapcontext(&f.ctx, &emu_main);
}

template <class T> T __shfl_down_sync(unsigned, T v, int off) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  std::memcpy(&emu_slots[warp][lane], &v, sizeof(T));
  emu_wait(EMU_WARP, __LINE__);
  T out = v;
  if (lane + off < 32) std::memcpy(&out, &emu_slots[warp][lane + off], sizeof(T));
  emu_wait(EMU_WARP, __LINE__);
  return out;
}

static void emu_trampoline() {
  emu_entry(emu_params);
  emu_fibers[emu_current].state = EMU_DONE;
}

// 0: ok; 1: a barrier not reached by all threads of its block / warp (deadlock), 2: barriers at different lines
static int emu_run_block(unsigned T, int order_mode, std::mt19937& rng) {
  if (emu_fibers.size() != T) emu_fibers.resize(T);
  for (unsigned t = 0; t < T; ++t) {
    EmuFiber& f = emu_fibers[t];
    if (f.stack.empty()) f.stack.resize(1 << 16);
    f.state = EMU_READY;
    f.site = 0;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = &emu_main;
    makecontext(&f.ctx, emu_trampoline, 0);
  }
  std::vector<unsigned> order(T);
  std::iota(order.begin(), order.end(), 0u);
  if (order_mode == 1) std::reverse(order.begin(), order.end());
  for (;;) {
    if (order_mode == 2) std::shuffle(order.begin(), order.end(), rng);
    for (unsigned t : order) {
      if (emu_fibers[t].state != EMU_READY) continue;
      emu_current = (int)t;
      threadIdx.x = t;
      swapcontext(&emu_main, &emu_fibers[t].ctx);
    }
    unsigned done = 0, at_block = 0;
    for (auto& f : emu_fibers) {
      done += f.state == EMU_DONE;
      at_block += f.state == EMU_BLOCK;
    }
    if (done == T) return 0;
    bool released = false;
    for (unsigned w = 0; w * 32 < T; ++w) {
      bool all = true;
      for (unsigned l = 0; l < 32; ++l) all = all && emu_fibers[w * 32 + l].state == EMU_WARP;
      if (all) {
        for (unsigned l = 0; l < 32; ++l) emu_fibers[w * 32 + l].state = EMU_READY;
        released = true;
      }
    }
    if (!released && at_block == T) {
      for (auto& f : emu_fibers) {
        if (f.site != emu_fibers[0].site) return 2;
      }
      for (auto& f : emu_fibers) f.state = EMU_READY;
      released = true;
    }
    if (!released) return 1;
  }
}

template <class P, void (*K)(const P)> static void emu_call(const void* raw) {
  P p;
  std::memcpy(&p, raw, sizeof(P));
  K(p);
}

// 0: ok, 1 / 2: see emu_run_block, 3: unknown kernel, 4: parameter size mismatch, 5: shared memory overrun
extern "C" int emu_launch(const char* name, unsigned grid, unsigned block, unsigned long long smem,
                          const void* params, unsigned long long params_size, int order_mode, unsigned seed) {
  if (!std::strcmp(name, "lu_panel")) {
    emu_entry = emu_call<LuPanel, lu_panel>;
    if (params_size != sizeof(LuPanel)) return 4;
  } else if (!std::strcmp(name, "lu_update")) {
    emu_entry = emu_call<LuUpdate, lu_update>;
    if (params_size != sizeof(LuUpdate)) return 4;
  } else {
    return 3;
  }
  const unsigned long long guard = 256;
  std::vector<unsigned char> dynamic(smem + guard, 0x5a);
  emu_dynamic = dynamic.data();
  emu_params = params;
  blockDim.x = block;
  gridDim.x = grid;
  std::mt19937 rng(seed);
  for (unsigned b = 0; b < grid; ++b) {
    std::memset(dynamic.data(), 0xff, smem);  // NaN bytes: a read before a write poisons the result
    blockIdx.x = b;
    const int rc = emu_run_block(block, order_mode, rng);
    if (rc) return rc;
    for (unsigned long long i = smem; i < smem + guard; ++i) {
      if (dynamic[i] != 0x5a) return 5;
    }
  }
  return 0;
}
"""


def _emulator_source(ctype: str) -> str:
    text = _kernel_text()
    text, dynamic = re.subn(r"extern __shared__[^;]*\b(\w+)\[\];", r"unsigned char* \1 = emu_dynamic;", text)
    text, opaque = re.subn(r'asm volatile\("mov\.b64 %0, 0;" : "=l"\((\w+)\)\);', r"\1 = 0;", text)
    text, entries = re.subn(r'extern "C" __global__', "static", text)
    assert (dynamic, opaque, entries) == (1, 1, 2), "linalg_lu.cu changed: update the emulator's rewrites"
    head = f"#define SCALAR_T {ctype}\n#define ACC_T {ctype}\n"
    prelude, launcher = PRELUDE.split("template <class P, void (*K)(const P)>")
    return head + prelude + text + "\ntemplate <class P, void (*K)(const P)>" + launcher


def _kernel_text() -> str:
    from strided.backends.cuda.kernels import HERE

    return (HERE / "linalg_lu.cu").read_text()


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU block emulator")
    out = tmp_path_factory.mktemp("lu_emulator")
    libs = {}
    for name, ctype in (("float32", "float"), ("float64", "double")):
        src = out / f"lu_{name}.cpp"
        src.write_text(_emulator_source(ctype))
        lib = out / f"lu_{name}.so"
        built = subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        libs[name] = ctypes.CDLL(str(lib))
        libs[name].emu_launch.restype = ctypes.c_int
        libs[name].emu_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_ulonglong,
                                          ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_int, ctypes.c_uint]
    return libs


class _EmuKernel:
    """Stands in for launch.Kernel: packs the parameters with the kernel's format and runs every block."""

    def __init__(self, lib, name: str, fmt: str, order: int, log: list):
        self.lib, self.name, self.packer, self.order, self.log = lib, name, struct.Struct(fmt), order, log

    def __call__(self, grid, block, stream, *values):
        self.launch_smem(grid, block, 0, stream, *values)

    def launch_smem(self, grid, block, smem, stream, *values):
        assert block % 32 == 0 and 64 <= block <= lu_ops.MAX_PANEL_THREADS and 0 < grid <= lu_ops.MAX_GRID
        self.log.append((self.name, grid, block, smem, values))
        params = self.packer.pack(*values)
        rc = self.lib.emu_launch(self.name.encode(), grid, block, smem, params, len(params), self.order, 1234)
        assert rc == 0, f"{self.name}: emulator error {rc} for {values}"


class _Buf:
    """A NumPy array between canaries, with the bits of a tensor that ``_factor`` reads."""

    CANARY = 64

    def __init__(self, shape, np_dtype, dtype, fill):
        size = int(np.prod(shape))
        self.full = np.full(size + 2 * self.CANARY, fill, dtype=np_dtype)
        self.fill = fill
        self.array = self.full[self.CANARY:self.CANARY + size].reshape(shape)
        self.dtype = dtype
        self.device = types.SimpleNamespace(index=0)

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def canaries_intact(self) -> bool:
        edge = np.concatenate([self.full[:self.CANARY], self.full[-self.CANARY:]])
        return bool(np.all(edge == self.fill))


def _emulate(libs, monkeypatch, a, pivot=True, order=0, smem_limit=None, whole_max_k=None):
    """Run ``_factor`` (the host loop) on the emulated kernels: (LU, pivots, perm, info, launches)."""
    a = np.asarray(a)
    name = a.dtype.name
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    count, k = int(np.prod(batch)), min(m, n)
    log = []
    monkeypatch.setattr(lu_ops, "get_kernel", lambda src, kname, fmt, dev: _EmuKernel(libs[name], kname, fmt, order,
                                                                                        log))
    monkeypatch.setattr(lu_ops, "current_stream_handle", lambda dev: 0)
    monkeypatch.setattr(lu_ops, "_optin_smem", lambda dev: 227 * 1024 - lu_ops.STATIC_SMEM)
    monkeypatch.setattr(lu_ops, "PANEL_SMEM_LIMIT", smem_limit)
    if whole_max_k is not None:
        monkeypatch.setattr(lu_ops, "WHOLE_MAX_K", whole_max_k)
    LU = _Buf((count, m, n), a.dtype, getattr(st, name), 12345.0)
    LU.array[...] = a.reshape(count, m, n)
    piv = _Buf((count, k), np.int32, st.int32, -7)
    perm = _Buf((count, m), np.int64, st.int64, -7)
    info = _Buf((count,), np.int32, st.int32, -7)
    lu_ops._factor(LU, piv, perm, info, count, m, n, k, int(pivot))
    assert all(b.canaries_intact() for b in (LU, piv, perm, info)), "a kernel wrote out of bounds"
    return (LU.array.reshape(a.shape).copy(), piv.array.reshape(*batch, k).copy(), perm.array.reshape(*batch, m).copy(),
            info.array.reshape(batch).copy(), log)


def _getrf(a, pivot=True):
    """getrf in float64 NumPy: (LU, 1-based pivots, perm, info); first max on ties, zero columns unscaled."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    perm, pivots, info = np.arange(m), [], 0
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j]))) if pivot else j
        pivots.append(p + 1)
        a[[j, p]] = a[[p, j]]
        perm[[j, p]] = perm[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(pivots, dtype=np.int32), perm, info


def _check_against_getrf(a, got, pivot=True):
    LU, piv, perm, info, _ = got
    flat = a.reshape(-1, *a.shape[-2:])
    tol = 1e-4 if a.dtype == np.float32 else 1e-10
    for i, (mat, lu, pv, pm, inf) in enumerate(zip(flat, LU.reshape(flat.shape), piv.reshape(len(flat), -1),
                                                   perm.reshape(len(flat), -1), info.reshape(-1))):
        want_lu, want_piv, want_perm, want_info = _getrf(mat, pivot)
        np.testing.assert_array_equal(pv, want_piv, err_msg=f"pivots of matrix {i}")
        np.testing.assert_array_equal(pm, want_perm, err_msg=f"perm of matrix {i}")
        assert inf == want_info, f"info of matrix {i}"
        np.testing.assert_allclose(lu, want_lu, rtol=tol, atol=tol * max(1.0, np.abs(want_lu).max()))


def _random(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# (shape, panel shared-memory limit, whole-matrix max k): every path of the host loop
PATHS = [
    ((1, 1), None, None), ((2, 2), None, None), ((3, 5, 5), None, None), ((31, 31), None, None),
    ((33, 33), None, None), ((2, 40, 17), None, None), ((17, 40), None, None),  # whole matrix in shared memory
    ((65, 65), None, None), ((100, 37), None, 0), ((37, 100), None, 0),  # blocked, panels in shared memory
    ((2, 70, 70), None, None), ((70, 33), 0, 0), ((33, 70), 0, 0), ((2, 65, 65), 0, None),  # panels in global memory
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,smem_limit,whole_max_k", PATHS, ids=lambda v: str(v))
def test_emulated_lu_matches_getrf_on_every_path(emulators, monkeypatch, dtype, shape, smem_limit, whole_max_k):
    a = _random(shape, dtype, seed=len(shape) + shape[-1])
    got = _emulate(emulators, monkeypatch, a, smem_limit=smem_limit, whole_max_k=whole_max_k)
    _check_against_getrf(a, got)
    k = min(shape[-2:])
    whole = k <= (lu_ops.WHOLE_MAX_K if whole_max_k is None else whole_max_k) and \
        (shape[-2] | 1) * shape[-1] * a.itemsize <= lu_ops.WHOLE_MAX_BYTES
    panels = [values for name, _, _, _, values in got[4] if name == "lu_panel"]
    updates = [values for name, _, _, _, values in got[4] if name == "lu_update"]
    if whole:
        assert len(got[4]) == 1 and panels[0][-5:] == (0, k, shape[-1], 1, 1)
    else:  # j0, steps, width, pivot, in shared memory
        assert [v[-5:] for v in panels] == [(j0, min(32, k - j0), min(32, k - j0), 1, int(smem_limit is None))
                                            for j0 in range(0, k, lu_ops.NB)]
        assert [v[4] for v in updates] == [j0 for j0 in range(0, k, lu_ops.NB)
                                           if j0 + 32 < shape[-2] and j0 + 32 < shape[-1]]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("shape,smem_limit,whole_max_k", [((2, 45, 45), None, None), ((70, 70), None, None),
                                                          ((70, 40), 0, 0)], ids=str)
def test_emulated_lu_does_not_depend_on_thread_order(emulators, monkeypatch, order, shape, smem_limit, whole_max_k):
    """Bitwise the same results whatever order the threads run in between barriers: no races."""
    a = _random(shape, "float64", 3)
    a[..., 5, :] = a[..., 9, :]  # a tie in column 0's search is possible after row swaps; repeated rows besides
    first = _emulate(emulators, monkeypatch, a, smem_limit=smem_limit, whole_max_k=whole_max_k)
    other = _emulate(emulators, monkeypatch, a, order=order, smem_limit=smem_limit, whole_max_k=whole_max_k)
    for x, y in zip(first[:4], other[:4]):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("smem_limit,whole_max_k", [(None, None), (None, 0), (0, 0)])
def test_emulated_lu_ties_zero_columns_singular_and_no_pivoting(emulators, monkeypatch, smem_limit, whole_max_k):
    kw = dict(smem_limit=smem_limit, whole_max_k=whole_max_k)
    ties = np.random.default_rng(5).integers(-3, 4, (2, 40, 40)).astype(np.float64)  # many equal |values|
    _check_against_getrf(ties, _emulate(emulators, monkeypatch, ties, **kw))
    zero_col = _random((40, 40), "float64", 6)
    zero_col[:, 7] = 0  # column 7 is zero at and below the diagonal: unscaled, info = 8, the rest goes on
    got = _emulate(emulators, monkeypatch, zero_col, **kw)
    _check_against_getrf(zero_col, got)
    assert got[3] == 8
    singular = _random((36, 36), "float64", 7)
    singular[:, 35] = 0  # the last pivot is exactly zero
    got = _emulate(emulators, monkeypatch, singular, **kw)
    _check_against_getrf(singular, got)
    assert got[3] == 36
    dominant = _random((2, 37, 37), "float64", 8) + 40 * np.eye(37)
    got = _emulate(emulators, monkeypatch, dominant, pivot=False, **kw)
    _check_against_getrf(dominant, got, pivot=False)
    np.testing.assert_array_equal(got[1], np.broadcast_to(np.arange(1, 38, dtype=np.int32), (2, 37)))
    np.testing.assert_array_equal(got[2], np.broadcast_to(np.arange(37), (2, 37)))


@pytest.mark.parametrize("smem_limit,whole_max_k", [(None, None), (None, 0), (0, 0)])
def test_emulated_lu_of_nan_and_inf_terminates_in_range(emulators, monkeypatch, smem_limit, whole_max_k):
    a = _random((3, 40, 40), "float32", 9)
    a[0, 3, 0] = np.nan  # NaN wins the first search (as argmax)
    a[1, :, 5] = np.inf
    a[2] = np.nan
    LU, piv, perm, info, _ = _emulate(emulators, monkeypatch, a, smem_limit=smem_limit, whole_max_k=whole_max_k)
    assert piv[0, 0] == 4
    assert np.all((piv >= np.arange(1, 41)) & (piv <= 40))
    np.testing.assert_array_equal(np.sort(perm, -1), np.broadcast_to(np.arange(40), (3, 40)))
    assert np.isnan(LU[2]).all() and np.isnan(LU[0]).any()

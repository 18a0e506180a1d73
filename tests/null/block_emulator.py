"""Helpers of the kernel tests of tests/null (a module, not a test file): the CPU block emulator -- a CUDA kernel
file compiled with g++ against ``PRELUDE`` and run one block at a time -- and ptxas's resource report.

Note [CPU block emulator]
No GPU here, so the kernel source is compiled with g++ against a prelude that maps CUDA's few constructs the
kernels use onto the CPU: every CUDA thread of a block is a ucontext fiber, ``__syncthreads``, ``__syncwarp`` and
the warp shuffles are barriers of a scheduler that runs one block at a time. The scheduler insists that a barrier is
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

__all__ = ["PRELUDE", "emulator_source", "build", "EmuKernel", "Buf", "ptxas_log"]

PRELUDE = r"""
#include <ucontext.h>
#include <algorithm>
#include <cmath>
#include <math.h>
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
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static
#define __syncthreads() emu_wait(1, __LINE__)
#define __syncwarp() emu_wait(2, __LINE__)

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

// every lane posts v, then reads lane `from(lane)`'s (a lane outside the warp reads its own v)
template <class T, class F> T emu_shuffle(T v, F from) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  std::memcpy(&emu_slots[warp][lane], &v, sizeof(T));
  emu_wait(EMU_WARP, __LINE__);
  T out = v;
  const unsigned src = from(lane);
  if (src < 32) std::memcpy(&out, &emu_slots[warp][src], sizeof(T));
  emu_wait(EMU_WARP, __LINE__);
  return out;
}
template <class T> T __shfl_down_sync(unsigned, T v, int off) {
  return emu_shuffle(v, [off](unsigned l) { return l + off; });
}
template <class T> T __shfl_xor_sync(unsigned, T v, int mask) {
  return emu_shuffle(v, [mask](unsigned l) { return l ^ (unsigned)mask; });
}
template <class T> T __shfl_sync(unsigned, T v, int src) {
  return emu_shuffle(v, [src](unsigned) { return (unsigned)src & 31u; });
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

static int emu_select(const char* name, unsigned long long params_size);  // the kernels of the file (generated)

// 0: ok, 1 / 2: see emu_run_block, 3: unknown kernel, 4: parameter size mismatch, 5: shared memory overrun
extern "C" int emu_launch(const char* name, unsigned grid, unsigned block, unsigned long long smem,
                          const void* params, unsigned long long params_size, int order_mode, unsigned seed) {
  const int chosen = emu_select(name, params_size);
  if (chosen) return chosen;
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


def emulator_source(kernel_text: str, defines: dict[str, str], kernels: dict[str, str]) -> tuple[str, tuple]:
    """The g++ source of ``kernel_text`` under the prelude, with ``#define`` lines for ``defines`` and a launcher for
    ``kernels`` (entry name -> its parameter struct): (source, (dynamic shared arrays, opaque zeros, entries)
    rewritten), the counts for the caller to check against the file it expects."""
    text, dynamic = re.subn(r"extern __shared__[^;]*\b(\w+)\[\];", r"unsigned char* \1 = emu_dynamic;", kernel_text)
    text, opaque = re.subn(r'asm volatile\("mov\.b64 %0, 0;" : "=l"\((\w+)\)\);', r"\1 = 0;", text)
    text, entries = re.subn(r'extern "C" __global__', "static", text)
    head = "".join(f"#define {k} {v}\n" for k, v in defines.items())
    select = "static int emu_select(const char* name, unsigned long long params_size) {\n"
    for name, params in kernels.items():
        select += (f'  if (!std::strcmp(name, "{name}")) {{\n    emu_entry = emu_call<{params}, {name}>;\n'
                   f"    return params_size == sizeof({params}) ? 0 : 4;\n  }}\n")
    select += "  return 3;\n}\n"
    return head + PRELUDE + text + "\n" + select, (dynamic, opaque, entries)


def build(out_dir, stem: str, source: str):
    """``source`` compiled by g++ into a shared library under ``out_dir``, ``emu_launch`` typed (skips the test
    without g++)."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU block emulator")
    src = out_dir / f"{stem}.cpp"
    src.write_text(source)
    lib_path = out_dir / f"{stem}.so"
    built = subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(lib_path), str(src)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    lib = ctypes.CDLL(str(lib_path))
    lib.emu_launch.restype = ctypes.c_int
    lib.emu_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_char_p,
                               ctypes.c_ulonglong, ctypes.c_int, ctypes.c_uint]
    return lib


class EmuKernel:
    """Stands in for launch.Kernel: packs the parameters with the kernel's format and runs every block in thread
    ``order`` (0 forward, 1 reverse, 2 shuffled), checking the launch shape against the kernel's bounds."""

    def __init__(self, lib, name: str, fmt: str, order: int, log: list, threads=(64, 1024), max_grid=1 << 31):
        self.lib, self.name, self.packer, self.order, self.log = lib, name, struct.Struct(fmt), order, log
        self.threads, self.max_grid = threads, max_grid

    def __call__(self, grid, block, stream, *values):
        self.launch_smem(grid, block, 0, stream, *values)

    def launch_smem(self, grid, block, smem, stream, *values):
        lo, hi = self.threads
        assert block % 32 == 0 and lo <= block <= hi and 0 < grid <= self.max_grid
        self.log.append((self.name, grid, block, smem, values))
        params = self.packer.pack(*values)
        rc = self.lib.emu_launch(self.name.encode(), grid, block, smem, params, len(params), self.order, 1234)
        assert rc == 0, f"{self.name}: emulator error {rc} for {values}"


class Buf:
    """A NumPy array between canaries, with the bits of a tensor that a kernel's host glue reads."""

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
        return edge.tobytes() == np.full_like(edge, self.fill).tobytes()  # (bitwise: a NaN fill too)


def ptxas_log(text: str, file: str, arch: str = "sm_90") -> str:
    """NVRTC's log of ``text`` compiled with strided's options plus ptxas's resource report (``-v``): per entry
    function, its registers, spills, stack frame and static shared memory."""
    from cuda.bindings import nvrtc

    from strided.backends.cuda import compiler

    nv = compiler._nvrtc()
    _err, prog = nv.nvrtcCreateProgram(text.encode(), file.encode(), 0, [], [])
    try:
        opts = [f"--gpu-architecture={arch}", "-std=c++17", "--fmad=true", "--ptxas-options=-v"]
        opts += [f"-I{d}" for d in compiler.include_dirs()]
        assert nv.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS
        log = b" " * nv.nvrtcGetProgramLogSize(prog)[1]
        nv.nvrtcGetProgramLog(prog, log)
    finally:
        nv.nvrtcDestroyProgram(prog)
    return log.decode(errors="replace")

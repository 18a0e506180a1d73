// Jiterator kernels: a user's elementwise C++ function over up to 8 input tensors, written to up to 8 outputs
// (strided/backends/cuda/jiterator.py, Note [Jiterator]). The text before this file gives
//   NIN, NOUT              the number of inputs and outputs
//   IN_T, OUT_T, COMPUTE_T the common dtype's C type (inputs are converted to it, outputs are of it) and its
//                          compute type (float for the half types), the user function's T
//   jit_load(p, off, a)    loads input k at element offset off[NOUT + k], converted to IN_T, into a[k]
//   jit_compute(p, a, r)   calls the user function on a (as COMPUTE_T) and the extra arguments, r[k] = output k
//                          (both templates over the parameter struct, so they can come before it)
//   JIT_VEC, JitVec<T>     elements per 16-byte vector of the widest operand (at most 8), the aligned vector type
//   jit_load_vec(p, i, a)  loads elements i .. i + JIT_VEC - 1 of every input as one vector each into a[j][k]
// Four kernels per instantiation: jit_vec (every operand dense in one layout and aligned to JIT_VEC elements: one
// vector load or store per operand and step), jit_flat (dense in one layout, any alignment: element i at offset i)
// and jit_strided32 / jit_strided64 (any layout over the coalesced dims; strides in elements, broadcast = 0).
#define JIT_BLOCK 128
#define JIT_UNROLL 4
#define JIT_OPERANDS (NOUT + NIN)
#define JIT_MAX_EXTRAS 16

struct JitFlat {
  void* out[8];
  const void* in[8];
  double ed[JIT_MAX_EXTRAS];  // extra arguments: float values, the real part of complex ones
  i64 ei[JIT_MAX_EXTRAS];     // int and bool values, the imaginary part's bits of complex ones
  i64 n;
};

struct JitStrided {
  JitFlat f;
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];
  i64 strides[16][STRIDED_MAX_DIMS];  // the outputs', then the inputs'
};

// Loads for JIT_UNROLL elements first, then computes and stores: the loads of one thread are in flight together.
extern "C" __global__ void __launch_bounds__(JIT_BLOCK) jit_flat(const JitFlat p) {
  const i64 n = p.n;
  const i64 step = (i64)gridDim.x * (JIT_BLOCK * JIT_UNROLL);
  for (i64 base = (i64)blockIdx.x * (JIT_BLOCK * JIT_UNROLL) + threadIdx.x; base < n; base += step) {
    IN_T a[JIT_UNROLL][NIN];
#pragma unroll
    for (int u = 0; u < JIT_UNROLL; ++u) {
      const i64 i = base + (i64)u * JIT_BLOCK;
      i64 off[JIT_OPERANDS];
#pragma unroll
      for (int k = 0; k < JIT_OPERANDS; ++k) off[k] = i;
      if (i < n) jit_load(p, off, a[u]);
    }
#pragma unroll
    for (int u = 0; u < JIT_UNROLL; ++u) {
      const i64 i = base + (i64)u * JIT_BLOCK;
      if (i < n) {
        OUT_T r[NOUT];
        jit_compute(p, a[u], r);
#pragma unroll
        for (int k = 0; k < NOUT; ++k) static_cast<OUT_T*>(p.out[k])[i] = r[k];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(JIT_BLOCK) jit_vec(const JitFlat p) {
  const i64 n = p.n;
  const i64 step = (i64)gridDim.x * (JIT_BLOCK * JIT_VEC);
  for (i64 base = ((i64)blockIdx.x * JIT_BLOCK + threadIdx.x) * JIT_VEC; base < n; base += step) {
    if (base + JIT_VEC <= n) {
      IN_T a[JIT_VEC][NIN];
      jit_load_vec(p, base, a);
      JitVec<OUT_T> o[NOUT];
#pragma unroll
      for (int j = 0; j < JIT_VEC; ++j) {
        OUT_T r[NOUT];
        jit_compute(p, a[j], r);
#pragma unroll
        for (int k = 0; k < NOUT; ++k) o[k].v[j] = r[k];
      }
#pragma unroll
      for (int k = 0; k < NOUT; ++k) *reinterpret_cast<JitVec<OUT_T>*>(static_cast<OUT_T*>(p.out[k]) + base) = o[k];
    } else {  // the tail, element by element
      for (i64 i = base; i < n; ++i) {
        i64 off[JIT_OPERANDS];
#pragma unroll
        for (int k = 0; k < JIT_OPERANDS; ++k) off[k] = i;
        IN_T a[NIN];
        jit_load(p, off, a);
        OUT_T r[NOUT];
        jit_compute(p, a, r);
#pragma unroll
        for (int k = 0; k < NOUT; ++k) static_cast<OUT_T*>(p.out[k])[i] = r[k];
      }
    }
  }
}

template <class I> __device__ __forceinline__ void jit_offsets(const JitStrided& p, I i, I* off) {
#pragma unroll
  for (int k = 0; k < JIT_OPERANDS; ++k) off[k] = 0;
  I rem = i;
  const int nd = (int)p.ndim;
#pragma unroll
  for (int d = STRIDED_MAX_DIMS - 1; d >= 0; --d) {
    if (d < nd) {
      const I s = (I)p.sizes[d];
      const I c = rem % s;
      rem /= s;
#pragma unroll
      for (int k = 0; k < JIT_OPERANDS; ++k) off[k] += c * (I)p.strides[k][d];
    }
  }
}

template <class I> __device__ __forceinline__ void jit_strided_body(const JitStrided& p) {
  const JitFlat& f = p.f;
  const I n = (I)f.n;
  const I step = (I)gridDim.x * JIT_BLOCK;
  for (I i = (I)blockIdx.x * JIT_BLOCK + threadIdx.x; i < n; i += step) {
    I off[JIT_OPERANDS];
    jit_offsets<I>(p, i, off);
    IN_T a[NIN];
    jit_load(f, off, a);
    OUT_T r[NOUT];
    jit_compute(f, a, r);
#pragma unroll
    for (int k = 0; k < NOUT; ++k) static_cast<OUT_T*>(f.out[k])[off[k]] = r[k];
  }
}

extern "C" __global__ void __launch_bounds__(JIT_BLOCK) jit_strided32(const JitStrided p) {
  jit_strided_body<unsigned>(p);
}

extern "C" __global__ void __launch_bounds__(JIT_BLOCK) jit_strided64(const JitStrided p) {
  jit_strided_body<u64>(p);
}

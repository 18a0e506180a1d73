// The reduction engine (Note [CUDA reduction engine] in reduction.py).
// Instantiated by text: IN_T (stored input), ACC_T (accumulation), OUT_T (result), CAST_T and
// CAST_SAME (inputs are first rounded to CAST_T, the result dtype, as the CPU kernels do), OP.
// Every path combines partial states in a fixed order (no atomics): results are reproducible.

struct RedParams {
  const IN_T* in;
  OUT_T* out;
  i64* out_idx;           // max.dim / min.dim indices
  State* ws;              // partial states when splits > 1
  i64 n_out;              // outputs (contiguous, in logical order)
  i64 R;                  // reduced elements per output
  i64 splits;             // partial reductions per output
  i64 chunk;              // reduced elements per split
  i64 group;              // inner: threads per row (32 or blockDim); outer: columns per block
  i64 ws_os;              // partial state of (output o, split s) at ws[o * ws_os + s * ws_ss]
  i64 ws_ss;
  i64 kept_ndim;
  i64 kept_sizes[STRIDED_MAX_DIMS];
  i64 kept_strides[STRIDED_MAX_DIMS];
  i64 red_ndim;
  i64 red_sizes[STRIDED_MAX_DIMS];
  i64 red_strides[STRIDED_MAX_DIMS];
  double arg;             // norm: p; var/std: correction
  i64 mode;               // norm: Note [norm modes]
};

#define RED_CV 4  // reduce_outer_vec: adjacent columns per thread
struct __align__(RED_CV * sizeof(IN_T)) ColVec { IN_T x[RED_CV]; };

__device__ __forceinline__ ACC_T load_elem(IN_T v) {
#if CAST_SAME
  return convert<ACC_T>(v);
#else
  return convert<ACC_T>(convert<CAST_T>(v));
#endif
}

__device__ __forceinline__ void finish(const RedParams& p, i64 o, State s) {
  fin(p.out, p.out_idx, o, s, p.R, p.arg, (int)p.mode);
}

#define RED_VEC (16 / (int)sizeof(IN_T))
struct __align__(16) InVec { IN_T x[RED_VEC]; };

// Deterministic butterfly over `width` lanes (a power of two, at most 32).
__device__ __forceinline__ State warp_combine(State s, int width, int mode) {
  for (int m = width / 2; m > 0; m >>= 1) s = comb(s, shfl_xor_state(s, m), mode);
  return s;
}

// Combine the states of a whole block (every thread gets the result).
__device__ State block_combine(State s, int mode) {
  __shared__ State sh[32];
  __shared__ State result;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  s = warp_combine(s, 32, mode);
  if (lane == 0) sh[warp] = s;
  __syncthreads();
  if (warp == 0) {
    State t = lane < nw ? sh[lane] : ident(mode);
    t = warp_combine(t, 32, mode);
    if (lane == 0) result = t;
  }
  __syncthreads();
  State r = result;
  __syncthreads();
  return r;
}

// Inner path: the reduced elements of an output are contiguous (stride 1). A group of
// p.group threads (a warp, or the whole block) reduces one (output, split) task with 16-byte
// loads between a scalar head and tail.
extern "C" __global__ void __launch_bounds__(512) reduce_inner(const RedParams p) {
  const int G = (int)p.group, mode = (int)p.mode;
  const ACC_T parg = (ACC_T)p.arg;
  const int lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  const i64 ntasks = p.n_out * p.splits;
  for (i64 task = blockIdx.x * per_block + threadIdx.x / G; task - threadIdx.x / G < ntasks;
       task += (i64)gridDim.x * per_block) {
    State st = ident(mode);
    const i64 row = task / p.splits, sp = task - row * p.splits;
    if (task < ntasks) {
      const IN_T* rp = p.in + offset_of(row, (int)p.kept_ndim, p.kept_sizes, p.kept_strides);
      const i64 lo = sp * p.chunk;
      const i64 hi = min(p.R, lo + p.chunk);
      i64 head = (i64)((16 - ((unsigned long long)(rp + lo) & 15)) & 15) / (i64)sizeof(IN_T);
      head = min(head, hi - lo);
      for (i64 e = lo + lane; e < lo + head; e += G) st = upd(st, load_elem(rp[e]), e, mode, parg);
      const i64 vs = lo + head;
      const i64 nv = (hi - vs) / RED_VEC;
      const InVec* vp = reinterpret_cast<const InVec*>(rp + vs);
      i64 v = lane;
      // Four independent accumulators (one per vector in flight), folded in a fixed order.
      State acc[4] = {ident(mode), ident(mode), ident(mode), ident(mode)};
      for (; v + 3 * G < nv; v += 4 * G) {
        InVec w[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) w[u] = vp[v + u * G];
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int k = 0; k < RED_VEC; ++k)
            acc[u] = upd(acc[u], load_elem(w[u].x[k]), vs + (v + u * G) * RED_VEC + k, mode, parg);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) st = comb(st, acc[u], mode);
      for (; v < nv; v += G) {
        InVec w = vp[v];
#pragma unroll
        for (int k = 0; k < RED_VEC; ++k) st = upd(st, load_elem(w.x[k]), vs + v * RED_VEC + k, mode, parg);
      }
      for (i64 e = vs + nv * RED_VEC + lane; e < hi; e += G) st = upd(st, load_elem(rp[e]), e, mode, parg);
    }
    st = G == (int)blockDim.x ? block_combine(st, mode) : warp_combine(st, G, mode);
    if (lane == 0 && task < ntasks) {
      if (p.splits == 1) finish(p, row, st);
      else p.ws[row * p.ws_os + sp * p.ws_ss] = st;
    }
  }
}

// Outer path (any layout): p.group columns (outputs) per block, blockDim / group threads down
// each column; the column partials are combined through shared memory in a fixed tree.
extern "C" __global__ void __launch_bounds__(512) reduce_outer(const RedParams p) {
  __shared__ State sh[512];
  const int bx = (int)p.group, mode = (int)p.mode;
  const ACC_T parg = (ACC_T)p.arg;
  const int by = blockDim.x / bx;
  const int cx = threadIdx.x % bx, y = threadIdx.x / bx;
  const i64 colblocks = (p.n_out + bx - 1) / bx;
  const i64 ntasks = colblocks * p.splits;
  const int rnd = (int)p.red_ndim;
  for (i64 task = blockIdx.x; task < ntasks; task += gridDim.x) {
    const i64 cb = task % colblocks, sp = task / colblocks;
    const i64 o = cb * bx + cx;
    State st = ident(mode);
    if (o < p.n_out) {
      const IN_T* cp = p.in + offset_of(o, (int)p.kept_ndim, p.kept_sizes, p.kept_strides);
      const i64 lo = sp * p.chunk;
      const i64 hi = min(p.R, lo + p.chunk);
      if (rnd == 1) {
        const i64 rs = p.red_strides[0];
        i64 r = lo + y;
        for (; r + 3 * by < hi; r += 4 * by) {
          IN_T a0 = cp[r * rs], a1 = cp[(r + by) * rs], a2 = cp[(r + 2 * by) * rs], a3 = cp[(r + 3 * by) * rs];
          st = upd(st, load_elem(a0), r, mode, parg);
          st = upd(st, load_elem(a1), r + by, mode, parg);
          st = upd(st, load_elem(a2), r + 2 * by, mode, parg);
          st = upd(st, load_elem(a3), r + 3 * by, mode, parg);
        }
        for (; r < hi; r += by) st = upd(st, load_elem(cp[r * rs]), r, mode, parg);
      } else {
        for (i64 r = lo + y; r < hi; r += by)
          st = upd(st, load_elem(cp[offset_of(r, rnd, p.red_sizes, p.red_strides)]), r, mode, parg);
      }
    }
    sh[threadIdx.x] = st;
    __syncthreads();
    for (int h = by / 2; h > 0; h >>= 1) {
      if (y < h) sh[threadIdx.x] = comb(sh[threadIdx.x], sh[threadIdx.x + h * bx], mode);
      __syncthreads();
    }
    if (y == 0 && o < p.n_out) {
      if (p.splits == 1) finish(p, o, sh[cx]);
      else p.ws[o * p.ws_os + sp * p.ws_ss] = sh[cx];
    }
    __syncthreads();
  }
}

// Outer path, vectorized: as reduce_outer with RED_CV adjacent outputs per thread, loaded as one
// vector per row (the host checks one reduced dim, column groups that stay in one contiguous kept
// row, and RED_CV-element alignment of the pointer and of every stride). RED_CV states per
// thread, folded through shared memory one column at a time.
extern "C" __global__ void __launch_bounds__(512) reduce_outer_vec(const RedParams p) {
  __shared__ State sh[512];
  const int bx = (int)p.group, mode = (int)p.mode;
  const ACC_T parg = (ACC_T)p.arg;
  const int by = blockDim.x / bx;
  const int cx = threadIdx.x % bx, y = threadIdx.x / bx;
  const i64 n_groups = p.n_out / RED_CV;
  const i64 colblocks = (n_groups + bx - 1) / bx;
  const i64 ntasks = colblocks * p.splits;
  for (i64 task = blockIdx.x; task < ntasks; task += gridDim.x) {
    const i64 cb = task % colblocks, sp = task / colblocks;
    const i64 g = cb * bx + cx;
    State st[RED_CV];
#pragma unroll
    for (int k = 0; k < RED_CV; ++k) st[k] = ident(mode);
    if (g < n_groups) {
      const ColVec* cp = reinterpret_cast<const ColVec*>(
          p.in + offset_of(g * RED_CV, (int)p.kept_ndim, p.kept_sizes, p.kept_strides));
      const i64 rs = p.red_strides[0] / RED_CV;
      const i64 lo = sp * p.chunk;
      const i64 hi = min(p.R, lo + p.chunk);
      i64 r = lo + y;
      for (; r + by < hi; r += 2 * by) {
        ColVec a = cp[r * rs], b = cp[(r + by) * rs];
#pragma unroll
        for (int k = 0; k < RED_CV; ++k) st[k] = upd(st[k], load_elem(a.x[k]), r, mode, parg);
#pragma unroll
        for (int k = 0; k < RED_CV; ++k) st[k] = upd(st[k], load_elem(b.x[k]), r + by, mode, parg);
      }
      if (r < hi) {
        ColVec a = cp[r * rs];
#pragma unroll
        for (int k = 0; k < RED_CV; ++k) st[k] = upd(st[k], load_elem(a.x[k]), r, mode, parg);
      }
    }
#pragma unroll
    for (int k = 0; k < RED_CV; ++k) {
      sh[threadIdx.x] = st[k];
      __syncthreads();
      for (int h = by / 2; h > 0; h >>= 1) {
        if (y < h) sh[threadIdx.x] = comb(sh[threadIdx.x], sh[threadIdx.x + h * bx], mode);
        __syncthreads();
      }
      if (y == 0 && g < n_groups) {
        const i64 o = g * RED_CV + k;
        if (p.splits == 1) finish(p, o, sh[cx]);
        else p.ws[o * p.ws_os + sp * p.ws_ss] = sh[cx];
      }
      __syncthreads();
    }
  }
}

// Second pass: combine each output's partial states in split order and write the result
// (also the whole reduction when R == 0: splits == 0 gives the identity).
extern "C" __global__ void reduce_combine(const RedParams p) {
  const int mode = (int)p.mode;
  for (i64 o = (i64)blockIdx.x * blockDim.x + threadIdx.x; o < p.n_out; o += (i64)gridDim.x * blockDim.x) {
    State st = ident(mode);
    for (i64 s = 0; s < p.splits; ++s) st = comb(st, p.ws[o * p.ws_os + s * p.ws_ss], mode);
    finish(p, o, st);
  }
}

// layer_norm over the last D elements of each row of a contiguous input.  IN_T (input and output),
// W_T (weight and bias: the input's dtype, or float for a half input), ACC_T are #defined.
struct LnParams {
  const IN_T* in;
  const W_T* w;      // null: no weight
  const W_T* b;      // null: no bias
  IN_T* out;
  i64 rows;
  i64 D;
  i64 group;         // threads per row: 32 or blockDim
  double eps;
};

#define LN_VEC (16 / (int)sizeof(IN_T))
struct __align__(16) LnVec { IN_T x[LN_VEC]; };

__device__ __forceinline__ IN_T ln_value(const LnParams& p, ACC_T x, i64 e, ACC_T mean, ACC_T rstd) {
  ACC_T y = (x - mean) * rstd;
  if (p.w) y = y * convert<ACC_T>(p.w[e]);
  if (p.b) y = y + convert<ACC_T>(p.b[e]);
  return convert<IN_T>(y);
}

struct __align__(16) LnWVec { W_T x[LN_VEC]; };

// Statistics of one vector (mean and m2 of its LN_VEC values, one division-free pass) merged
// into the thread's Welford state with Chan's formula: one division per vector, not per element.
__device__ __forceinline__ Welford<ACC_T> ln_upd_vec(Welford<ACC_T> st, const LnVec& a) {
  ACC_T xs[LN_VEC];
  ACC_T sum = ACC_T(0);
#pragma unroll
  for (int k = 0; k < LN_VEC; ++k) {
    xs[k] = convert<ACC_T>(a.x[k]);
    sum += xs[k];
  }
  const ACC_T lm = sum * (ACC_T(1) / ACC_T(LN_VEC));
  ACC_T l2 = ACC_T(0);
#pragma unroll
  for (int k = 0; k < LN_VEC; ++k) l2 += (xs[k] - lm) * (xs[k] - lm);
  return wf_comb(st, Welford<ACC_T>{lm, l2, LN_VEC});
}

__device__ __forceinline__ LnVec ln_vec_value(const LnParams& p, const LnVec& a, i64 v, ACC_T mean, ACC_T rstd) {
  LnVec r;
  if (p.w) {
    const LnWVec w = reinterpret_cast<const LnWVec*>(p.w)[v];
    if (p.b) {
      const LnWVec b = reinterpret_cast<const LnWVec*>(p.b)[v];
#pragma unroll
      for (int k = 0; k < LN_VEC; ++k)
        r.x[k] = convert<IN_T>((convert<ACC_T>(a.x[k]) - mean) * rstd * convert<ACC_T>(w.x[k]) + convert<ACC_T>(b.x[k]));
    } else {
#pragma unroll
      for (int k = 0; k < LN_VEC; ++k) r.x[k] = convert<IN_T>((convert<ACC_T>(a.x[k]) - mean) * rstd * convert<ACC_T>(w.x[k]));
    }
  } else {
#pragma unroll
    for (int k = 0; k < LN_VEC; ++k) r.x[k] = ln_value(p, convert<ACC_T>(a.x[k]), v * LN_VEC + k, mean, rstd);
  }
  return r;
}

// Welford statistics in ACC_T (float for half types) over a group of threads, then a write pass
// that reads the row again (mostly from L2). Keeping part of the row in registers for that pass
// measured slower on the H200 (more registers, fewer resident rows).
extern "C" __global__ void __launch_bounds__(512) layer_norm_rows(const LnParams p) {
  const int G = (int)p.group, lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  const bool aligned = (p.D % LN_VEC) == 0 && (((unsigned long long)p.in & 15) == 0) &&
                       (((unsigned long long)p.out & 15) == 0) && (((unsigned long long)p.w & 15) == 0) &&
                       (((unsigned long long)p.b & 15) == 0);
  for (i64 row = blockIdx.x * per_block + threadIdx.x / G; row - threadIdx.x / G < p.rows;
       row += (i64)gridDim.x * per_block) {
    const bool ok = row < p.rows;
    Welford<ACC_T> st = {ACC_T(0), ACC_T(0), 0};
    const IN_T* ip = p.in + (ok ? row * p.D : 0);
    IN_T* op = p.out + (ok ? row * p.D : 0);
    const i64 nv = aligned ? p.D / LN_VEC : 0;
    const LnVec* vp = reinterpret_cast<const LnVec*>(ip);
    if (ok) {
      for (i64 v = lane; v < nv; v += G) st = ln_upd_vec(st, vp[v]);
      for (i64 e = nv * LN_VEC + lane; e < p.D; e += G) st = wf_upd(st, convert<ACC_T>(ip[e]));
    }
    st = group_reduce(st, G, WfComb<ACC_T>());
    if (ok) {
      const ACC_T var = st.n ? st.m2 / ACC_T(st.n) : ACC_T(0);
      const ACC_T rstd = ACC_T(1) / sqrt(var + ACC_T(p.eps));
      const ACC_T mean = st.mean;
      LnVec* ov = reinterpret_cast<LnVec*>(op);
      for (i64 v = lane; v < nv; v += G) ov[v] = ln_vec_value(p, vp[v], v, mean, rstd);
      for (i64 e = nv * LN_VEC + lane; e < p.D; e += G) op[e] = ln_value(p, convert<ACC_T>(ip[e]), e, mean, rstd);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Backward (Note [Fused layer_norm backward] in strided/backends/cuda/normalization.py).
struct LnBwdParams {
  const IN_T* grad;
  const IN_T* in;
  const W_T* w;      // null: no weight
  IN_T* dx;          // null: grad_input not wanted
  ACC_T* mean;       // per-row statistics for the column pass (null: not wanted)
  ACC_T* rstd;
  i64 rows;
  i64 D;
  i64 group;         // threads per row: 32 or blockDim
  double eps;
};

struct LnPair { ACC_T a; ACC_T b; };
struct LnPairComb {
  __device__ LnPair operator()(LnPair x, LnPair y) const { return {x.a + y.a, x.b + y.b}; }
};

// One group of threads per row: the row's mean and rstd (Welford, as the forward), then
// s1 = sum(g), s2 = sum(g * xhat) with g = grad * w, then dx = rstd * (g - (s1 + xhat * s2) / D).
extern "C" __global__ void __launch_bounds__(512) layer_norm_bwd_rows(const LnBwdParams p) {
  const int G = (int)p.group, lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  for (i64 row = blockIdx.x * per_block + threadIdx.x / G; row - threadIdx.x / G < p.rows;
       row += (i64)gridDim.x * per_block) {
    const bool ok = row < p.rows;
    const IN_T* ip = p.in + (ok ? row * p.D : 0);
    const IN_T* gp = p.grad + (ok ? row * p.D : 0);
    Welford<ACC_T> st = {ACC_T(0), ACC_T(0), 0};
    if (ok)
      for (i64 e = lane; e < p.D; e += G) st = wf_upd(st, convert<ACC_T>(ip[e]));
    st = group_reduce(st, G, WfComb<ACC_T>());
    const ACC_T var = st.n ? st.m2 / ACC_T(st.n) : ACC_T(0);
    const ACC_T rstd = ACC_T(1) / sqrt(var + ACC_T(p.eps));
    const ACC_T mean = st.mean;
    if (ok && lane == 0 && p.mean) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
    if (!p.dx) continue;
    LnPair s = {ACC_T(0), ACC_T(0)};
    if (ok)
      for (i64 e = lane; e < p.D; e += G) {
        ACC_T g = convert<ACC_T>(gp[e]);
        if (p.w) g *= convert<ACC_T>(p.w[e]);
        s.a += g;
        s.b += g * (convert<ACC_T>(ip[e]) - mean) * rstd;
      }
    s = group_reduce(s, G, LnPairComb());
    if (ok) {
      const ACC_T inv_d = ACC_T(1) / ACC_T(p.D);
      IN_T* op = p.dx + row * p.D;
      for (i64 e = lane; e < p.D; e += G) {
        ACC_T g = convert<ACC_T>(gp[e]);
        if (p.w) g *= convert<ACC_T>(p.w[e]);
        const ACC_T xhat = (convert<ACC_T>(ip[e]) - mean) * rstd;
        op[e] = convert<IN_T>(rstd * (g - (s.a + xhat * s.b) * inv_d));
      }
    }
  }
}

struct LnColParams {
  const IN_T* grad;
  const IN_T* in;
  const ACC_T* mean;     // null: grad_weight not wanted
  const ACC_T* rstd;
  ACC_T* part_w;         // [chunks, D] partial sums of grad * xhat
  ACC_T* part_b;         // [chunks, D] partial sums of grad (null: not wanted)
  i64 rows;
  i64 D;
  i64 rows_per_chunk;
  i64 col_tiles;         // blocks per chunk: block b takes columns 32 * (b % col_tiles) + [0, 32)
};

// Column partial sums: a block is 32 columns x 8 row lanes over one chunk of rows; the 8 lanes'
// sums are added in shared memory in a fixed order (deterministic, no atomics).
extern "C" __global__ void __launch_bounds__(256) layer_norm_bwd_cols(const LnColParams p) {
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const i64 chunk = blockIdx.x / p.col_tiles;
  const i64 col = (blockIdx.x % p.col_tiles) * 32 + tx;
  const i64 r0 = chunk * p.rows_per_chunk;
  const i64 r1 = min(p.rows, r0 + p.rows_per_chunk);
  ACC_T sw = ACC_T(0), sb = ACC_T(0);
  if (col < p.D) {
    for (i64 r = r0 + ty; r < r1; r += 8) {
      const ACC_T g = convert<ACC_T>(p.grad[r * p.D + col]);
      sb += g;
      if (p.mean) sw += g * (convert<ACC_T>(p.in[r * p.D + col]) - p.mean[r]) * p.rstd[r];
    }
  }
  __shared__ ACC_T shw[8][33];
  __shared__ ACC_T shb[8][33];
  shw[ty][tx] = sw;
  shb[ty][tx] = sb;
  __syncthreads();
  if (ty == 0 && col < p.D) {
    for (int k = 1; k < 8; ++k) {
      sw += shw[k][tx];
      sb += shb[k][tx];
    }
    if (p.mean) p.part_w[chunk * p.D + col] = sw;
    if (p.part_b) p.part_b[chunk * p.D + col] = sb;
  }
}

struct LnFinishParams {
  const ACC_T* part_w;   // null: grad_weight not wanted
  const ACC_T* part_b;   // null: grad_bias not wanted
  W_T* dw;
  W_T* db;
  i64 chunks;
  i64 D;
};

extern "C" __global__ void layer_norm_bwd_finish(const LnFinishParams p) {
  const i64 col = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= p.D) return;
  ACC_T sw = ACC_T(0), sb = ACC_T(0);
  for (i64 c = 0; c < p.chunks; ++c) {
    if (p.part_w) sw += p.part_w[c * p.D + col];
    if (p.part_b) sb += p.part_b[c * p.D + col];
  }
  if (p.part_w) p.dw[col] = convert<W_T>(sw);
  if (p.part_b) p.db[col] = convert<W_T>(sb);
}

// cumsum (cumprod with SCAN_MUL=1, logcumsumexp with SCAN_LSE=1) along one dim.  IN_T, CAST_T, CAST_SAME,
// ACC_T, OUT_T, SCAN_MUL, SCAN_LSE are #defined per instantiation.
#ifndef SCAN_LSE
#define SCAN_LSE 0
#endif
#if SCAN_LSE
// torch's _log_add_exp_helper: NaN propagates, equal infinities stay themselves; -inf is the identity.
__device__ __forceinline__ ACC_T scan_log_add_exp(ACC_T x, ACC_T y) {
  const ACC_T lo = isnan(y) ? y : (y < x ? y : x);
  const ACC_T hi = isnan(y) ? y : (x < y ? y : x);
  if (lo != hi || isfinite(lo)) return hi + log1p(exp(lo - hi));
  return x;
}
#define SCAN_OP(a, b) scan_log_add_exp((a), (b))
#define SCAN_ID (-Lim<ACC_T>::hi())
#elif SCAN_MUL
#define SCAN_OP(a, b) ((a) * (b))
#define SCAN_ID ACC_T(1)
#else
#define SCAN_OP(a, b) ((a) + (b))
#define SCAN_ID ACC_T(0)
#endif
struct ScanParams {
  const IN_T* in;
  OUT_T* out;
  i64 lines;
  i64 D;
  i64 in_dstride;
  i64 out_dstride;
  i64 kept_ndim;
  i64 kept_sizes[STRIDED_MAX_DIMS];
  i64 in_strides[STRIDED_MAX_DIMS];
  i64 out_strides[STRIDED_MAX_DIMS];
};

__device__ __forceinline__ ACC_T scan_load(IN_T v) {
#if CAST_SAME
  return convert<ACC_T>(v);
#else
  return convert<ACC_T>(convert<CAST_T>(v));
#endif
}

// One thread per line, in order (the dim is strided; adjacent lines are adjacent in memory).
extern "C" __global__ void scan_outer(const ScanParams p) {
  for (i64 line = (i64)blockIdx.x * blockDim.x + threadIdx.x; line < p.lines; line += (i64)gridDim.x * blockDim.x) {
    const IN_T* ip = p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides);
    OUT_T* op = p.out + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
    ACC_T acc = SCAN_ID;
    for (i64 e = 0; e < p.D; ++e) {
      acc = SCAN_OP(acc, scan_load(ip[e * p.in_dstride]));
      op[e * p.out_dstride] = convert<OUT_T>(acc);
    }
  }
}

#define SCAN_THREADS 256
#define SCAN_ITEMS 8
// One block per line with a contiguous dim: chunks of 2048 elements staged in shared memory
// (coalesced loads and stores), each thread scans 8 consecutive items, a warp-shuffle scan of the
// thread totals and a carry between chunks.
extern "C" __global__ void scan_inner(const ScanParams p) {
  __shared__ ACC_T buf[SCAN_THREADS * SCAN_ITEMS];
  __shared__ ACC_T warp_tot[SCAN_THREADS / 32];
  __shared__ ACC_T chunk_tot;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  for (i64 line = blockIdx.x; line < p.lines; line += gridDim.x) {
    const IN_T* ip = p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides);
    OUT_T* op = p.out + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
    ACC_T carry = SCAN_ID;
    for (i64 base = 0; base < p.D; base += SCAN_THREADS * SCAN_ITEMS) {
      const i64 n = min((i64)(SCAN_THREADS * SCAN_ITEMS), p.D - base);
#pragma unroll
      for (int k = 0; k < SCAN_ITEMS; ++k) {
        i64 e = t + k * SCAN_THREADS;
        buf[e] = e < n ? scan_load(ip[base + e]) : SCAN_ID;
      }
      __syncthreads();
      ACC_T run = SCAN_ID;
#pragma unroll
      for (int k = 0; k < SCAN_ITEMS; ++k) {
        run = SCAN_OP(run, buf[t * SCAN_ITEMS + k]);
        buf[t * SCAN_ITEMS + k] = run;
      }
      ACC_T incl = run;  // inclusive scan of the thread totals within the warp
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        ACC_T u = shfl_up_state(incl, d);
        if (lane >= d) incl = SCAN_OP(incl, u);
      }
      if (lane == 31) warp_tot[warp] = incl;
      __syncthreads();
      if (t == 0) {
        ACC_T s = SCAN_ID;
        for (int w = 0; w < SCAN_THREADS / 32; ++w) {
          ACC_T x = warp_tot[w];
          warp_tot[w] = s;
          s = SCAN_OP(s, x);
        }
        chunk_tot = s;
      }
      __syncthreads();
      ACC_T excl = shfl_up_state(incl, 1);
      if (lane == 0) excl = SCAN_ID;
      const ACC_T prefix = SCAN_OP(SCAN_OP(carry, warp_tot[warp]), excl);
#pragma unroll
      for (int k = 0; k < SCAN_ITEMS; ++k) buf[t * SCAN_ITEMS + k] = SCAN_OP(prefix, buf[t * SCAN_ITEMS + k]);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < SCAN_ITEMS; ++k) {
        i64 e = t + k * SCAN_THREADS;
        if (e < n) op[base + e] = convert<OUT_T>(buf[e]);
      }
      carry = SCAN_OP(carry, chunk_tot);
      __syncthreads();
    }
  }
}

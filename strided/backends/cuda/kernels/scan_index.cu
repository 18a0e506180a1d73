// cummax / cummin along one dim: the running extreme and the index where it was reached. IN_T, ACC_T,
// IS_FLOAT, IS_MIN are #defined per instantiation.
//
// torch's rule (cummax_cummin_helper): an element takes over when it is NaN, or when the running value is
// not NaN and the element is >= it (<= for cummin), so ties and NaNs report their latest index. `pick`
// combines a prefix with the segment after it by that rule; it is associative, with index -1 as the
// identity, so the block scan below may group elements in any order.
struct SiParams {
  const IN_T* in;
  IN_T* out;
  i64* idx;              // laid out like out
  i64 lines;
  i64 D;
  i64 in_dstride;
  i64 out_dstride;
  i64 kept_ndim;
  i64 kept_sizes[STRIDED_MAX_DIMS];
  i64 in_strides[STRIDED_MAX_DIMS];
  i64 out_strides[STRIDED_MAX_DIMS];
};

struct Best {
  ACC_T v;
  i64 i;
};

__device__ __forceinline__ bool takes_over(ACC_T x, ACC_T cur) {
#if IS_FLOAT
  if (isnan(x)) return true;
  if (isnan(cur)) return false;
#endif
#if IS_MIN
  return x <= cur;
#else
  return x >= cur;
#endif
}

__device__ __forceinline__ Best pick(Best a, Best b) {
  return (a.i < 0 || (b.i >= 0 && takes_over(b.v, a.v))) ? b : a;
}

// One thread per line, in order (the dim is strided; adjacent lines are adjacent in memory).
extern "C" __global__ void scan_index_outer(const SiParams p) {
  for (i64 line = (i64)blockIdx.x * blockDim.x + threadIdx.x; line < p.lines; line += (i64)gridDim.x * blockDim.x) {
    const IN_T* ip = p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides);
    const i64 o = offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
    Best run = {ACC_T(0), -1};
    for (i64 e = 0; e < p.D; ++e) {
      run = pick(run, Best{convert<ACC_T>(ip[e * p.in_dstride]), e});
      p.out[o + e * p.out_dstride] = convert<IN_T>(run.v);
      p.idx[o + e * p.out_dstride] = run.i;
    }
  }
}

#define SI_THREADS 256
#define SI_ITEMS 8
// One block per line with a contiguous dim: chunks of 2048 elements staged in shared memory, each thread
// scans 8 consecutive items, thread 0 scans the 256 thread results, and a carry joins the chunks.
extern "C" __global__ void scan_index_inner(const SiParams p) {
  __shared__ ACC_T bv[SI_THREADS * SI_ITEMS];
  __shared__ i64 bi[SI_THREADS * SI_ITEMS];
  __shared__ ACC_T tv[SI_THREADS];
  __shared__ i64 ti[SI_THREADS];
  __shared__ Best carry;
  const int t = threadIdx.x;
  for (i64 line = blockIdx.x; line < p.lines; line += gridDim.x) {
    const IN_T* ip = p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides);
    const i64 o = offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
    if (t == 0) carry = Best{ACC_T(0), -1};
    for (i64 base = 0; base < p.D; base += SI_THREADS * SI_ITEMS) {
      const i64 n = min((i64)(SI_THREADS * SI_ITEMS), p.D - base);
#pragma unroll
      for (int k = 0; k < SI_ITEMS; ++k) {
        const i64 e = t + k * SI_THREADS;
        bv[e] = e < n ? convert<ACC_T>(ip[base + e]) : ACC_T(0);
        bi[e] = e < n ? base + e : -1;
      }
      __syncthreads();
      Best run = {ACC_T(0), -1};
#pragma unroll
      for (int k = 0; k < SI_ITEMS; ++k) {
        const int j = t * SI_ITEMS + k;
        run = pick(run, Best{bv[j], bi[j]});
        bv[j] = run.v;
        bi[j] = run.i;
      }
      tv[t] = run.v;
      ti[t] = run.i;
      __syncthreads();
      if (t == 0) {  // exclusive prefixes of the thread results, starting from the carry
        Best s = carry;
        for (int w = 0; w < SI_THREADS; ++w) {
          const Best x = {tv[w], ti[w]};
          tv[w] = s.v;
          ti[w] = s.i;
          s = pick(s, x);
        }
        carry = s;
      }
      __syncthreads();
      const Best pre = {tv[t], ti[t]};
#pragma unroll
      for (int k = 0; k < SI_ITEMS; ++k) {
        const int j = t * SI_ITEMS + k;
        const Best r = pick(pre, Best{bv[j], bi[j]});
        bv[j] = r.v;
        bi[j] = r.i;
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < SI_ITEMS; ++k) {
        const i64 e = t + k * SI_THREADS;
        if (e < n) {
          p.out[o + (base + e) * p.out_dstride] = convert<IN_T>(bv[e]);
          p.idx[o + (base + e) * p.out_dstride] = bi[e];
        }
      }
      __syncthreads();
    }
  }
}

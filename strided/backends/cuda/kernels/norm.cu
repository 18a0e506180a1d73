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

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

// Welford statistics in ACC_T (float for half types) over a group of threads, then a write pass.
extern "C" __global__ void __launch_bounds__(512) layer_norm_rows(const LnParams p) {
  const int G = (int)p.group, lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  const bool aligned = (p.D % LN_VEC) == 0 && (((unsigned long long)p.in & 15) == 0) &&
                       (((unsigned long long)p.out & 15) == 0);
  for (i64 row = blockIdx.x * per_block + threadIdx.x / G; row - threadIdx.x / G < p.rows;
       row += (i64)gridDim.x * per_block) {
    const bool ok = row < p.rows;
    Welford<ACC_T> st = {ACC_T(0), ACC_T(0), 0};
    const IN_T* ip = p.in + (ok ? row * p.D : 0);
    IN_T* op = p.out + (ok ? row * p.D : 0);
    const i64 nv = aligned ? p.D / LN_VEC : 0;
    if (ok) {
      const LnVec* vp = reinterpret_cast<const LnVec*>(ip);
      for (i64 v = lane; v < nv; v += G) {
        LnVec a = vp[v];
#pragma unroll
        for (int k = 0; k < LN_VEC; ++k) st = wf_upd(st, convert<ACC_T>(a.x[k]));
      }
      for (i64 e = nv * LN_VEC + lane; e < p.D; e += G) st = wf_upd(st, convert<ACC_T>(ip[e]));
    }
    st = group_reduce(st, G, WfComb<ACC_T>());
    if (ok) {
      const ACC_T var = st.n ? st.m2 / ACC_T(st.n) : ACC_T(0);
      const ACC_T rstd = ACC_T(1) / sqrt(var + ACC_T(p.eps));
      const ACC_T mean = st.mean;
      const LnVec* vp = reinterpret_cast<const LnVec*>(ip);
      LnVec* ov = reinterpret_cast<LnVec*>(op);
      for (i64 v = lane; v < nv; v += G) {
        LnVec a = vp[v], r;
#pragma unroll
        for (int k = 0; k < LN_VEC; ++k) r.x[k] = ln_value(p, convert<ACC_T>(a.x[k]), v * LN_VEC + k, mean, rstd);
        ov[v] = r;
      }
      for (i64 e = nv * LN_VEC + lane; e < p.D; e += G) op[e] = ln_value(p, convert<ACC_T>(ip[e]), e, mean, rstd);
    }
  }
}

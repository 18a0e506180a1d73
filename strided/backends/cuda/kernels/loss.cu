// cross_entropy_loss from log-probabilities (computed by softmax.cu into a contiguous (N, C, S)
// tensor of the input's dtype).  LP_T, TGT_T, W_T, ACC_T, OUT_T, PROB are #defined.
//
// Note [cross_entropy on CUDA]: a class index outside [0, C) that is not ignore_index makes the
// CPU kernel raise IndexError; checking it here would need a device sync, so (as torch's device
// assert, but without stopping the context) the kernel never reads out of bounds and gives that
// sample a NaN loss, which makes a reduced loss NaN too.
struct CeParams {
  const LP_T* lp;
  const TGT_T* tgt;      // class indices (N, S) or probabilities (N, C, S), contiguous
  const W_T* w;          // class weights (C) or null
  OUT_T* out;
  ACC_T* terms;          // reduced losses: 4 arrays of M (nll, weight, smoothing, kept)
  i64 M;                 // samples: N * S
  i64 C;
  i64 S;
  i64 ignore_index;
  double ls;             // label smoothing
  i64 reduction;         // 0 none, 1 mean, 2 sum
};

__device__ __forceinline__ ACC_T lpv(const CeParams& p, i64 base, i64 c) {
  return convert<ACC_T>(p.lp[base + c * p.S]);
}

extern "C" __global__ void ce_terms(const CeParams p) {
  const ACC_T ls = ACC_T(p.ls);
  const ACC_T C = ACC_T(p.C);
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.M; i += (i64)gridDim.x * blockDim.x) {
    const i64 n = i / p.S, s = i - n * p.S;
    const i64 base = n * p.C * p.S + s;
#if PROB
    ACC_T acc = ACC_T(0);
    for (i64 c = 0; c < p.C; ++c) {
      ACC_T t = convert<ACC_T>(convert<OUT_T>(p.tgt[base + c * p.S]));
      if (p.ls > 0) t = t * (ACC_T(1) - ls) + ls / C;
      ACC_T term = lpv(p, base, c) * t;
      if (p.w) term = term * convert<ACC_T>(convert<OUT_T>(p.w[c]));
      acc = acc + term;
    }
    if (p.reduction == 0) p.out[i] = convert<OUT_T>(-acc);
    else p.terms[i] = -acc;
#else
    const i64 t = (i64)p.tgt[i];
    const bool ignored = t == p.ignore_index;
    const bool bad = !ignored && (t < 0 || t >= p.C);
    const i64 safe = (ignored || bad) ? 0 : t;
    ACC_T picked = p.C ? lpv(p, base, safe) : ACC_T(0);
    ACC_T wt = (ignored || p.C == 0) ? ACC_T(0) : (p.w ? convert<ACC_T>(p.w[safe]) : ACC_T(1));
    ACC_T nll = -picked * wt;
    ACC_T smooth = ACC_T(0);
    if (p.ls > 0 && !ignored) {
      for (i64 c = 0; c < p.C; ++c) {
        ACC_T v = lpv(p, base, c);
        if (p.w) v = v * convert<ACC_T>(p.w[c]);
        smooth = smooth - v;
      }
    }
    if (bad) {
      nll = ACC_T(0) / ACC_T(0);
      smooth = nll;
    }
    if (p.reduction == 0) {
      ACC_T loss = p.ls > 0 ? (ACC_T(1) - ls) * nll + smooth * (ls / C) : nll;
      p.out[i] = convert<OUT_T>(loss);
    } else {
      p.terms[i] = nll;
      p.terms[p.M + i] = wt;
      p.terms[2 * p.M + i] = smooth;
      p.terms[3 * p.M + i] = ignored ? ACC_T(0) : ACC_T(1);
    }
#endif
  }
}

// One block folds the per-sample terms in a fixed order and writes the reduced loss.
extern "C" __global__ void __launch_bounds__(1024) ce_finish(const CeParams p) {
  ACC_T s[4] = {ACC_T(0), ACC_T(0), ACC_T(0), ACC_T(0)};
  const int nt = PROB ? 1 : 4;
  for (i64 i = threadIdx.x; i < p.M; i += blockDim.x)
    for (int k = 0; k < nt; ++k) s[k] = s[k] + p.terms[k * p.M + i];
  for (int k = 0; k < nt; ++k) s[k] = group_reduce(s[k], (int)blockDim.x, SumComb<ACC_T>());
  if (threadIdx.x != 0) return;
  const ACC_T ls = ACC_T(p.ls);
  ACC_T loss;
#if PROB
  loss = p.reduction == 2 ? s[0] : s[0] / ACC_T(p.M);
#else
  ACC_T ret;
  if (p.reduction == 2) {
    loss = s[0];
    ret = s[2];
  } else {
    loss = s[0] / s[1];
    ret = s[2] / (p.w ? s[1] : s[3]);
  }
  if (p.ls > 0) loss = (ACC_T(1) - ls) * loss + ret * (ls / ACC_T(p.C));
#endif
  p.out[0] = convert<OUT_T>(loss);
}

// batch_norm over the channels (dim 1) of a contiguous (N, C, S) input, S the product of the spatial sizes
// (kernels/batch_norm_ops.py; torch's aten/src/ATen/native/cuda/Normalization.cuh in a simpler form).
// IN_T (input, output, gradients), P_T (weight, bias, statistics: float for a half or float input, double for
// double; also the accumulation type) and BN_BLOCK (threads per block, a power of two) are #defined.
//
// Note [Batch-norm kernels]
// Two launches each way. bn_stats / bn_grad_stats give each channel a block (grid-striding over channels) that
// sums its N * S elements into shared memory: the mean, then the squared deviations from it (two passes over a
// channel, the second from L2, for a variance without cancellation), or the gradient's two sums; one thread then
// writes the channel's results (statistics and running statistics, or the weight's and bias's gradients).
// bn_apply / bn_grad_apply then map every element, thread per element, with 32-bit index math (the launcher
// checks N * C * S < 2^31). The sums are deterministic: a fixed order per channel, no atomics.

struct BnParams {
  const IN_T* x;
  const IN_T* g;     // backward: the output's gradient
  IN_T* out;         // forward: the output; backward: the input's gradient (null: not wanted)
  const P_T* w;      // null: no weight
  const P_T* b;      // null: no bias
  P_T* mean;         // the batch mean (bn_stats writes it), or the running mean in evaluation
  P_T* invstd;       // 1 / sqrt(var + eps), likewise
  P_T* running_mean; // null: none
  P_T* running_var;  // null: none
  P_T* grad_w;       // null: not wanted
  P_T* grad_b;       // null: not wanted
  P_T* sums;         // backward: per channel the sum of g, then (at C + channel) the sum of g * xhat
  i64 n, c, s;
  double momentum, eps;
  i64 training;
};

__device__ __forceinline__ P_T bn_block_sum(P_T* red, P_T v) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = BN_BLOCK / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) red[threadIdx.x] += red[threadIdx.x + half];
    __syncthreads();
  }
  const P_T total = red[0];
  __syncthreads();  // red is written again by the next sum
  return total;
}

extern "C" __global__ void bn_stats(const BnParams p) {
  __shared__ P_T red[BN_BLOCK];
  const unsigned S = (unsigned)p.s, count = (unsigned)(p.n * p.s);
  const i64 plane = p.c * p.s;
  for (i64 ch = blockIdx.x; ch < p.c; ch += gridDim.x) {
    const IN_T* x = p.x + ch * p.s;
    P_T acc = P_T(0);
    for (unsigned j = threadIdx.x; j < count; j += BN_BLOCK) {
      const unsigned n = j / S;
      acc += convert<P_T>(x[n * plane + (j - n * S)]);
    }
    const P_T mean = bn_block_sum(red, acc) / P_T(count);
    acc = P_T(0);
    for (unsigned j = threadIdx.x; j < count; j += BN_BLOCK) {
      const unsigned n = j / S;
      const P_T d = convert<P_T>(x[n * plane + (j - n * S)]) - mean;
      acc += d * d;
    }
    const P_T var = bn_block_sum(red, acc) / P_T(count);
    if (threadIdx.x == 0) {
      p.mean[ch] = mean;
      p.invstd[ch] = P_T(1) / sqrt(var + P_T(p.eps));
      const P_T m = P_T(p.momentum);
      if (p.running_mean) p.running_mean[ch] = (P_T(1) - m) * p.running_mean[ch] + m * mean;
      if (p.running_var)
        p.running_var[ch] = (P_T(1) - m) * p.running_var[ch] + m * var * P_T(count) / P_T(count - 1);
    }
  }
}

extern "C" __global__ void bn_apply(const BnParams p) {
  const unsigned total = (unsigned)(p.n * p.c * p.s), S = (unsigned)p.s, C = (unsigned)p.c;
  for (unsigned i = blockIdx.x * BN_BLOCK + threadIdx.x; i < total; i += gridDim.x * BN_BLOCK) {
    const unsigned ch = (i / S) % C;
    P_T y = (convert<P_T>(p.x[i]) - p.mean[ch]) * p.invstd[ch];
    if (p.w) y = y * p.w[ch];
    if (p.b) y = y + p.b[ch];
    p.out[i] = convert<IN_T>(y);
  }
}

extern "C" __global__ void bn_grad_stats(const BnParams p) {
  __shared__ P_T red[BN_BLOCK];
  const unsigned S = (unsigned)p.s, count = (unsigned)(p.n * p.s);
  const i64 plane = p.c * p.s;
  for (i64 ch = blockIdx.x; ch < p.c; ch += gridDim.x) {
    const IN_T* x = p.x + ch * p.s;
    const IN_T* g = p.g + ch * p.s;
    const P_T mean = p.mean[ch], invstd = p.invstd[ch];
    P_T sg = P_T(0), sgx = P_T(0);
    for (unsigned j = threadIdx.x; j < count; j += BN_BLOCK) {
      const unsigned n = j / S;
      const i64 e = n * plane + (j - n * S);
      const P_T gv = convert<P_T>(g[e]);
      sg += gv;
      sgx += gv * (convert<P_T>(x[e]) - mean);
    }
    sg = bn_block_sum(red, sg);
    sgx = bn_block_sum(red, sgx) * invstd;
    if (threadIdx.x == 0) {
      p.sums[ch] = sg;
      p.sums[p.c + ch] = sgx;
      if (p.grad_b) p.grad_b[ch] = sg;
      if (p.grad_w) p.grad_w[ch] = sgx;
    }
  }
}

extern "C" __global__ void bn_grad_apply(const BnParams p) {
  const unsigned total = (unsigned)(p.n * p.c * p.s), S = (unsigned)p.s, C = (unsigned)p.c;
  const P_T inv_count = P_T(1) / P_T(p.n * p.s);
  for (unsigned i = blockIdx.x * BN_BLOCK + threadIdx.x; i < total; i += gridDim.x * BN_BLOCK) {
    const unsigned ch = (i / S) % C;
    const P_T invstd = p.invstd[ch];
    const P_T scale = p.w ? invstd * p.w[ch] : invstd;
    P_T gv = convert<P_T>(p.g[i]);
    if (p.training) {
      const P_T xhat = (convert<P_T>(p.x[i]) - p.mean[ch]) * invstd;
      gv = gv - p.sums[ch] * inv_count - xhat * p.sums[C + ch] * inv_count;
    }
    p.out[i] = convert<IN_T>(gv * scale);
  }
}

// Note [Group-norm kernels]
// Group norm (kernels/group_norm_ops.py) of a contiguous (N, C, S) input in `groups` groups of cg = C / groups
// channels, L = cg * S elements per (sample, group). Forward: gn_stats gives each (sample, group) a block (its L
// elements are contiguous): the mean, then the squared deviations from it (the second pass from L2); gn_apply
// then maps every element. Backward: gn_grad_stats gives each (sample, channel) pair a block summing g and
// g * (x - mean) over S; gn_grad_sums, a thread per (sample, group) and per channel, turns those into S1 = sum w g
// and S2 = sum w g xhat per group and the weight's and bias's gradients (sums over the samples); gn_grad_apply
// maps dx = rstd (w g - S1 / L - xhat S2 / L). With `vec` set (the glue checks S % GN_VEC == 0 and 16-byte
// aligned tensors) every thread moves GN_VEC elements of one pair with 16-byte loads and stores, the same
// arithmetic per element. Fixed orders, no atomics.
#define GN_VEC (16 / (int)sizeof(IN_T))
struct alignas(16) GnPack {
  IN_T v[GN_VEC];
};

struct GnParams {
  const IN_T* x;
  const IN_T* g;     // backward: the output's gradient
  IN_T* out;         // forward: the output; backward: the input's gradient (null: not wanted)
  const P_T* w;      // null: no weight
  const P_T* b;      // null: no bias
  P_T* mean;         // (N, groups): gn_stats writes it
  P_T* rstd;         // (N, groups): 1 / sqrt(var + eps), likewise
  P_T* pair_sums;    // backward: (N, C) sums of g, then (N, C) sums of g * xhat
  P_T* group_sums;   // backward: (N, groups) S1, then (N, groups) S2
  P_T* grad_w;       // null: not wanted
  P_T* grad_b;       // null: not wanted
  i64 n, c, s, groups, vec;
  double eps;
};

extern "C" __global__ void gn_stats(const GnParams p) {
  __shared__ P_T red[BN_BLOCK];
  const i64 ngroups = p.n * p.groups, L = (p.c / p.groups) * p.s;
  const unsigned units = (unsigned)(p.vec ? L / GN_VEC : L);
  for (i64 ng = blockIdx.x; ng < ngroups; ng += gridDim.x) {
    const IN_T* x = p.x + ng * L;
    P_T acc = P_T(0);
    for (unsigned u = threadIdx.x; u < units; u += BN_BLOCK) {
      if (p.vec) {
        const GnPack v = reinterpret_cast<const GnPack*>(x)[u];
        for (int k = 0; k < GN_VEC; ++k) acc += convert<P_T>(v.v[k]);
      } else {
        acc += convert<P_T>(x[u]);
      }
    }
    const P_T mean = bn_block_sum(red, acc) / P_T(L);
    acc = P_T(0);
    for (unsigned u = threadIdx.x; u < units; u += BN_BLOCK) {
      if (p.vec) {
        const GnPack v = reinterpret_cast<const GnPack*>(x)[u];
        for (int k = 0; k < GN_VEC; ++k) {
          const P_T d = convert<P_T>(v.v[k]) - mean;
          acc += d * d;
        }
      } else {
        const P_T d = convert<P_T>(x[u]) - mean;
        acc += d * d;
      }
    }
    const P_T var = bn_block_sum(red, acc) / P_T(L);
    if (threadIdx.x == 0) {
      p.mean[ng] = mean;
      p.rstd[ng] = P_T(1) / sqrt(var + P_T(p.eps));
    }
  }
}

__device__ __forceinline__ P_T gn_normalized(const GnParams& p, P_T xv, P_T mean, P_T rstd, unsigned ch) {
  P_T y = (xv - mean) * rstd;
  if (p.w) y = y * p.w[ch];
  if (p.b) y = y + p.b[ch];
  return y;
}

extern "C" __global__ void gn_apply(const GnParams p) {
  const unsigned total = (unsigned)(p.n * p.c * p.s), S = (unsigned)p.s, C = (unsigned)p.c;
  const unsigned G = (unsigned)p.groups, cg = C / G, width = p.vec ? GN_VEC : 1, units = total / width;
  for (unsigned u = blockIdx.x * BN_BLOCK + threadIdx.x; u < units; u += gridDim.x * BN_BLOCK) {
    const unsigned i = u * width, pair = i / S, ch = pair % C, ng = (pair / C) * G + ch / cg;
    const P_T mean = p.mean[ng], rstd = p.rstd[ng];
    if (p.vec) {
      const GnPack v = reinterpret_cast<const GnPack*>(p.x)[u];
      GnPack o;
      for (int k = 0; k < GN_VEC; ++k)
        o.v[k] = convert<IN_T>(gn_normalized(p, convert<P_T>(v.v[k]), mean, rstd, ch));
      reinterpret_cast<GnPack*>(p.out)[u] = o;
    } else {
      p.out[i] = convert<IN_T>(gn_normalized(p, convert<P_T>(p.x[i]), mean, rstd, ch));
    }
  }
}

extern "C" __global__ void gn_grad_stats(const GnParams p) {
  __shared__ P_T red[BN_BLOCK];
  const i64 pairs = p.n * p.c;
  const unsigned C = (unsigned)p.c, G = (unsigned)p.groups, cg = C / G;
  const unsigned units = (unsigned)(p.vec ? p.s / GN_VEC : p.s);
  for (i64 pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
    const IN_T* x = p.x + pair * p.s;
    const IN_T* g = p.g + pair * p.s;
    const unsigned ng = (unsigned)(pair / C) * G + (unsigned)(pair % C) / cg;
    const P_T mean = p.mean[ng];
    P_T sg = P_T(0), sgx = P_T(0);
    for (unsigned u = threadIdx.x; u < units; u += BN_BLOCK) {
      if (p.vec) {
        const GnPack xv = reinterpret_cast<const GnPack*>(x)[u], gv = reinterpret_cast<const GnPack*>(g)[u];
        for (int k = 0; k < GN_VEC; ++k) {
          const P_T gk = convert<P_T>(gv.v[k]);
          sg += gk;
          sgx += gk * (convert<P_T>(xv.v[k]) - mean);
        }
      } else {
        const P_T gk = convert<P_T>(g[u]);
        sg += gk;
        sgx += gk * (convert<P_T>(x[u]) - mean);
      }
    }
    sg = bn_block_sum(red, sg);
    sgx = bn_block_sum(red, sgx) * p.rstd[ng];
    if (threadIdx.x == 0) {
      p.pair_sums[pair] = sg;
      p.pair_sums[pairs + pair] = sgx;
    }
  }
}

extern "C" __global__ void gn_grad_sums(const GnParams p) {
  const i64 t = (i64)blockIdx.x * BN_BLOCK + threadIdx.x, pairs = p.n * p.c, ngroups = p.n * p.groups;
  const i64 cg = p.c / p.groups;
  if (t < ngroups) {  // S1, S2 of (sample, group) t
    const i64 first = (t / p.groups) * p.c + (t % p.groups) * cg;
    P_T s1 = P_T(0), s2 = P_T(0);
    for (i64 j = 0; j < cg; ++j) {
      const P_T wv = p.w ? p.w[(t % p.groups) * cg + j] : P_T(1);
      s1 += wv * p.pair_sums[first + j];
      s2 += wv * p.pair_sums[pairs + first + j];
    }
    p.group_sums[t] = s1;
    p.group_sums[ngroups + t] = s2;
  }
  if (t < p.c) {  // the weight's and bias's gradients of channel t
    P_T gw = P_T(0), gb = P_T(0);
    for (i64 k = 0; k < p.n; ++k) {
      gb += p.pair_sums[k * p.c + t];
      gw += p.pair_sums[pairs + k * p.c + t];
    }
    if (p.grad_w) p.grad_w[t] = gw;
    if (p.grad_b) p.grad_b[t] = gb;
  }
}

__device__ __forceinline__ P_T gn_input_grad(const GnParams& p, P_T gv, P_T xv, P_T mean, P_T rstd, P_T s1, P_T s2,
                                             unsigned ch) {
  const P_T xhat = (xv - mean) * rstd;
  const P_T gw = p.w ? gv * p.w[ch] : gv;
  return rstd * (gw - s1 - xhat * s2);
}

extern "C" __global__ void gn_grad_apply(const GnParams p) {
  const unsigned total = (unsigned)(p.n * p.c * p.s), S = (unsigned)p.s, C = (unsigned)p.c;
  const unsigned G = (unsigned)p.groups, cg = C / G, ngroups = (unsigned)(p.n * p.groups);
  const unsigned width = p.vec ? GN_VEC : 1, units = total / width;
  const P_T inv_l = P_T(1) / P_T(cg * S);
  for (unsigned u = blockIdx.x * BN_BLOCK + threadIdx.x; u < units; u += gridDim.x * BN_BLOCK) {
    const unsigned i = u * width, pair = i / S, ch = pair % C, ng = (pair / C) * G + ch / cg;
    const P_T mean = p.mean[ng], rstd = p.rstd[ng];
    const P_T s1 = p.group_sums[ng] * inv_l, s2 = p.group_sums[ngroups + ng] * inv_l;
    if (p.vec) {
      const GnPack xv = reinterpret_cast<const GnPack*>(p.x)[u], gv = reinterpret_cast<const GnPack*>(p.g)[u];
      GnPack o;
      for (int k = 0; k < GN_VEC; ++k)
        o.v[k] = convert<IN_T>(
            gn_input_grad(p, convert<P_T>(gv.v[k]), convert<P_T>(xv.v[k]), mean, rstd, s1, s2, ch));
      reinterpret_cast<GnPack*>(p.out)[u] = o;
    } else {
      p.out[i] =
          convert<IN_T>(gn_input_grad(p, convert<P_T>(p.g[i]), convert<P_T>(p.x[i]), mean, rstd, s1, s2, ch));
    }
  }
}
